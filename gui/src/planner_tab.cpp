// Tab 6, planner (see planner_tab.hpp).
#include "scalescope/gui/planner_tab.hpp"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QValueAxis>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>

#include "scalescope/gui/chart_export.hpp"
#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/gui/plan_table_model.hpp"

namespace scalescope::gui {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
const char* const kDatasheet = "(datasheet, no calibration)";

void select_or_add(QComboBox* box, const QString& text) {
  if (box->findText(text) < 0) box->addItem(text);
  box->setCurrentText(text);
}

PlannerJobResult run_job(const PlannerRequest& rq, const std::atomic<bool>* cancel, const PlannerProgress& progress) {
  PlannerJobResult r;
  auto out = run_planner(rq, cancel, progress);
  if (out) {
    r.outcome = std::move(out).value();
  } else if (cancel != nullptr && cancel->load()) {
    r.cancelled = true;
  } else {
    r.error = out.error();
  }
  return r;
}
}  // namespace

PlannerTab::PlannerTab(ErrorReporter* errors, QWidget* parent)
    : QWidget(parent), errors_(errors), shared_(std::make_shared<Shared>()) {
  auto* outer = new QVBoxLayout(this);
  auto* inputs = new QGroupBox("Search");
  auto* row = new QHBoxLayout(inputs);
  auto* left = new QFormLayout;
  auto* right = new QFormLayout;
  row->addLayout(left, 1);
  row->addLayout(right, 1);
  model_box_ = new QComboBox;
  for (const auto& n : model_names()) model_box_->addItem(qs(n));
  left->addRow("Model", model_box_);
  cluster_ = new QComboBox;
  for (const auto& n : cluster_names()) cluster_->addItem(qs(n));
  left->addRow("Cluster", cluster_);
  nodes_ = new QSpinBox;
  nodes_->setRange(0, 100000);
  nodes_->setSpecialValueText("the cluster file's");
  left->addRow("Nodes", nodes_);
  calibration_ = new QComboBox;
  calibration_->addItem(kDatasheet);
  for (const auto& n : profile_names()) calibration_->addItem(qs(n));
  left->addRow("Calibration", calibration_);
  gbs_ = new QSpinBox;
  gbs_->setRange(1, 1 << 24);
  gbs_->setValue(8);
  right->addRow("Global batch (gbs)", gbs_);
  top_ = new QSpinBox;
  top_->setRange(1, 100000);
  top_->setValue(10);
  right->addRow("Plans to list", top_);
  flow_top_ = new QSpinBox;
  flow_top_->setRange(0, 100000);
  flow_top_->setValue(3);
  right->addRow("Confirm at flow fidelity", flow_top_);
  fix_ = new QLineEdit;
  fix_->setPlaceholderText("e.g. tp=4,schedule=1f1b (as --fix)");
  right->addRow("Fix fields", fix_);
  sweep_ = new QCheckBox("Throughput vs GPUs sweep (best plan per GPU count)");
  sweep_->setChecked(true);
  right->addRow("", sweep_);
  outer->addWidget(inputs);

  auto* bar = new QHBoxLayout;
  search_button_ = new QPushButton("Search plans");
  cancel_button_ = new QPushButton("Cancel");
  cancel_button_->setEnabled(false);
  progress_ = new QProgressBar;
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setFormat("%v / %m");
  bar->addWidget(search_button_);
  bar->addWidget(cancel_button_);
  bar->addWidget(progress_, 1);
  outer->addLayout(bar);
  status_ = new QLabel("Choose the inputs and press Search plans.");
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  outer->addWidget(status_);

  auto* split = new QSplitter(Qt::Vertical);
  auto* table_box = new QWidget;
  auto* tl = new QVBoxLayout(table_box);
  tl->setContentsMargins(0, 0, 0, 0);
  filter_ = new QLineEdit;
  filter_->setPlaceholderText("Filter rows (any column contains...)");
  filter_->setClearButtonEnabled(true);
  tl->addWidget(filter_);
  model_ = new PlanTableModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setSortRole(Qt::UserRole);
  proxy_->setFilterKeyColumn(-1);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  table_ = new QTableView;
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(PlanTableModel::kRank, Qt::AscendingOrder);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  tl->addWidget(table_, 1);
  split->addWidget(table_box);
  chart_ = new QChartView;
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumHeight(300);
  install_export_menu(chart_, "planner-throughput", errors_);
  split->addWidget(chart_);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  outer->addWidget(split, 1);
  rebuild_chart();

  poll_ = new QTimer(this);
  poll_->setInterval(50);
  watcher_ = new QFutureWatcher<PlannerJobResult>(this);
  connect(poll_, &QTimer::timeout, this, &PlannerTab::poll_progress);
  connect(watcher_, &QFutureWatcher<PlannerJobResult>::finished, this, &PlannerTab::on_finished);
  connect(search_button_, &QPushButton::clicked, this, [this] { start(); });
  connect(cancel_button_, &QPushButton::clicked, this, &PlannerTab::cancel);
  connect(filter_, &QLineEdit::textChanged, proxy_, &QSortFilterProxyModel::setFilterFixedString);
  connect(table_, &QTableView::doubleClicked, this,
          [this](const QModelIndex& i) { emit simulate_requested(session_for_row(i.row())); });
}

