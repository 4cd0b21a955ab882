// Exporting one widget (a chart, a tab) as PNG or SVG, the right-click "Export chart" menu every
// chart view gets, and tables as CSV.
#pragma once

#include <QString>

class QAbstractItemModel;
class QPixmap;
class QWidget;

namespace scalescope::gui {

class ErrorReporter;

/// Renders `w` to `file`: SVG when the name ends in .svg, PNG (or any QImage format) otherwise.
/// False, with the reason in `why` (may be null), when the file cannot be written. Like every
/// output, the bytes go through write_file_atomic (regular or new file, temp + fsync + rename).
bool export_widget(QWidget* w, const QString& file, QString* why = nullptr);
/// Encodes `pixmap` in the format the file name's suffix names (PNG by default) and writes it the same way.
bool save_pixmap(const QPixmap& pixmap, const QString& file, QString* why = nullptr);

/// Adds "Export chart as PNG... / SVG..." to `w`'s context menu; failures go to `errors` (may be null).
void install_export_menu(QWidget* w, const QString& default_name, ErrorReporter* errors);

/// RFC 4180 CSV of a whole table model: the horizontal header, then every row's display text.
QString table_to_csv(const QAbstractItemModel& model);

}  // namespace scalescope::gui
