// Tab 2, simulation: step time, tokens/s, MFU, memory per GPU against capacity, the time
// breakdown (QtCharts) and the iteration's timeline per rank, with a rank picker for runs of many ranks.
#pragma once

#include <QWidget>
#include <memory>

#include "scalescope/gui/workbench.hpp"

class QChartView;
class QLabel;
class QLineEdit;
class QProgressBar;

namespace scalescope::gui {

class TimelineWidget;

class SimulationTab : public QWidget {
  Q_OBJECT
 public:
  explicit SimulationTab(QWidget* parent = nullptr);
  /// Shows a prediction made from `in` (`what` names the setup in the heading).
  void show_prediction(const Inputs& in, const models::Prediction& p, const QString& what);
  void show_error(const QString& message);
  QString metrics_text() const;
  double shown_step_time_s() const { return step_time_s_; }
  QChartView* breakdown_chart() const { return chart_; }
  TimelineWidget* timeline() const { return timeline_; }
  /// The rank picker: ranks typed as "0-7, 64"; applies them to the timeline of the last prediction. False
  /// (and the reason beside the picker) for text that is not a rank list or names no rank of the run.
  bool show_ranks(const QString& text);
  QString ranks_status() const;

 private:
  void update_ranks_status();

  QLabel* heading_;
  QLabel* metrics_;
  QProgressBar* memory_;
  QChartView* chart_;
  TimelineWidget* timeline_;
  QLineEdit* ranks_edit_;
  QLabel* ranks_status_;
  std::shared_ptr<const models::Prediction> last_;  ///< the timeline's run, for the rank picker
  double step_time_s_ = 0;
};

}  // namespace scalescope::gui
