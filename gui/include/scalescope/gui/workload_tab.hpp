// Tab 1, workload & plan: model catalog / HF import, the plan editor with validate()'s verdict,
// cluster, node count, calibration profile and fidelity pickers.
#pragma once

#include <QWidget>

#include "scalescope/gui/workbench.hpp"

class QCheckBox;
class QComboBox;
class QLabel;
class QSpinBox;

namespace scalescope::gui {

class DenseStackBox;
class MoeBox;
class FineTuningBox;
class ErrorReporter;

class WorkloadTab : public QWidget {
  Q_OBJECT
 public:
  explicit WorkloadTab(ErrorReporter* errors, QWidget* parent = nullptr);

  Session session() const;
  /// Shows `s` in the editors (unknown model / cluster / profile names are added to the pickers).
  void set_session(const Session& s);
  /// validate()'s message for an invalid plan, or "" when the plan is valid.
  QString plan_error() const { return plan_error_; }
  QString status_text() const;
  /// Adds an HF config.json / native model file to the model picker and selects it; false (and
  /// an error reported) when it cannot be read.
  bool import_model_file(const QString& path);

  QSpinBox* tp_box() const { return tp_; }
  DenseStackBox* dense_box() const { return dense_; }
  MoeBox* moe_box() const { return moe_; }
  FineTuningBox* fine_tuning_box() const { return tuning_; }
  /// Reads the dense-stack box's Megatron-LM flags into the plan (world size from the nodes picker, else
  /// the flags' --nnodes x --nproc-per-node); false (and an error reported) when they cannot be read.
  bool import_megatron_flags();

 signals:
  void session_changed();
  void simulate_requested();

 private:
  void revalidate();
  void choose_hf_config();
  static void select_or_add(QComboBox* box, const QString& text);

  ErrorReporter* errors_;
  QComboBox *model_, *schedule_, *recompute_, *cluster_, *calibration_, *fidelity_;
  QSpinBox *tp_, *pp_, *dp_, *zero_, *mbs_, *gbs_, *vpp_, *nodes_;
  QCheckBox* sp_;
  DenseStackBox* dense_;
  MoeBox* moe_;
  FineTuningBox* tuning_;
  QLabel* status_;
  QString plan_error_;
  bool loading_ = false;
  double nvlink_scale_ = 1.0, nic_scale_ = 1.0;
  std::string tab_;
};

}  // namespace scalescope::gui
