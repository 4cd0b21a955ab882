// PNG/SVG export of a widget and the per-chart context menu (see chart_export.hpp).
#include "scalescope/gui/chart_export.hpp"

#include <QAbstractItemModel>
#include <QAction>
#include <QFileDialog>
#include <QPainter>
#include <QSvgGenerator>
#include <QWidget>

#include "scalescope/gui/error_reporter.hpp"

namespace scalescope::gui {

bool export_widget(QWidget* w, const QString& file, QString* why) {
  if (file.endsWith(".svg", Qt::CaseInsensitive)) {
    QSvgGenerator gen;
    gen.setFileName(file);
    gen.setSize(w->size());
    gen.setViewBox(QRect(QPoint(0, 0), w->size()));
    gen.setTitle("scalescope");
    QPainter painter;
    if (!painter.begin(&gen)) {
      if (why != nullptr) *why = "cannot write " + file + " (SVG)";
      return false;
    }
    w->render(&painter);
    painter.end();
    return true;
  }
  if (!w->grab().save(file)) {
    if (why != nullptr) *why = "cannot write " + file + " (PNG)";
    return false;
  }
  return true;
}

void install_export_menu(QWidget* w, const QString& default_name, ErrorReporter* errors) {
  w->setContextMenuPolicy(Qt::ActionsContextMenu);
  auto add = [w, default_name, errors](const QString& label, const QString& ext, const QString& filter) {
    auto* a = new QAction(label, w);
    QObject::connect(a, &QAction::triggered, w, [w, default_name, errors, ext, filter] {
      const QString f = QFileDialog::getSaveFileName(w, "Export chart", default_name + ext, filter);
      if (f.isEmpty()) return;
      QString why;
      if (!export_widget(w, f, &why) && errors != nullptr) errors->report("Cannot export", why);
    });
    w->addAction(a);
  };
  add("Export chart as PNG...", ".png", "PNG image (*.png)");
  add("Export chart as SVG...", ".svg", "SVG image (*.svg)");
}

QString table_to_csv(const QAbstractItemModel& model) {
  auto cell = [](QString s) {
    if (s.contains(',') || s.contains('"') || s.contains('\n')) s = '"' + s.replace("\"", "\"\"") + '"';
    return s;
  };
  const int columns = model.columnCount();
  QString out;
  for (int c = 0; c < columns; ++c) out += (c ? "," : "") + cell(model.headerData(c, Qt::Horizontal).toString());
  out += "\n";
  for (int r = 0; r < model.rowCount(); ++r) {
    for (int c = 0; c < columns; ++c) out += (c ? "," : "") + cell(model.data(model.index(r, c)).toString());
    out += "\n";
  }
  return out;
}

}  // namespace scalescope::gui
