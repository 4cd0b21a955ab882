// Tab 2, simulation results (see simulation_tab.hpp).
#include "scalescope/gui/simulation_tab.hpp"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QHorizontalBarSeries>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QProgressBar>
#include <QSplitter>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>

#include "scalescope/gui/chart_export.hpp"
#include "scalescope/gui/timeline_widget.hpp"

namespace scalescope::gui {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}

SimulationTab::SimulationTab(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  heading_ = new QLabel("No simulation yet: choose a workload and press Simulate.");
  heading_->setWordWrap(true);
  outer->addWidget(heading_);
  metrics_ = new QLabel;
  metrics_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont big = metrics_->font();
  big.setPointSizeF(big.pointSizeF() * 1.2);
  metrics_->setFont(big);
  outer->addWidget(metrics_);
  memory_ = new QProgressBar;
  memory_->setRange(0, 1000);
  memory_->setFormat("memory per GPU");
  outer->addWidget(memory_);
  auto* split = new QSplitter(Qt::Vertical);
  chart_ = new QChartView;
  install_export_menu(chart_, "breakdown", nullptr);
  chart_->setRenderHint(QPainter::Antialiasing);
  chart_->setMinimumHeight(300);
  split->addWidget(chart_);
  auto* timeline_box = new QWidget;
  auto* tl = new QVBoxLayout(timeline_box);
  tl->setContentsMargins(0, 0, 0, 0);
  auto* picker = new QHBoxLayout;
  picker->addWidget(new QLabel("Ranks on the timeline:"));
  ranks_edit_ = new QLineEdit;
  ranks_edit_->setPlaceholderText("e.g. 0-7, 64 (Enter)");
  ranks_edit_->setToolTip("Ranks to draw, as ranks and ranges; at most 1,024. Empty: the first " +
                          QString::number(TimelineWidget::kDefaultRanks) + " ranks that ran.");
  ranks_edit_->setMaximumWidth(260);
  picker->addWidget(ranks_edit_);
  ranks_status_ = new QLabel;
  picker->addWidget(ranks_status_, 1);
  tl->addLayout(picker);
  timeline_ = new TimelineWidget;
  tl->addWidget(timeline_, 1);
  connect(ranks_edit_, &QLineEdit::returnPressed, this, [this] { show_ranks(ranks_edit_->text()); });
  split->addWidget(timeline_box);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 2);
  outer->addWidget(split, 1);
}

bool SimulationTab::show_ranks(const QString& text) {
  if (!last_) {
    ranks_status_->setText("No run yet.");
    return false;
  }
  if (text.trimmed().isEmpty()) {
    timeline_->set_run(last_->graph, last_->sim);
    update_ranks_status();
    return true;
  }
  QString error;
  auto ranks = parse_rank_list(text, &error);
  if (!ranks) {
    ranks_status_->setText("<font color=#c62828>" + error.toHtmlEscaped() + "</font>");
    return false;
  }
  timeline_->set_run(last_->graph, last_->sim, *ranks);
  if (timeline_->shown_ranks().empty()) {
    ranks_status_->setText(QString("<font color=#c62828>none of these ranks ran in this simulation (%1 ranks ran)</font>")
                               .arg(timeline_->ranks_in_run()));
    return false;
  }
  update_ranks_status();
  return true;
}

QString SimulationTab::ranks_status() const { return ranks_status_->text(); }

void SimulationTab::update_ranks_status() {
  const auto& shown = timeline_->shown_ranks();
  ranks_status_->setText(shown.empty() ? QString()
                                       : QString("showing %1 of the %2 simulated ranks (%3 to %4)")
                                             .arg(shown.size())
                                             .arg(timeline_->ranks_in_run())
                                             .arg(shown.front())
                                             .arg(shown.back()));
}

void SimulationTab::show_error(const QString& message) {
  heading_->setText("<b>Simulation failed:</b> " + message.toHtmlEscaped());
  metrics_->clear();
  step_time_s_ = 0;
  timeline_->clear();
  last_.reset();
  ranks_status_->clear();
}

QString SimulationTab::metrics_text() const { return metrics_->text(); }

