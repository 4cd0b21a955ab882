// Tab 5, scaling: measured training points from validation/ beside the simulator's prediction for
// the same model, plan and cluster; a table model (sortable), a step-time vs GPU-count chart and a
// speedup chart with the Amdahl (strong) / Gustafson (weak) fits (scaling_fit_chart.hpp).
#pragma once

#include <QAbstractTableModel>
#include <QWidget>
#include <filesystem>
#include <string>
#include <vector>

#include "scalescope/gui/workbench.hpp"
#include "scalescope/planner/scaling.hpp"

class QChartView;
class QComboBox;
class QLabel;
class QTableView;

namespace scalescope::gui {

/// One measured run (schema "scalescope.measured/1") and its prediction.
struct MeasuredPoint {
  std::string file, family, scaling, model, cluster, plan_text;
  models::ModelSpec spec;
  models::Plan plan;
  int gpus = 0;
  double measured_s = 0;
  double predicted_s = -1;  ///< < 0: not predicted (see note)
  std::string note;
  double error() const { return predicted_s > 0 ? predicted_s / measured_s - 1.0 : 0.0; }
};

/// Reads one measured-run file; input errors name the file and JSON path.
Expected<MeasuredPoint> load_measured_point(const std::filesystem::path& file);
/// Every *.json in `dir`, sorted by file name; files that fail are returned in `errors`.
std::vector<MeasuredPoint> load_measured_dir(const std::filesystem::path& dir, std::vector<Error>* errors);

class MeasuredModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { kFile, kFamily, kScaling, kModel, kGpus, kPlan, kMeasured, kPredicted, kError, kNumColumns };
  explicit MeasuredModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
  void set_points(std::vector<MeasuredPoint> points);
  const std::vector<MeasuredPoint>& points() const { return points_; }
  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation o, int role = Qt::DisplayRole) const override;
  /// RFC 4180 CSV of the whole table (display text, header first).
  QString to_csv() const;

 private:
  std::vector<MeasuredPoint> points_;
};

class ScalingTab : public QWidget {
  Q_OBJECT
 public:
  ScalingTab(const std::filesystem::path& measured_dir, QWidget* parent = nullptr);
  /// Loads the measured points and predicts each with `calibration` (empty: datasheet).
  void reload(const std::string& calibration);
  MeasuredModel* model() const { return model_; }
  QChartView* chart() const { return chart_; }
  QChartView* speedup_chart() const { return speedup_chart_; }
  /// The curves of the loaded points with speedups, errors and fits (as `scalescope scaling`).
  const std::vector<planner::ScalingCurve>& curves() const { return curves_; }
  /// Shows the speedup chart of curves()[index] (-1: every curve of the chosen kind).
  void show_curve(int index);
  QComboBox* curve_box() const { return curve_; }
  /// Software stack: 0 = PyTorch eager + measured host cost (default), 1 = fused.
  QComboBox* stack_box() const { return stack_; }
  QTableView* table() const { return table_; }
  QString summary() const;

 private:
  void rebuild_chart();
  void rebuild_speedup_chart();
  void fill_curve_box();

  std::filesystem::path dir_;
  MeasuredModel* model_;
  QTableView* table_;
  QChartView* chart_;
  QChartView* speedup_chart_;
  QComboBox* curve_;
  std::vector<planner::ScalingCurve> curves_;
  QComboBox* calibration_;
  QComboBox* stack_;  ///< software stack the predictions price (eager + host cost, or fused)
  QComboBox* scaling_;
  QLabel* summary_;
  InputsCache cache_;
};

}  // namespace scalescope::gui
