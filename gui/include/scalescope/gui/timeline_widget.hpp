// Timeline of one simulated iteration: one row per (rank, stream) of the ranks shown, tasks painted as bars
// coloured by category; mouse wheel zooms around the cursor, dragging pans, hovering shows the task. A run of
// every rank of a large cluster has millions of tasks: the widget shows the ranks it is given (the simulation
// tab's rank picker), by default the first kDefaultRanks that ran.
#pragma once

#include <QString>
#include <QWidget>
#include <optional>
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

  /// Ranks drawn when none are named.
  static constexpr int kDefaultRanks = 16;

  explicit TimelineWidget(QWidget* parent = nullptr);
  /// Takes the tasks that ran (SimResult::task_times must be recorded) of `ranks` (empty: the first
  /// kDefaultRanks ranks that ran; ranks that did not run are left out).
  void set_run(const TaskGraph& graph, const SimResult& sim, const std::vector<int>& ranks = {});
  void clear();
  /// Distinct ranks with tasks in the last run, and the ones drawn (ascending).
  int ranks_in_run() const { return ranks_in_run_; }
  const std::vector<int>& shown_ranks() const { return shown_ranks_; }
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
  std::vector<int> shown_ranks_;
  int ranks_in_run_ = 0;
  std::int64_t step_ns_ = 0;
  double view_start_ = 0, view_span_ = 1;
  bool dragging_ = false;
  double drag_x_ = 0, drag_start_ = 0;
};

QColor category_color(TaskCategory c);

/// A rank list as typed in the rank picker: comma-separated ranks and inclusive ranges ("0-7, 64, 100-103").
/// Sorted and without repeats; nullopt with `error` set for text that is not such a list, for a range
/// that ends before it starts, or for more than `max_ranks` ranks.
std::optional<std::vector<int>> parse_rank_list(const QString& text, QString* error, int max_ranks = 1024);

}  // namespace scalescope::gui
