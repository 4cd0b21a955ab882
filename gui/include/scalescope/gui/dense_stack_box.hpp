// The plan editor's "Dense stack" group: the Megatron-Core keys of a plan (cp and its exchange, FP8 and
// its recipe, gradient dtype, overlap flags, uneven first / last stages) and a line to read a
// Megatron-LM command line into the whole plan.
#pragma once

#include <QGroupBox>

#include "scalescope/models/plan.hpp"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace scalescope::gui {

class DenseStackBox : public QGroupBox {
  Q_OBJECT
 public:
  explicit DenseStackBox(QWidget* parent = nullptr);

  /// Shows the dense-stack keys of `p` (no signal).
  void set_plan(const models::Plan& p);
  /// Writes the shown keys into `p` (the others stay).
  void apply(models::Plan& p) const;
  /// The Megatron flags typed in the import line.
  QString megatron_flags() const;
  QSpinBox* cp_box() const { return cp_; }
  QComboBox* precision_box() const { return precision_; }
  QLineEdit* megatron_line() const { return flags_; }
  QComboBox* cross_entropy_box() const { return cross_entropy_; }
  QComboBox* optimizer_box() const { return optimizer_; }

 signals:
  void changed();
  /// The user asked to read the import line's Megatron flags into the plan.
  void import_requested();

 private:
  QSpinBox *cp_, *first_, *last_;
  QComboBox *cp_comm_, *precision_, *recipe_, *cross_entropy_, *optimizer_;
  QCheckBox *fp8_params_, *grad32_, *overlap_grad_, *overlap_param_, *tp_overlap_;
  QLineEdit* flags_;
  bool loading_ = false;
};

}  // namespace scalescope::gui
