// Tab 6, planner: search inputs, the ranked plan table (sortable, filterable), the throughput-vs-GPUs
// chart with its Amdahl fit; the search runs on a worker thread (QtConcurrent) with a progress bar
// and Cancel; double-clicking a plan asks the main window to simulate it.
#pragma once

#include <QFutureWatcher>
#include <QWidget>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "scalescope/gui/planner_job.hpp"
#include "scalescope/gui/workbench.hpp"

class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;
class QTimer;

namespace scalescope::gui {

class ErrorReporter;
class PlanTableModel;

/// What a worker thread hands back (default-constructible for QFuture).
struct PlannerJobResult {
  std::optional<PlannerOutcome> outcome;
  std::optional<Error> error;
  bool cancelled = false;
};

class PlannerTab : public QWidget {
  Q_OBJECT
 public:
  explicit PlannerTab(ErrorReporter* errors, QWidget* parent = nullptr);
  ~PlannerTab() override;

  PlannerRequest request() const;
  void set_request(const PlannerRequest& r);
  /// Takes model, cluster, node count, gbs and calibration from a workload session.
  void set_from_session(const Session& s);

  /// Starts the search on a worker thread; false when one is already running.
  bool start();
  void cancel();
  bool running() const;
  /// Runs the search on the calling thread (screenshots); false (reported) on error.
  bool run_blocking();
  /// Waits for a running search (tests).
  void wait();

  /// The session that simulates a row of the (proxy) table: the request's model, cluster, nodes and
  /// calibration with that row's plan, analytical fidelity.
  Session session_for_row(int proxy_row) const;
  bool has_outcome() const { return outcome_.has_value(); }
  const PlannerOutcome& outcome() const { return *outcome_; }
  QString status_text() const;

  PlanTableModel* model() const { return model_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QTableView* table() const { return table_; }
  QChartView* chart() const { return chart_; }
  QLineEdit* filter_box() const { return filter_; }
  QProgressBar* progress_bar() const { return progress_; }
  QPushButton* cancel_button() const { return cancel_button_; }

 signals:
  /// A plan was double-clicked: simulate it.
  void simulate_requested(const Session& s);
  /// A search ended (success, error or cancelled).
  void finished();

 private:
  void on_finished();
  void show_result(const PlannerJobResult& r);
  void rebuild_chart();
  void poll_progress();
  QString outcome_text() const;

  ErrorReporter* errors_;
  QComboBox *model_box_, *cluster_, *calibration_;
  QSpinBox *nodes_, *gbs_, *top_, *flow_top_;
  QLineEdit *fix_, *filter_;
  QCheckBox* sweep_;
  QPushButton *search_button_, *cancel_button_;
  QProgressBar* progress_;
  QLabel* status_;
  PlanTableModel* model_;
  QSortFilterProxyModel* proxy_;
  QTableView* table_;
  QChartView* chart_;
  QTimer* poll_;
  QFutureWatcher<PlannerJobResult>* watcher_;
  std::optional<PlannerOutcome> outcome_;
  /// Shared with the worker (it may outlive a cancelled wait): flag and progress counters.
  struct Shared {
    std::atomic<bool> cancel{false};
    std::atomic<long> done{0}, total{0};
    std::mutex mutex;
    std::string stage;  ///< guarded by `mutex`
  };
  std::shared_ptr<Shared> shared_;
};

}  // namespace scalescope::gui