void SimulationTab::show_prediction(const Inputs& in, const models::Prediction& p, const QString& what) {
  step_time_s_ = p.step_time_s;
  const Cluster& c = *in.cluster;
  heading_->setText(QString("<b>%1</b> on %2 GPUs of %3 (%4 node(s) x %5 %6), %7<br>plan: %8<br>"
                            "compute: %9; collectives: %10")
                        .arg(QString::fromStdString(in.model.name).toHtmlEscaped())
                        .arg(in.plan.gpus())
                        .arg(QString::fromStdString(c.name()).toHtmlEscaped())
                        .arg(c.num_nodes())
                        .arg(c.gpus_per_node())
                        .arg(QString::fromStdString(c.gpu_spec().model).toHtmlEscaped())
                        .arg(what.toHtmlEscaped())
                        .arg(QString::fromStdString(models::to_string(in.plan)).toHtmlEscaped())
                        .arg(QString::fromStdString(in.compute_source).toHtmlEscaped())
                        .arg(QString::fromStdString(in.collective_source).toHtmlEscaped()));
  const double mem = p.memory.total().value / kGiB;
  const double cap = p.gpu_memory.value / kGiB;
  metrics_->setText(QString("step time %1 s    tokens/s %2    MFU %3 %    HFU %4 %    memory %5 / %6 GiB %7")
                        .arg(p.step_time_s, 0, 'f', 4)
                        .arg(p.tokens_per_s, 0, 'f', 0)
                        .arg(100.0 * p.mfu, 0, 'f', 1)
                        .arg(100.0 * p.hfu, 0, 'f', 1)
                        .arg(mem, 0, 'f', 2)
                        .arg(cap, 0, 'f', 2)
                        .arg(p.fits_memory ? "(fits)" : "(DOES NOT FIT)"));
  memory_->setValue(static_cast<int>(std::clamp(mem / std::max(cap, 1e-9), 0.0, 1.0) * 1000));
  memory_->setFormat(QString("memory per GPU: %1 of %2 GiB (%3 %)").arg(mem, 0, 'f', 1).arg(cap, 0, 'f', 1).arg(100 * mem / cap, 0, 'f', 0));
  memory_->setStyleSheet(p.fits_memory ? "" : "QProgressBar::chunk { background: #c62828; }");

  using BP = BreakdownPart;
  const Breakdown& b = p.sim.breakdown;
  const std::pair<const char*, Seconds> parts[] = {
      {"compute (fwd+bwd+recompute)", b.compute()}, {"optimizer", b[BP::optimizer]},
      {"other compute", b[BP::other_compute]},      {"exposed TP comm", b[BP::tp_comm]},
      {"exposed SP comm", b[BP::sp_comm]},          {"exposed DP comm", b[BP::dp_comm]},
      {"exposed ZeRO comm", b[BP::zero_comm]},      {"exposed PP comm", b[BP::pp_comm]},
      {"exposed CP comm", b[BP::cp_comm]},          {"exposed EP comm (MoE)", b[BP::ep_comm]},
      {"exposed other comm", b[BP::other_comm]},    {"bubble / idle", b[BP::bubble]}};
  auto* set = new QBarSet("seconds");
  QStringList cats;
  double top = 0;
  for (const auto& [name, s] : parts) {
    if (s.value <= 0) continue;  // parts that take no time are left out (listed in the title)
    cats << name;
    *set << s.value;
    top = std::max(top, s.value);
  }
  set->setColor(QColor(66, 133, 244));
  auto* series = new QHorizontalBarSeries;
  series->append(set);
  series->setLabelsVisible(true);
  series->setLabelsFormat("@value s");
  series->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  auto* chart = new QChart;
  chart->addSeries(series);
  chart->setTitle(QString("Where the %1 s step goes (critical rank %2; parts with zero time left out)")
                     .arg(p.step_time_s, 0, 'f', 4)
                     .arg(p.sim.critical_rank));
  auto* y = new QBarCategoryAxis;
  y->append(cats);
  chart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(y);
  auto* x = new QValueAxis;
  x->setRange(0, top > 0 ? top * 1.25 : 1);
  x->setTitleText("seconds");
  chart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(x);
  chart->legend()->hide();
  QChart* old = chart_->chart();
  chart_->setChart(chart);
  delete old;
  last_ = std::make_shared<const models::Prediction>(p);
  ranks_edit_->clear();
  timeline_->set_run(last_->graph, last_->sim);
  update_ranks_status();
}

}  // namespace scalescope::gui
