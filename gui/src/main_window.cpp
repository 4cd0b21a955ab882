// The main window (see main_window.hpp).
#include "scalescope/gui/main_window.hpp"

#include <QApplication>
#include <QCloseEvent>
#include <QEventLoop>
#include <QFileDialog>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QStatusBar>
#include <QTimer>
#include <QTabWidget>
#include <QtConcurrent/QtConcurrentRun>
#include <QFutureWatcher>

#include "scalescope/gui/chart_export.hpp"
#include "scalescope/gui/cluster_view.hpp"
#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/gui/planner_tab.hpp"
#include "scalescope/gui/scaling_tab.hpp"
#include "scalescope/gui/simulation_tab.hpp"
#include "scalescope/gui/whatif_tab.hpp"
#include "scalescope/gui/workload_tab.hpp"
#include "scalescope/sim/file_io.hpp"

namespace scalescope::gui {

namespace {
const char* const kTabNames[] = {"workload", "simulation", "cluster", "whatif", "scaling", "planner"};
constexpr int kNumTabs = 6;
}

MainWindow::MainWindow(bool interactive, QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("scalescope");
  errors_ = new ErrorReporter(this);
  if (interactive) errors_->set_interactive(this);
  tabs_ = new QTabWidget;
  workload_ = new WorkloadTab(errors_);
  simulation_ = new SimulationTab;
  cluster_ = new ClusterView;
  whatif_ = new WhatIfTab;
  scaling_ = new ScalingTab(std::filesystem::path(SCALESCOPE_SOURCE_DIR) / "validation" / "h200x4" / "measured");
  tabs_->addTab(workload_, "Workload && plan");
  tabs_->addTab(simulation_, "Simulation");
  tabs_->addTab(cluster_, "Cluster");
  tabs_->addTab(whatif_, "What-if");
  planner_ = new PlannerTab(errors_);
  planner_->set_from_session(workload_->session());
  tabs_->addTab(scaling_, "Scaling");
  tabs_->addTab(planner_, "Planner");
  setCentralWidget(tabs_);
  build_menus();
  connect(workload_, &WorkloadTab::simulate_requested, this, [this] {
    if (simulate()) tabs_->setCurrentWidget(simulation_);
  });
  connect(planner_, &PlannerTab::simulate_requested, this, [this](const Session& s) { simulate_session(s); });
  connect(tabs_, &QTabWidget::currentChanged, this, [this](int) {
    if (tabs_->currentWidget() == scaling_) ensure_scaling_loaded();
  });
  connect(errors_, &ErrorReporter::reported, this,
          [this](const QString& title, const QString&) { statusBar()->showMessage(title, 8000); });
  // Progress and Cancel of a running simulation, shown only while one runs.
  run_progress_ = new QProgressBar;
  run_progress_->setMaximumWidth(320);
  run_progress_->setTextVisible(true);
  run_cancel_ = new QPushButton("Cancel");
  run_cancel_->setToolTip("Stop the running simulation");
  connect(run_cancel_, &QPushButton::clicked, this, &MainWindow::cancel_simulation);
  statusBar()->addPermanentWidget(run_progress_);
  statusBar()->addPermanentWidget(run_cancel_);
  run_progress_->hide();
  run_cancel_->hide();
  resize(1280, 860);
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu("&File");
  file->addAction("&Open session...", QKeySequence::Open, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Open session", QString(), "Session (*.json)");
    if (!f.isEmpty()) open_session(f);
  });
  file->addAction("&Save session...", QKeySequence::Save, this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, "Save session", "session.json", "Session (*.json)");
    if (!f.isEmpty()) save_session_as(f);
  });
  file->addAction("&Import HF config.json...", this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, "Import Hugging Face config.json", QString(), "JSON (*.json)");
    if (!f.isEmpty()) workload_->import_model_file(f);
  });
  file->addSeparator();
  file->addAction("&Export current tab (PNG/SVG)...", this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, "Export", current_tab_name() + ".png", "Images (*.png *.svg)");
    if (!f.isEmpty()) export_current(f);
  });
  file->addAction("Export scaling table (&CSV)...", this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, "Export CSV", "scaling.csv", "CSV (*.csv)");
    if (!f.isEmpty()) export_scaling_csv(f);
  });
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, qApp, &QApplication::quit);
  QMenu* run = menuBar()->addMenu("&Run");
  run->addAction("&Simulate", QKeySequence(Qt::CTRL | Qt::Key_R), this, [this] {
    if (simulate()) tabs_->setCurrentWidget(simulation_);
  });
}

bool MainWindow::open_session(const QString& file) {
  auto s = load_session(file.toStdString());
  if (!s) {
    errors_->report("Cannot open session", QString::fromStdString(s.error().str()));
    return false;
  }
  workload_->set_session(*s);
  planner_->set_from_session(*s);
  if (!s->tab.empty()) select_tab(QString::fromStdString(s->tab));
  return true;
}

bool MainWindow::save_session_as(const QString& file) {
  Session s = workload_->session();
  s.tab = current_tab_name().toStdString();
  auto ok = save_session(s, file.toStdString());
  if (!ok) {
    errors_->report("Cannot save session", QString::fromStdString(ok.error().str()));
    return false;
  }
  return true;
}

