// Tab 2, simulation: step time, tokens/s, MFU, memory per GPU against capacity, the time
// breakdown (QtCharts) and the iteration's timeline per rank.
#pragma once

#include <QWidget>

#include "scalescope/gui/workbench.hpp"

class QChartView;
class QLabel;
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

 private:
  QLabel* heading_;
  QLabel* metrics_;
  QProgressBar* memory_;
  QChartView* chart_;
  TimelineWidget* timeline_;
  double step_time_s_ = 0;
};

}  // namespace scalescope::gui
