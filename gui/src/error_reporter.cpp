// Non-modal error reporting (see error_reporter.hpp).
#include "scalescope/gui/error_reporter.hpp"

#include <QMessageBox>

namespace scalescope::gui {

void ErrorReporter::report(const QString& title, const QString& message) {
  messages_.push_back(title + ": " + message);
  emit reported(title, message);
  if (dialog_parent_ != nullptr) {
    auto* box = new QMessageBox(QMessageBox::Warning, title, message, QMessageBox::Ok, dialog_parent_);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->setModal(false);
    box->show();
  }
}

}  // namespace scalescope::gui
