// The plan editor's MoE group (moe_box.hpp).
#include "scalescope/gui/moe_box.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QSpinBox>

namespace scalescope::gui {

MoeBox::MoeBox(QWidget* parent) : QGroupBox("Experts (MoE, Megatron-Core keys)", parent) {
  auto* f = new QFormLayout(this);
  auto spin = [&](const char* label) {
    auto* s = new QSpinBox;
    s->setRange(1, 65536);
    f->addRow(label, s);
    connect(s, &QSpinBox::valueChanged, this, [this] { if (!loading_) emit changed(); });
    return s;
  };
  ep_ = spin("Expert parallel (ep)");
  ep_->setToolTip("Routed experts split over ep ranks of a pipeline stage; ep must divide the experts and ep*etp "
                  "the stage's tp*cp*dp ranks");
  etp_ = spin("Expert tensor parallel (etp)");
  dispatcher_ = new QComboBox;
  dispatcher_->addItems({"alltoall", "allgather", "flex"});
  f->addRow("Token dispatcher", dispatcher_);
  connect(dispatcher_, &QComboBox::currentTextChanged, this, [this] { if (!loading_) emit changed(); });
  imbalance_ = new QDoubleSpinBox;
  imbalance_->setRange(0.0, 1000.0);
  imbalance_->setDecimals(2);
  imbalance_->setSingleStep(0.05);
  imbalance_->setSpecialValueText("model default");
  imbalance_->setToolTip("Tokens of the busiest expert over the mean (0: the model's capacity factor, else balanced)");
  f->addRow("Routing imbalance (max/mean)", imbalance_);
  connect(imbalance_, &QDoubleSpinBox::valueChanged, this, [this] { if (!loading_) emit changed(); });
  overlap_ = new QCheckBox("Overlap dispatch/combine all-to-alls with compute (moe_a2a_overlap)");
  f->addRow("", overlap_);
  connect(overlap_, &QCheckBox::toggled, this, [this] { if (!loading_) emit changed(); });
  set_plan(models::Plan{});
  set_experts(0);
}

void MoeBox::set_plan(const models::Plan& p) {
  loading_ = true;
  ep_->setValue(p.ep);
  etp_->setValue(p.etp);
  const std::string_view d = models::to_string(p.moe_dispatcher);
  dispatcher_->setCurrentText(QString::fromUtf8(d.data(), static_cast<qsizetype>(d.size())));
  imbalance_->setValue(p.moe_imbalance);
  overlap_->setChecked(p.moe_a2a_overlap);
  loading_ = false;
}

void MoeBox::apply(models::Plan& p) const {
  if (!isEnabled()) return;  // a dense model: the MoE keys keep their defaults
  p.ep = ep_->value();
  p.etp = etp_->value();
  if (auto parsed = models::parse_plan("gbs=1,moe_dispatcher=" + dispatcher_->currentText().toStdString())) {
    p.moe_dispatcher = parsed->moe_dispatcher;  // the text form knows the names
  }
  p.moe_imbalance = imbalance_->value();
  p.moe_a2a_overlap = overlap_->isChecked();
}

void MoeBox::set_experts(int experts) {
  setEnabled(experts > 0);
  setTitle(experts > 0 ? QString("Experts (MoE: %1 routed experts)").arg(experts)
                       : QString("Experts (MoE; this model is dense)"));
}

}  // namespace scalescope::gui
