// Tab 1, workload & plan (see workload_tab.hpp).
#include "scalescope/gui/workload_tab.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include "scalescope/gui/dense_stack_box.hpp"
#include "scalescope/gui/fine_tuning_box.hpp"
#include "scalescope/gui/moe_box.hpp"
#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/models/megatron_flags.hpp"
#include "scalescope/models/hf_import.hpp"

namespace scalescope::gui {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
const char* const kDatasheet = "(datasheet, no calibration)";
}  // namespace

WorkloadTab::WorkloadTab(ErrorReporter* errors, QWidget* parent) : QWidget(parent), errors_(errors) {
  auto* outer = new QVBoxLayout(this);

  auto* workload = new QGroupBox("Workload");
  auto* wf = new QFormLayout(workload);
  model_ = new QComboBox;
  for (const auto& n : model_names()) model_->addItem(qs(n));
  auto* import = new QPushButton("Import HF config.json...");
  auto* mrow = new QHBoxLayout;
  mrow->addWidget(model_, 1);
  mrow->addWidget(import);
  wf->addRow("Model", mrow);
  outer->addWidget(workload);

  auto* planbox = new QGroupBox("Parallel plan");
  auto* pf = new QFormLayout(planbox);
  auto spin = [&](const char* label, int lo, int hi, int v) {
    auto* s = new QSpinBox;
    s->setRange(lo, hi);
    s->setValue(v);
    pf->addRow(label, s);
    return s;
  };
  tp_ = spin("Tensor parallel (tp)", 1, 512, 8);
  pp_ = spin("Pipeline parallel (pp)", 1, 512, 1);
  dp_ = spin("Data parallel (dp)", 1, 65536, 1);
  zero_ = spin("ZeRO stage", 0, 3, 0);
  mbs_ = spin("Micro-batch size (mbs)", 1, 4096, 1);
  gbs_ = spin("Global batch size (gbs)", 1, 1 << 24, 8);
  schedule_ = new QComboBox;
  schedule_->addItems({"gpipe", "1f1b", "interleaved"});
  schedule_->setCurrentText("1f1b");
  pf->addRow("Schedule", schedule_);
  vpp_ = spin("Virtual stages (vpp)", 1, 64, 1);
  recompute_ = new QComboBox;
  recompute_->addItems({"none", "selective", "full"});
  pf->addRow("Recompute", recompute_);
  sp_ = new QCheckBox("Sequence parallelism");
  pf->addRow("", sp_);
  outer->addWidget(planbox);
  dense_ = new DenseStackBox;
  outer->addWidget(dense_);
  moe_ = new MoeBox;
  outer->addWidget(moe_);
  tuning_ = new FineTuningBox;
  outer->addWidget(tuning_);

  auto* hw = new QGroupBox("Cluster and calibration");
  auto* hf = new QFormLayout(hw);
  cluster_ = new QComboBox;
  for (const auto& n : cluster_names()) cluster_->addItem(qs(n));
  hf->addRow("Cluster", cluster_);
  nodes_ = new QSpinBox;
  nodes_->setRange(0, 100000);
  nodes_->setSpecialValueText("auto (as many as the plan needs)");
  hf->addRow("Nodes", nodes_);
  calibration_ = new QComboBox;
  calibration_->addItem(kDatasheet);
  for (const auto& n : profile_names()) calibration_->addItem(qs(n));
  hf->addRow("Calibration profile", calibration_);
  fidelity_ = new QComboBox;
  fidelity_->addItems({"analytical", "flow"});
  hf->addRow("Fidelity", fidelity_);
  outer->addWidget(hw);

  status_ = new QLabel;
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  outer->addWidget(status_);
  auto* simulate = new QPushButton("Simulate");
  outer->addWidget(simulate);
  outer->addStretch(1);

  connect(import, &QPushButton::clicked, this, &WorkloadTab::choose_hf_config);
  connect(simulate, &QPushButton::clicked, this, &WorkloadTab::simulate_requested);
  for (QSpinBox* s : {tp_, pp_, dp_, zero_, mbs_, gbs_, vpp_, nodes_}) {
    connect(s, &QSpinBox::valueChanged, this, &WorkloadTab::revalidate);
  }
  for (QComboBox* c : {model_, schedule_, recompute_, cluster_, calibration_, fidelity_}) {
    connect(c, &QComboBox::currentTextChanged, this, &WorkloadTab::revalidate);
  }
  connect(sp_, &QCheckBox::toggled, this, &WorkloadTab::revalidate);
  connect(dense_, &DenseStackBox::changed, this, &WorkloadTab::revalidate);
  connect(moe_, &MoeBox::changed, this, &WorkloadTab::revalidate);
  connect(tuning_, &FineTuningBox::changed, this, &WorkloadTab::revalidate);
  connect(dense_, &DenseStackBox::import_requested, this, [this] { import_megatron_flags(); });
  set_session(Session{});
}

Session WorkloadTab::session() const {
  Session s;
  s.model = model_->currentText().toStdString();
  models::Plan& p = s.plan;
  p = models::Plan{};
  p.tp = tp_->value();
  p.pp = pp_->value();
  p.dp = dp_->value();
  p.zero = zero_->value();
  p.mbs = mbs_->value();
  p.gbs = gbs_->value();
  const QString sched = schedule_->currentText();
  p.schedule = sched == "gpipe" ? models::Schedule::gpipe
               : sched == "interleaved" ? models::Schedule::interleaved
                                        : models::Schedule::one_f_one_b;
  p.vpp = vpp_->value();
  const QString rc = recompute_->currentText();
  p.recompute = rc == "full" ? models::Recompute::full
                : rc == "selective" ? models::Recompute::selective
                                    : models::Recompute::none;
  p.sp = sp_->isChecked();
  dense_->apply(p);
  moe_->apply(p);
  tuning_->apply(p);
  s.cluster = cluster_->currentText().toStdString();
  s.nodes = nodes_->value();
  s.calibration = calibration_->currentText() == kDatasheet ? std::string() : calibration_->currentText().toStdString();
  s.fidelity = fidelity_->currentText().toStdString();
  s.nvlink_scale = nvlink_scale_;
  s.nic_scale = nic_scale_;
  s.tab = tab_;
  return s;
}

