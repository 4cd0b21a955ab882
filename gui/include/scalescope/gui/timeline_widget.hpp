// Timeline of one simulated iteration: one row per (rank, stream), tasks painted as bars coloured
// by category; mouse wheel zooms around the cursor, dragging pans, hovering shows the task.
#pragma once

#include <QString>
#include <QWidget>
#include <vector>

#include "scalescope/sim/simulator.hpp"
#include "scalescope/sim/task_graph.hpp"

namespace scalescope::gui {

class TimelineWidget : public QWidget {
  Q_OBJECT
 public:
  struct Bar {
    int row = 0;
    std::int64_t start_ns = 0, end_ns = 0;
    TaskCategory category = TaskCategory::other;
    QString tip;
  };

  explicit TimelineWidget(QWidget* parent = nullptr);
  /// Takes the tasks that ran (SimResult::task_times must be recorded).
  void set_run(const TaskGraph& graph, const SimResult& sim);
  void clear();
  const std::vector<Bar>& bars() const { return bars_; }
  int rows() const { return static_cast<int>(row_names_.size()); }
  /// Visible window in ns (for tests): [view_start, view_start + view_span).
  double view_start() const { return view_start_; }
  double view_span() const { return view_span_; }
  void zoom(double factor, double anchor_x);
  QString tooltip_at(QPointF pos) const;

 protected:
  void paintEvent(QPaintEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  bool event(QEvent*) override;

 private:
  double x_of(double ns) const;
  double ns_of(double x) const;
  double row_height() const;

  std::vector<Bar> bars_;
  std::vector<QString> row_names_;
  std::int64_t step_ns_ = 0;
  double view_start_ = 0, view_span_ = 1;
  bool dragging_ = false;
  double drag_x_ = 0, drag_start_ = 0;
};

QColor category_color(TaskCategory c);

}  // namespace scalescope::gui