PlannerTab::~PlannerTab() {
  shared_->cancel = true;
  watcher_->waitForFinished();
}

PlannerRequest PlannerTab::request() const {
  PlannerRequest r;
  r.model = model_box_->currentText().toStdString();
  r.cluster = cluster_->currentText().toStdString();
  r.nodes = nodes_->value();
  r.calibration = calibration_->currentText() == kDatasheet ? std::string() : calibration_->currentText().toStdString();
  r.gbs = gbs_->value();
  r.top = top_->value();
  r.flow_top = flow_top_->value();
  r.fix = fix_->text().trimmed().toStdString();
  r.sweep = sweep_->isChecked();
  return r;
}

void PlannerTab::set_request(const PlannerRequest& r) {
  select_or_add(model_box_, qs(r.model));
  select_or_add(cluster_, qs(r.cluster));
  nodes_->setValue(r.nodes);
  calibration_->setCurrentText(kDatasheet);
  if (!r.calibration.empty()) select_or_add(calibration_, qs(r.calibration));
  gbs_->setValue(r.gbs);
  top_->setValue(r.top);
  flow_top_->setValue(r.flow_top);
  fix_->setText(qs(r.fix));
  sweep_->setChecked(r.sweep);
}

void PlannerTab::set_from_session(const Session& s) {
  PlannerRequest r = request();
  r.model = s.model;
  r.cluster = s.cluster;
  r.nodes = s.nodes;
  r.calibration = s.calibration;
  r.gbs = s.plan.gbs;
  set_request(r);
}

bool PlannerTab::running() const { return watcher_->isRunning(); }

bool PlannerTab::start() {
  if (running()) return false;
  // A fresh shared block per run: a cancelled worker keeps its own until it returns.
  shared_ = std::make_shared<Shared>();
  std::shared_ptr<Shared> sh = shared_;
  const PlannerRequest rq = request();
  PlannerProgress progress = [sh](const std::string& stage, long done, long total) {
    {
      std::lock_guard lock(sh->mutex);
      sh->stage = stage;
    }
    sh->total = total;
    sh->done = done;
  };
  search_button_->setEnabled(false);
  cancel_button_->setEnabled(true);
  progress_->setRange(0, 0);  // busy until the first report
  status_->setText("Searching...");
  watcher_->setFuture(QtConcurrent::run([sh, rq, progress] { return run_job(rq, &sh->cancel, progress); }));
  poll_->start();
  return true;
}

void PlannerTab::cancel() {
  if (!running()) return;
  shared_->cancel = true;
  cancel_button_->setEnabled(false);
  status_->setText("Cancelling...");
}

void PlannerTab::wait() {
  if (running()) watcher_->waitForFinished();
}

bool PlannerTab::run_blocking() {
  if (running()) return false;
  const PlannerJobResult r = run_job(request(), nullptr, {});
  progress_->setRange(0, 1);
  progress_->setValue(1);
  progress_->setFormat(r.outcome ? "done" : "failed");
  show_result(r);
  emit finished();
  return r.outcome.has_value();
}

void PlannerTab::poll_progress() {
  const long total = shared_->total, done = shared_->done;
  std::string stage;
  {
    std::lock_guard lock(shared_->mutex);
    stage = shared_->stage;
  }
  if (total > 0) {
    progress_->setRange(0, static_cast<int>(std::min<long>(total, 1 << 30)));
    progress_->setValue(static_cast<int>(std::min(done, total)));
    progress_->setFormat(qs(stage) + ": %v / %m");
  }
}

void PlannerTab::on_finished() {
  poll_->stop();
  search_button_->setEnabled(true);
  cancel_button_->setEnabled(false);
  progress_->setRange(0, 1);
  progress_->setValue(1);
  progress_->setFormat("done");
  show_result(watcher_->result());
  emit finished();
}

void PlannerTab::show_result(const PlannerJobResult& r) {
  if (r.cancelled) {
    progress_->setValue(0);
    progress_->setFormat("cancelled");
    status_->setText("Search cancelled; the table shows the previous result.");
    return;
  }
  if (r.error) {
    status_->setText("Error: " + qs(r.error->str()));
    if (errors_ != nullptr) errors_->report("Plan search failed", qs(r.error->str()));
    return;
  }
  outcome_ = *r.outcome;
  model_->set_plans(outcome_->result.ranked);
  table_->resizeColumnsToContents();
  rebuild_chart();
  status_->setText(outcome_text());
}

QString PlannerTab::status_text() const { return status_->text(); }

