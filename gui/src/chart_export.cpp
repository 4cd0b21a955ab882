// PNG/SVG export of a widget and the per-chart context menu (see chart_export.hpp).
#include "scalescope/gui/chart_export.hpp"

#include <QAbstractItemModel>
#include <QAction>
#include <QBuffer>
#include <QFileInfo>
#include <QFileDialog>
#include <QPainter>
#include <QSvgGenerator>
#include <QWidget>
#include <string_view>

#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/sim/file_io.hpp"

namespace scalescope::gui {

namespace {

bool write_bytes(const QByteArray& bytes, const QString& file, QString* why) {
  auto ok = write_file_atomic(file.toStdString(), std::string_view(bytes.constData(), static_cast<std::size_t>(bytes.size())));
  if (!ok && why != nullptr) *why = QString::fromStdString(ok.error().str());
  return static_cast<bool>(ok);
}

}  // namespace

bool save_pixmap(const QPixmap& pixmap, const QString& file, QString* why) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  const QString suffix = QFileInfo(file).suffix().toLower();
  const QByteArray format = suffix.isEmpty() ? QByteArray("png") : suffix.toLatin1();
  if (pixmap.isNull() || !pixmap.save(&buffer, format.constData())) {
    if (why != nullptr) *why = "cannot encode " + file + " as " + QString::fromLatin1(format);
    return false;
  }
  return write_bytes(bytes, file, why);
}

bool export_widget(QWidget* w, const QString& file, QString* why) {
  if (file.endsWith(".svg", Qt::CaseInsensitive)) {
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator gen;
    gen.setOutputDevice(&buffer);
    gen.setSize(w->size());
    gen.setViewBox(QRect(QPoint(0, 0), w->size()));
    gen.setTitle("scalescope");
    QPainter painter;
    if (!painter.begin(&gen)) {
      if (why != nullptr) *why = "cannot render " + file + " (SVG)";
      return false;
    }
    w->render(&painter);
    painter.end();
    return write_bytes(bytes, file, why);
  }
  return save_pixmap(w->grab(), file, why);
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