bool MainWindow::simulate() {
  if (simulating_) {
    statusBar()->showMessage("A simulation is already running", 4000);
    return false;
  }
  const Session s = workload_->session();
  auto in = cache_.get(s);
  if (!in) {
    simulation_->show_error(QString::fromStdString(in.error().str()));
    errors_->report("Cannot load the inputs", QString::fromStdString(in.error().str()));
    return false;
  }
  // The worker owns its copy of the inputs; the window stays responsive (repaints, what-if edits) and
  // says what it is doing until the prediction comes back: tasks simulated so far, and Cancel.
  simulating_ = true;
  run_ = std::make_shared<RunControl>();
  statusBar()->showMessage(QString::fromStdString("Simulating (" + s.fidelity + " fidelity)..."));
  run_progress_->setRange(0, 0);  // busy until the task graph is built
  run_progress_->show();
  run_cancel_->show();
  QApplication::setOverrideCursor(Qt::BusyCursor);
  QTimer poll;
  connect(&poll, &QTimer::timeout, this, [this] {
    const auto [done, total] = simulation_progress();
    if (total == 0) return;
    run_progress_->setRange(0, 1000);
    run_progress_->setValue(static_cast<int>(1000.0 * static_cast<double>(done) / static_cast<double>(total)));
    run_progress_->setFormat(QString("%1 of %2 tasks").arg(done).arg(total));
  });
  poll.start(200);
  QFutureWatcher<Expected<models::Prediction>> watcher;
  QEventLoop loop;
  connect(&watcher, &QFutureWatcherBase::finished, &loop, &QEventLoop::quit);
  watcher.setFuture(QtConcurrent::run([inputs = *in, fidelity = s.fidelity, run = run_] {
    return predict(inputs, fidelity, true, run.get());
  }));
  loop.exec();  // a future that is already finished still reports finished() (replayed to a new watcher)
  auto p = watcher.future().takeResult();
  poll.stop();
  const bool cancelled = run_->cancel.load();
  run_.reset();
  run_progress_->hide();
  run_cancel_->hide();
  QApplication::restoreOverrideCursor();
  simulating_ = false;
  statusBar()->clearMessage();
  if (!p && cancelled) {
    statusBar()->showMessage("Simulation cancelled; the results shown are those of the run before", 8000);
    return false;
  }
  if (!p) {
    simulation_->show_error(QString::fromStdString(p.error().str()));
    errors_->report("Simulation failed", QString::fromStdString(p.error().str()));
    return false;
  }
  simulation_->show_prediction(*in, *p, QString::fromStdString(s.fidelity + " fidelity"));
  cluster_->set_cluster(*in->cluster);
  whatif_->set_base(s);
  whatif_->recompute_now();
  return true;
}

void MainWindow::cancel_simulation() {
  if (run_) run_->cancel.store(true);
}

std::pair<std::uint64_t, std::uint64_t> MainWindow::simulation_progress() const {
  if (!run_) return {0, 0};
  return {run_->tasks_done.load(std::memory_order_relaxed), run_->tasks_total.load(std::memory_order_relaxed)};
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (simulating_) {
    statusBar()->showMessage("A simulation is running; close the window when it has finished", 6000);
    event->ignore();
    return;
  }
  QMainWindow::closeEvent(event);
}

bool MainWindow::simulate_session(const Session& s) {
  workload_->set_session(s);  // the planner's inputs, unscaled (what-if scales 1), so the numbers agree
  tabs_->setCurrentWidget(workload_);
  const bool ok = simulate();
  if (ok) tabs_->setCurrentWidget(simulation_);
  return ok;
}

bool MainWindow::select_tab(const QString& name) {
  for (int i = 0; i < kNumTabs; ++i) {
    if (name == kTabNames[i]) {
      tabs_->setCurrentIndex(i);
      return true;
    }
  }
  return false;
}

QString MainWindow::current_tab_name() const {
  const int i = tabs_->currentIndex();
  return i >= 0 && i < kNumTabs ? QString(kTabNames[i]) : QString();
}

void MainWindow::ensure_scaling_loaded() {
  if (scaling_loaded_) return;
  scaling_loaded_ = true;
  scaling_->reload(profile_names().empty() ? std::string() : std::string("h200x4"));
}

bool MainWindow::export_current(const QString& file) {
  QString why;
  if (!export_widget(tabs_->currentWidget(), file, &why)) {
    errors_->report("Cannot export", why);
    return false;
  }
  return true;
}

bool MainWindow::export_scaling_csv(const QString& file) {
  ensure_scaling_loaded();
  const QByteArray csv = scaling_->model()->to_csv().toUtf8();
  auto ok = write_file_atomic(file.toStdString(), std::string_view(csv.constData(), static_cast<std::size_t>(csv.size())));
  if (!ok) {
    errors_->report("Cannot export", QString::fromStdString(ok.error().str()));
    return false;
  }
  return true;
}

}  // namespace scalescope::gui
