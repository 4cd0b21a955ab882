// The plan editor's fine-tuning group (fine_tuning_box.hpp).
#include "scalescope/gui/fine_tuning_box.hpp"

#include <QCheckBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QSpinBox>

namespace scalescope::gui {

namespace {
constexpr int kBits[4] = {models::kLoraQkv, models::kLoraProj, models::kLoraFc1, models::kLoraFc2};
constexpr const char* kNames[4] = {"qkv", "proj", "fc1", "fc2"};
}  // namespace

FineTuningBox::FineTuningBox(QWidget* parent) : QGroupBox("Fine-tuning (LoRA, packed sequences)", parent) {
  auto* f = new QFormLayout(this);
  auto notify = [this] { if (!loading_) emit changed(); };
  rank_ = new QSpinBox;
  rank_->setRange(0, 65536);
  rank_->setSpecialValueText("full training");
  rank_->setToolTip("LoRA rank (Megatron-Bridge peft=lora dim): the base weights frozen, rank-r adapters the only "
                    "trained parameters (lora_rank)");
  f->addRow("LoRA rank", rank_);
  connect(rank_, &QSpinBox::valueChanged, this, notify);
  auto* row = new QHBoxLayout;
  for (int i = 0; i < 4; ++i) {
    modules_[i] = new QCheckBox(kNames[i]);
    row->addWidget(modules_[i]);
    connect(modules_[i], &QCheckBox::toggled, this, notify);
  }
  f->addRow("Adapted modules", row);
  doc_ = new QSpinBox;
  doc_->setRange(0, 1 << 24);
  doc_->setSpecialValueText("unpacked");
  doc_->setToolTip("Packed sequences: the mean document length in tokens; attention stays inside each document "
                   "(packed_doc_tokens)");
  f->addRow("Packed documents (tokens)", doc_);
  connect(doc_, &QSpinBox::valueChanged, this, notify);
  set_plan(models::Plan{});
}

QCheckBox* FineTuningBox::module_box(int bit) const {
  for (int i = 0; i < 4; ++i)
    if (kBits[i] == bit) return modules_[i];
  return nullptr;
}

void FineTuningBox::set_plan(const models::Plan& p) {
  loading_ = true;
  rank_->setValue(p.lora_rank);
  for (int i = 0; i < 4; ++i) modules_[i]->setChecked((p.lora_modules & kBits[i]) != 0);
  doc_->setValue(p.packed_doc_tokens);
  loading_ = false;
}

void FineTuningBox::apply(models::Plan& p) const {
  p.lora_rank = rank_->value();
  int mask = 0;
  for (int i = 0; i < 4; ++i)
    if (modules_[i]->isChecked()) mask |= kBits[i];
  p.lora_modules = mask;  // none checked: validate() names lora_modules
  p.packed_doc_tokens = doc_->value();
}

}  // namespace scalescope::gui
