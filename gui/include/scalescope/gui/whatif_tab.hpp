// Tab 4, what-if: sliders for node count, NVLink and NIC bandwidth scale and micro-batch size, and switches
// for the profile's measured compute-communication interference, GPUDirect RDMA and PCIe-only P2P (the cluster
// variants of sim/cluster_variant.hpp); the analytical prediction is recomputed (debounced) and its update time
// shown.
#pragma once

#include <QWidget>

#include "scalescope/gui/workbench.hpp"

class QCheckBox;
class QLabel;
class QSlider;
class QTimer;

namespace scalescope::gui {

class WhatIfTab : public QWidget {
  Q_OBJECT
 public:
  explicit WhatIfTab(QWidget* parent = nullptr);
  /// The session the sliders start from (the workload tab's).
  void set_base(const Session& base);
  /// The base session with the slider values applied (dp follows the GPU count).
  Session scenario() const;
  /// Recomputes at once (the sliders do it 60 ms after the last move).
  void recompute_now();
  double last_update_ms() const { return last_ms_; }
  double last_step_time_s() const { return last_step_s_; }
  QString result_text() const;
  QSlider* nodes_slider() const { return nodes_; }
  QSlider* nvlink_slider() const { return nvlink_; }
  QSlider* nic_slider() const { return nic_; }
  QSlider* mbs_slider() const { return mbs_; }
  QCheckBox* interference_box() const { return interference_; }
  QSlider* cp_slider() const { return cp_; }
  QCheckBox* fp8_box() const { return fp8_; }
  QCheckBox* overlaps_box() const { return overlaps_; }
  /// Checked: the NICs read and write GPU memory (GPUDirect RDMA); starts as the cluster file says.
  QCheckBox* gpudirect_box() const { return gpudirect_; }
  /// Checked: NVLink removed, GPUs talk over PCIe.
  QCheckBox* pcie_only_box() const { return pcie_only_; }

 signals:
  void updated();

 private:
  void refresh_labels();

  Session base_;
  int gpus_per_node_ = 8;
  QSlider *nodes_, *nvlink_, *nic_, *mbs_, *cp_;
  QCheckBox *interference_, *fp8_, *overlaps_, *gpudirect_, *pcie_only_;
  bool file_gpudirect_ = true;  ///< the cluster file's gpudirect_rdma
  QLabel *nodes_label_, *nvlink_label_, *nic_label_, *mbs_label_, *cp_label_, *result_, *timing_;
  QTimer* debounce_;
  InputsCache cache_;
  double last_ms_ = 0, last_step_s_ = 0;
  bool loading_ = false;
};

}  // namespace scalescope::gui
