// Non-modal error reporting for the GUI: keeps every message (inspectable in tests) and, when
// interactive, shows it in a non-modal message box; the application keeps running.
#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

class QWidget;

namespace scalescope::gui {

class ErrorReporter : public QObject {
  Q_OBJECT
 public:
  explicit ErrorReporter(QObject* parent = nullptr) : QObject(parent) {}
  /// Show a dialog per error (off in tests and screenshot mode).
  void set_interactive(QWidget* dialog_parent) { dialog_parent_ = dialog_parent; }
  void report(const QString& title, const QString& message);
  const QStringList& messages() const { return messages_; }
  QString last() const { return messages_.isEmpty() ? QString() : messages_.back(); }

 signals:
  void reported(const QString& title, const QString& message);

 private:
  QWidget* dialog_parent_ = nullptr;
  QStringList messages_;
};

}  // namespace scalescope::gui
