// The plan editor's "Experts (MoE)" group: expert parallelism and the MoE keys of a plan (ep, etp, token
// dispatcher, routing imbalance, all-to-all overlap); enabled only for models with experts.
#pragma once

#include <QGroupBox>

#include "scalescope/models/plan.hpp"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QSpinBox;

namespace scalescope::gui {

class MoeBox : public QGroupBox {
  Q_OBJECT
 public:
  explicit MoeBox(QWidget* parent = nullptr);

  /// Shows the MoE keys of `p` (no signal).
  void set_plan(const models::Plan& p);
  /// Writes the shown keys into `p` (the others stay); dense models keep the defaults.
  void apply(models::Plan& p) const;
  /// Enables the group for a model with `experts` routed experts (0: a dense model, the group is disabled).
  void set_experts(int experts);
  QSpinBox* ep_box() const { return ep_; }
  QSpinBox* etp_box() const { return etp_; }
  QCheckBox* overlap_box() const { return overlap_; }

 signals:
  void changed();

 private:
  QSpinBox *ep_, *etp_;
  QComboBox* dispatcher_;
  QDoubleSpinBox* imbalance_;
  QCheckBox* overlap_;
  bool loading_ = false;
};

}  // namespace scalescope::gui
