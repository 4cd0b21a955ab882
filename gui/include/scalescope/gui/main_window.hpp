// The main window: the six tabs, open/save session, chart/tab export (PNG/SVG), table export (CSV),
// and the simulate flow that feeds the result tabs.
#pragma once

#include <QMainWindow>
#include <memory>
#include <optional>
#include <utility>

#include "scalescope/gui/workbench.hpp"

class QProgressBar;
class QPushButton;
class QTabWidget;

namespace scalescope::gui {

class ClusterView;
class ErrorReporter;
class PlannerTab;
class ScalingTab;
class SimulationTab;
class WhatIfTab;
class WorkloadTab;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  /// `interactive`: errors also pop up as non-modal dialogs.
  explicit MainWindow(bool interactive, QWidget* parent = nullptr);

  /// Loads and shows a session; on failure reports the error and keeps the current state.
  bool open_session(const QString& file);
  bool save_session_as(const QString& file);
  /// Runs the workload tab's session through load_inputs + predict; false (reported) on error. The
  /// prediction runs on a worker thread while the window keeps handling events (a flow-fidelity run of
  /// every rank can take seconds to minutes); the call returns when it is done. A call made while a run
  /// is in progress (e.g. Ctrl+R pressed again) returns false at once and starts nothing.
  bool simulate();
  /// True while simulate() waits for its prediction.
  bool simulating() const { return simulating_; }
  /// Stops the running simulation (the status bar's Cancel): simulate() then returns false and keeps the
  /// results shown before. Nothing happens when none runs.
  void cancel_simulation();
  /// While a simulation runs: its tasks finished and in all (both 0 while the task graph is built).
  std::pair<std::uint64_t, std::uint64_t> simulation_progress() const;
  /// "workload", "simulation", "cluster", "whatif", "scaling", "planner"; false for an unknown name.
  bool select_tab(const QString& name);
  QString current_tab_name() const;
  /// Renders the current tab to PNG (or SVG when the name ends in .svg).
  bool export_current(const QString& file);
  bool export_scaling_csv(const QString& file);
  /// Loads and predicts the measured runs (done the first time the scaling tab is shown).
  void ensure_scaling_loaded();

  ErrorReporter* errors() const { return errors_; }
  WorkloadTab* workload() const { return workload_; }
  SimulationTab* simulation() const { return simulation_; }
  ClusterView* cluster_view() const { return cluster_; }
  WhatIfTab* whatif() const { return whatif_; }
  ScalingTab* scaling() const { return scaling_; }
  PlannerTab* planner() const { return planner_; }
  /// Puts `s` in the workload editor, simulates it and shows the simulation tab (planner double-click).
  bool simulate_session(const Session& s);
  QTabWidget* tabs() const { return tabs_; }

 protected:
  /// Refused while a simulation runs (simulate() is still on the stack, waiting for it).
  void closeEvent(QCloseEvent* event) override;

 private:
  void build_menus();

  ErrorReporter* errors_;
  QTabWidget* tabs_;
  WorkloadTab* workload_;
  SimulationTab* simulation_;
  ClusterView* cluster_;
  WhatIfTab* whatif_;
  ScalingTab* scaling_;
  PlannerTab* planner_;
  InputsCache cache_;
  bool scaling_loaded_ = false;
  bool simulating_ = false;
  std::shared_ptr<RunControl> run_;  ///< the running simulation's progress and cancel flag
  QProgressBar* run_progress_;
  QPushButton* run_cancel_;
};

}  // namespace scalescope::gui