void WorkloadTab::select_or_add(QComboBox* box, const QString& text) {
  int i = box->findText(text);
  if (i < 0) {
    box->addItem(text);
    i = box->count() - 1;
  }
  box->setCurrentIndex(i);
}

void WorkloadTab::set_session(const Session& s) {
  loading_ = true;
  select_or_add(model_, qs(s.model));
  tp_->setValue(s.plan.tp);
  pp_->setValue(s.plan.pp);
  dp_->setValue(s.plan.dp);
  zero_->setValue(s.plan.zero);
  mbs_->setValue(s.plan.mbs);
  gbs_->setValue(s.plan.gbs);
  schedule_->setCurrentText(qs(models::to_string(s.plan.schedule)));
  vpp_->setValue(s.plan.vpp);
  recompute_->setCurrentText(qs(models::to_string(s.plan.recompute)));
  sp_->setChecked(s.plan.sp);
  dense_->set_plan(s.plan);
  moe_->set_plan(s.plan);
  tuning_->set_plan(s.plan);
  if (auto m = models::load_model_by_name_or_path(s.model)) moe_->set_experts(m->moe.experts);
  select_or_add(cluster_, qs(s.cluster));
  nodes_->setValue(s.nodes);
  select_or_add(calibration_, s.calibration.empty() ? QString(kDatasheet) : qs(s.calibration));
  fidelity_->setCurrentText(qs(s.fidelity));
  nvlink_scale_ = s.nvlink_scale;
  nic_scale_ = s.nic_scale;
  tab_ = s.tab;
  loading_ = false;
  revalidate();
}

QString WorkloadTab::status_text() const { return status_->text(); }

void WorkloadTab::revalidate() {
  if (loading_) return;
  // The MoE group applies to models with experts: enabled before the plan is read from the editor.
  auto model = models::load_model_by_name_or_path(model_->currentText().toStdString());
  moe_->set_experts(model ? model->moe.experts : 0);
  const Session s = session();
  if (!model) {
    plan_error_ = qs(model.error().str());
  } else {
    int gpus = 0;
    if (s.nodes > 0) {
      ClusterOptions one;
      one.nodes = 1;
      if (auto c = load_cluster_by_name_or_path(s.cluster, one)) gpus = s.nodes * c->gpus_per_node();
    }
    auto check = models::validate(s.plan, *model, gpus);
    if (!check) {
      plan_error_ = qs(check.error().str());
    } else {
      plan_error_.clear();
      QString text = QString("Plan valid: %1 GPUs (tp %2 x pp %3 x dp %4%5%6), %7 micro-batches per pipeline.")
                         .arg(s.plan.gpus())
                         .arg(s.plan.tp)
                         .arg(s.plan.pp)
                         .arg(s.plan.dp)
                         .arg(s.plan.cp > 1 ? QString(" x cp %1").arg(s.plan.cp) : QString())
                         .arg(s.plan.ep > 1 ? QString("; experts over ep %1").arg(s.plan.ep) : QString())
                         .arg(s.plan.num_microbatches());
      for (const auto& n : check->notes) text += "\nnote: " + qs(n);
      status_->setStyleSheet("color: #1b5e20;");
      status_->setText(text);
    }
  }
  if (!plan_error_.isEmpty()) {
    status_->setStyleSheet("color: #b71c1c; font-weight: bold;");
    status_->setText("Invalid: " + plan_error_);
  }
  emit session_changed();
}

bool WorkloadTab::import_megatron_flags() {
  Session s = session();
  auto model = models::load_model_by_name_or_path(s.model);
  if (!model) {
    errors_->report("Cannot read the Megatron flags", qs(model.error().str()));
    return false;
  }
  int gpus = 0;
  if (s.nodes > 0) {
    ClusterOptions one;
    one.nodes = 1;
    if (auto c = load_cluster_by_name_or_path(s.cluster, one)) gpus = s.nodes * c->gpus_per_node();
  }
  auto imported = models::plan_from_megatron(dense_->megatron_flags().toStdString(), *model, gpus);
  if (!imported) {
    errors_->report("Cannot read the Megatron flags", qs(imported.error().str()));
    return false;
  }
  s.plan = imported->plan;
  set_session(s);
  QString extra;
  if (!imported->ignored.empty()) extra += QString("\nignored %1 flag(s) that set nothing here").arg(imported->ignored.size());
  for (const auto& n : imported->notes) extra += "\nnote: " + qs(n);
  if (!extra.isEmpty()) status_->setText(status_->text() + extra);
  return true;
}

bool WorkloadTab::import_model_file(const QString& path) {
  auto spec = models::load_model_by_name_or_path(path.toStdString());
  if (!spec) {
    errors_->report("Cannot import model", qs(spec.error().str()));
    return false;
  }
  select_or_add(model_, path);
  return true;
}

void WorkloadTab::choose_hf_config() {
  const QString f = QFileDialog::getOpenFileName(this, "Import Hugging Face config.json", QString(), "JSON (*.json)");
  if (!f.isEmpty()) import_model_file(f);
}

}  // namespace scalescope::gui
