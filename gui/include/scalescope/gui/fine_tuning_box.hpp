// The plan editor's "Fine-tuning" group: LoRA on frozen base weights (rank and target modules) and packed sequences
// (mean document length) of a plan (docs/plan-format.md, "Fine-tuning").
#pragma once

#include <QGroupBox>

#include "scalescope/models/plan.hpp"

class QCheckBox;
class QSpinBox;

namespace scalescope::gui {

class FineTuningBox : public QGroupBox {
  Q_OBJECT
 public:
  explicit FineTuningBox(QWidget* parent = nullptr);

  /// Shows the fine-tuning keys of `p` (no signal).
  void set_plan(const models::Plan& p);
  /// Writes the shown keys into `p` (the others stay).
  void apply(models::Plan& p) const;
  QSpinBox* rank_box() const { return rank_; }
  QSpinBox* doc_box() const { return doc_; }
  /// The target-module check box of kLora* bit `bit` (qkv, proj, fc1, fc2).
  QCheckBox* module_box(int bit) const;

 signals:
  void changed();

 private:
  QSpinBox *rank_, *doc_;
  QCheckBox* modules_[4];
  bool loading_ = false;
};

}  // namespace scalescope::gui