QString PlannerTab::outcome_text() const {
  if (!outcome_) return {};
  const planner::PruneCounts& c = outcome_->result.counts;
  // The counts of `scalescope plan`, in its words.
  QString t = qs(outcome_->header) +
              QString(". %1 plans enumerated, %2 excluded by the fixed keys, %3 invalid, %4 out of memory, %5 dominated, "
                      "%6 skipped (lower bound above the top), %7 failed, %8 simulated")
                  .arg(c.plans)
                  .arg(c.fixed_out)
                  .arg(c.invalid)
                  .arg(c.out_of_memory)
                  .arg(c.dominated)
                  .arg(c.bounded)
                  .arg(c.failed)
                  .arg(c.evaluated);
  t += QString("; memory limit %1 GiB; collectives: %2; compute: %3.")
           .arg(outcome_->gpu_memory_GiB, 0, 'f', 1)
           .arg(qs(outcome_->collective_source), qs(outcome_->compute_source));
  if (outcome_->result.ranked.empty()) {
    t += " No plan can run:";
    for (const auto& e : outcome_->result.explanations) t += " " + qs(e) + ";";
  } else {
    t += " Same numbers as `scalescope plan`; double-click a row to simulate it.";
  }
  return t;
}

Session PlannerTab::session_for_row(int proxy_row) const {
  const int src = proxy_->mapToSource(proxy_->index(proxy_row, 0)).row();
  const PlannerRequest& rq = outcome_ ? outcome_->request : PlannerRequest{};
  Session s;
  s.model = rq.model;
  s.cluster = rq.cluster;
  s.nodes = rq.nodes;
  s.calibration = rq.calibration;
  s.fidelity = "analytical";
  if (src >= 0 && src < model_->rowCount()) s.plan = model_->plan_at(src).plan;
  return s;
}

void PlannerTab::rebuild_chart() {
  auto* chart = new QChart;
  chart->setTitle("Best plan's throughput vs GPUs (fixed gbs), Amdahl fit and linear scaling");
  auto* x = new QValueAxis;
  x->setTitleText("GPUs");
  x->setLabelFormat("%d");
  auto* y = new QValueAxis;
  y->setTitleText("tokens/s");
  y->setLabelFormat("%.0f");
  chart->addAxis(x, Qt::AlignBottom);
  chart->addAxis(y, Qt::AlignLeft);
  if (outcome_ && !outcome_->sweep.empty()) {
    auto* pts = new QScatterSeries;
    pts->setName("best plan (analytical)");
    pts->setMarkerSize(10);
    auto* ideal = new QLineSeries;
    ideal->setName("linear from the first point");
    QPen dash(Qt::gray);
    dash.setStyle(Qt::DashLine);
    ideal->setPen(dash);
    auto* fit = new QLineSeries;
    const auto& a = outcome_->amdahl;
    fit->setName(a ? QString("Amdahl fit s = %1, R\u00b2 = %2").arg(a->serial_fraction, 0, 'g', 3).arg(a->r2, 0, 'f', 3)
                   : QString("Amdahl fit: needs two GPU counts"));
    double hi = 0, base_t = 0;
    int max_g = 1;
    for (const SweepPoint& p : outcome_->sweep) {
      max_g = std::max(max_g, p.gpus);
      if (!p.best) continue;
      if (base_t == 0) base_t = p.best->tokens_per_s;
      pts->append(p.gpus, p.best->tokens_per_s);
      hi = std::max(hi, p.best->tokens_per_s);
    }
    const double n0 = outcome_->sweep_base_gpus;
    if (base_t > 0 && n0 > 0) {
      for (int i = 0; i <= 60; ++i) {
        const double g = n0 + (max_g - n0) * i / 60.0;
        ideal->append(g, base_t * g / n0);
        if (a) fit->append(g, base_t * planner::amdahl_speedup(a->serial_fraction, g / n0));
      }
      hi = std::max(hi, base_t * max_g / n0);
    }
    for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{ideal, fit, pts}) {
      chart->addSeries(s);
      s->attachAxis(x);
      s->attachAxis(y);
    }
    // Each point labelled with its tokens/s and plan (a one-point series, hidden from the legend).
    for (const SweepPoint& p : outcome_->sweep) {
      if (!p.best) continue;
      auto* l = new QScatterSeries;
      l->setMarkerSize(1);
      l->append(p.gpus, p.best->tokens_per_s);
      l->setPointLabelsFormat(QString("%1 tok/s (tp%2 pp%3 dp%4)")
                                  .arg(p.best->tokens_per_s, 0, 'f', 0)
                                  .arg(p.best->plan.tp).arg(p.best->plan.pp).arg(p.best->plan.dp));
      l->setPointLabelsVisible(true);
      l->setPointLabelsClipping(false);
      chart->addSeries(l);
      l->attachAxis(x);
      l->attachAxis(y);
      for (QLegendMarker* m : chart->legend()->markers(l)) m->setVisible(false);
    }
    // Integer ticks at a round interval (1, 2, 4, ...) so that the labels sit on GPU counts.
    int step = 1;
    while (max_g / step > 12) step *= 2;
    x->setTickType(QValueAxis::TicksDynamic);
    x->setTickAnchor(0);
    x->setTickInterval(step);
    x->setRange(0, (max_g / step + 1) * step);
    y->setRange(0, hi > 0 ? hi * 1.1 : 1);
  } else {
    x->setRange(0, 8);
    y->setRange(0, 1);
  }
  QChart* old = chart_->chart();
  chart_->setChart(chart);
  delete old;
}

}  // namespace scalescope::gui
