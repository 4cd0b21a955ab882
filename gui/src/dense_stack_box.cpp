// The plan editor's dense-stack group (dense_stack_box.hpp).
#include "scalescope/gui/dense_stack_box.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>

namespace scalescope::gui {

namespace {
QString qs(std::string_view s) { return QString::fromUtf8(s.data(), static_cast<qsizetype>(s.size())); }
}  // namespace

DenseStackBox::DenseStackBox(QWidget* parent) : QGroupBox("Dense stack (Megatron-Core keys)", parent) {
  auto* f = new QFormLayout(this);
  auto spin = [&](const char* label, int lo, int hi, const char* special) {
    auto* s = new QSpinBox;
    s->setRange(lo, hi);
    if (special) s->setSpecialValueText(special);
    f->addRow(label, s);
    connect(s, &QSpinBox::valueChanged, this, [this] { if (!loading_) emit changed(); });
    return s;
  };
  auto combo = [&](const char* label, QStringList items) {
    auto* c = new QComboBox;
    c->addItems(items);
    f->addRow(label, c);
    connect(c, &QComboBox::currentTextChanged, this, [this] { if (!loading_) emit changed(); });
    return c;
  };
  auto check = [&](const char* text) {
    auto* c = new QCheckBox(text);
    f->addRow("", c);
    connect(c, &QCheckBox::toggled, this, [this] { if (!loading_) emit changed(); });
    return c;
  };
  cp_ = spin("Context parallel (cp)", 1, 1024, nullptr);
  cp_comm_ = combo("CP exchange", {"p2p", "a2a", "allgather"});
  precision_ = combo("Precision", {"mixed", "bf16", "fp16", "fp8"});
  recipe_ = combo("FP8 recipe", {"delayed", "tensorwise", "blockwise", "mxfp8"});
  fp8_params_ = check("FP8 primary weights (fp8_params)");
  grad32_ = check("Reduce gradients in fp32 (grad_reduce_in_fp32)");
  overlap_grad_ = check("Overlap gradient reduction with backward (overlap_grad_reduce)");
  overlap_param_ = check("Gather parameters during the next forward (overlap_param_gather, zero >= 1)");
  tp_overlap_ = check("Overlap TP/SP collectives with GEMMs (tp_comm_overlap, needs sp)");
  cross_entropy_ = combo("Cross entropy (cross_entropy_fusion)", {"none", "native", "te"});
  cross_entropy_->setToolTip("Megatron-Core's --cross-entropy-loss-fusion / --cross-entropy-fusion-impl: none (its "
                             "default, unfused fp32 passes over the logits), native (torch.compile'd) or te "
                             "(Transformer Engine's kernel, Megatron-Bridge's recipes)");
  optimizer_ = combo("Optimizer step (optimizer_impl)", {"fused", "foreach"});
  optimizer_->setToolTip("fused: one Adam kernel (Megatron-Core, apex, TE); foreach: torch.optim.AdamW's default "
                         "(read by the pytorch-eager stack)");
  first_ = spin("First stage layers", 0, 100000, "even");
  last_ = spin("Last stage layers", 0, 100000, "even");
  flags_ = new QLineEdit;
  flags_->setPlaceholderText("--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 ...");
  auto* read = new QPushButton("Read Megatron flags");
  auto* row = new QHBoxLayout;
  row->addWidget(flags_, 1);
  row->addWidget(read);
  f->addRow("Megatron-LM flags", row);
  connect(read, &QPushButton::clicked, this, &DenseStackBox::import_requested);
  set_plan(models::Plan{});
}

void DenseStackBox::set_plan(const models::Plan& p) {
  loading_ = true;
  cp_->setValue(p.cp);
  cp_comm_->setCurrentText(qs(models::to_string(p.cp_comm)));
  precision_->setCurrentText(qs(models::to_string(p.precision)));
  recipe_->setCurrentText(qs(models::to_string(p.fp8_recipe)));
  fp8_params_->setChecked(p.fp8_params);
  grad32_->setChecked(p.grad_reduce_in_fp32);
  overlap_grad_->setChecked(p.overlap);
  overlap_param_->setChecked(p.overlap_param_gather);
  tp_overlap_->setChecked(p.tp_comm_overlap);
  cross_entropy_->setCurrentText(qs(models::to_string(p.cross_entropy_fusion)));
  optimizer_->setCurrentText(qs(models::to_string(p.optimizer_impl)));
  first_->setValue(p.first_stage_layers);
  last_->setValue(p.last_stage_layers);
  loading_ = false;
}

void DenseStackBox::apply(models::Plan& p) const {
  // The text form parses each choice (one place that knows the names).
  const std::string text = "gbs=1,cp_comm=" + cp_comm_->currentText().toStdString() +
                           ",precision=" + precision_->currentText().toStdString() +
                           ",fp8_recipe=" + recipe_->currentText().toStdString() +
                           ",cross_entropy_fusion=" + cross_entropy_->currentText().toStdString() +
                           ",optimizer_impl=" + optimizer_->currentText().toStdString();
  if (auto parsed = models::parse_plan(text)) {
    p.cp_comm = parsed->cp_comm;
    p.precision = parsed->precision;
    p.fp8_recipe = parsed->fp8_recipe;
    p.cross_entropy_fusion = parsed->cross_entropy_fusion;
    p.optimizer_impl = parsed->optimizer_impl;
  }
  p.cp = cp_->value();
  p.fp8_params = fp8_params_->isChecked();
  p.grad_reduce_in_fp32 = grad32_->isChecked();
  p.overlap = overlap_grad_->isChecked();
  p.overlap_param_gather = overlap_param_->isChecked();
  p.tp_comm_overlap = tp_overlap_->isChecked();
  p.first_stage_layers = first_->value();
  p.last_stage_layers = last_->value();
}

QString DenseStackBox::megatron_flags() const { return flags_->text(); }

}  // namespace scalescope::gui
