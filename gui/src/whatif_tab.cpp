// Tab 4, what-if sliders (see whatif_tab.hpp).
#include "scalescope/gui/whatif_tab.hpp"

#include <QCheckBox>
#include <QElapsedTimer>
#include <QGridLayout>
#include <QLabel>
#include <QSlider>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

namespace scalescope::gui {

namespace {
QSlider* make_slider(int lo, int hi) {
  auto* s = new QSlider(Qt::Horizontal);
  s->setRange(lo, hi);
  return s;
}
}  // namespace

WhatIfTab::WhatIfTab(QWidget* parent) : QWidget(parent) {
  auto* outer = new QVBoxLayout(this);
  auto* intro = new QLabel(
      "Drag a slider: the analytical model re-predicts one iteration of the workload tab's plan "
      "(dp follows the GPU count; tp, pp and the global batch stay; cp, FP8 and the Megatron overlaps can be "
      "switched here).");
  intro->setWordWrap(true);
  outer->addWidget(intro);
  auto* grid = new QGridLayout;
  nodes_ = make_slider(1, 64);
  nvlink_ = make_slider(10, 400);
  nic_ = make_slider(10, 400);
  mbs_ = make_slider(1, 64);
  cp_ = make_slider(1, 32);
  cp_label_ = new QLabel;
  nodes_label_ = new QLabel;
  nvlink_label_ = new QLabel;
  nic_label_ = new QLabel;
  mbs_label_ = new QLabel;
  int row = 0;
  for (auto [s, l] : {std::pair{nodes_, nodes_label_}, std::pair{nvlink_, nvlink_label_}, std::pair{nic_, nic_label_},
                      std::pair{mbs_, mbs_label_}, std::pair{cp_, cp_label_}}) {
    l->setMinimumWidth(260);
    grid->addWidget(l, row, 0);
    grid->addWidget(s, row, 1);
    ++row;
  }
  outer->addLayout(grid);
  interference_ = new QCheckBox("Compute-communication interference (the calibration profile's measured factors)");
  interference_->setChecked(true);
  interference_->setToolTip(
      "On: while an NVLink collective overlaps compute, both slow down by the factors the profile's `interference` "
      "section measured, per kernel (a GEMM by its output size, a collective by the length of the kernels beside it). "
      "Off: overlapped communication is free. Without a profile section there is nothing to switch.");
  outer->addWidget(interference_);
  fp8_ = new QCheckBox("FP8 GEMMs (precision=fp8, Transformer Engine; the profile's fp8 rates or the datasheet's)");
  overlaps_ = new QCheckBox("Megatron-Core overlaps (overlap_grad_reduce, overlap_param_gather with ZeRO >= 1, "
                            "tp_comm_overlap with sp)");
  outer->addWidget(fp8_);
  outer->addWidget(overlaps_);
  gpudirect_ = new QCheckBox("GPUDirect RDMA (NICs read and write GPU memory; off: traffic between nodes is staged "
                             "through host memory)");
  gpudirect_->setChecked(true);
  gpudirect_->setToolTip(
      "Off: every transfer between nodes goes GPU -> PCIe -> host memory -> NIC and back down on the other side, as "
      "NCCL does without GPUDirect RDMA; the PCIe uplinks, host memory and NICs are shared by all of it "
      "(docs/cluster-format.md, gpudirect_rdma).");
  pcie_only_ = new QCheckBox("PCIe-only P2P (no NVLink: GPUs talk through PCIe switches, the root complex and UPI)");
  pcie_only_->setToolTip("The node without its NVLink links and NVSwitches, as a PCIe-only server of the same "
                         "layout: pairs under one switch go through it, others through the CPU or across sockets.");
  outer->addWidget(gpudirect_);
  outer->addWidget(pcie_only_);
  for (QCheckBox* c : {interference_, fp8_, overlaps_, gpudirect_, pcie_only_}) {
    connect(c, &QCheckBox::toggled, this, [this] {
      refresh_labels();
      if (!loading_) debounce_->start();
    });
  }
  result_ = new QLabel;
  result_->setWordWrap(true);
  result_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  QFont big = result_->font();
  big.setPointSizeF(big.pointSizeF() * 1.3);
  result_->setFont(big);
  outer->addWidget(result_);
  timing_ = new QLabel;
  outer->addWidget(timing_);
  outer->addStretch(1);
  debounce_ = new QTimer(this);
  debounce_->setSingleShot(true);
  debounce_->setInterval(60);
  connect(debounce_, &QTimer::timeout, this, &WhatIfTab::recompute_now);
  for (QSlider* s : {nodes_, nvlink_, nic_, mbs_, cp_}) {
    connect(s, &QSlider::valueChanged, this, [this] {
      refresh_labels();
      if (!loading_) debounce_->start();
    });
  }
}

void WhatIfTab::set_base(const Session& base) {
  base_ = base;
  loading_ = true;
  ClusterOptions one;
  one.nodes = 1;
  file_gpudirect_ = true;
  if (auto c = load_cluster_by_name_or_path(base.cluster, one)) {
    gpus_per_node_ = c->gpus_per_node();
    file_gpudirect_ = c->gpudirect_rdma();
  }
  const int nodes = base.nodes > 0 ? base.nodes : (base.plan.gpus() + gpus_per_node_ - 1) / gpus_per_node_;
  nodes_->setRange(1, std::max(64, 2 * nodes));  // room to double the session's cluster
  nodes_->setValue(std::max(nodes, 1));
  nvlink_->setValue(static_cast<int>(base.nvlink_scale * 100));
  nic_->setValue(static_cast<int>(base.nic_scale * 100));
  mbs_->setValue(base.plan.mbs);
  cp_->setValue(base.plan.cp);
  interference_->setChecked(base.interference);
  fp8_->setChecked(base.plan.fp8());
  overlaps_->setChecked(base.plan.overlap && (base.plan.overlap_param_gather || base.plan.tp_comm_overlap));
  gpudirect_->setChecked(base.gpudirect_rdma.value_or(file_gpudirect_));
  pcie_only_->setChecked(base.pcie_only_p2p);
  loading_ = false;
  refresh_labels();
}

Session WhatIfTab::scenario() const {
  Session s = base_;
  s.nodes = nodes_->value();
  s.plan.cp = cp_->value();
  const int model_parallel = s.plan.tp * s.plan.pp * s.plan.cp;
  s.plan.dp = std::max(1, s.nodes * gpus_per_node_ / model_parallel);
  s.plan.mbs = mbs_->value();
  if (fp8_->isChecked() != base_.plan.fp8()) s.plan.precision = fp8_->isChecked() ? models::Precision::fp8 : models::Precision::mixed;
  if (!s.plan.fp8()) {
    s.plan.fp8_params = false;
    s.plan.fp8_recipe = models::Fp8Recipe::delayed;
  }
  const bool overlaps = overlaps_->isChecked();
  s.plan.overlap = overlaps || base_.plan.overlap;
  s.plan.overlap_param_gather = overlaps && s.plan.zero >= 1;
  s.plan.tp_comm_overlap = overlaps && s.plan.sp;
  s.nvlink_scale = nvlink_->value() / 100.0;
  s.nic_scale = nic_->value() / 100.0;
  s.interference = interference_->isChecked();
  // Only a change from the file is an override, so that identity settings price the file as it is.
  s.gpudirect_rdma = gpudirect_->isChecked() == file_gpudirect_ ? std::nullopt : std::optional<bool>(gpudirect_->isChecked());
  s.pcie_only_p2p = pcie_only_->isChecked();
  s.fidelity = "analytical";
  return s;
}

void WhatIfTab::refresh_labels() {
  const Session s = scenario();
  nodes_label_->setText(QString("GPUs: %1 (%2 node(s) x %3), dp = %4")
                            .arg(s.nodes * gpus_per_node_)
                            .arg(s.nodes)
                            .arg(gpus_per_node_)
                            .arg(s.plan.dp));
  nvlink_label_->setText(QString("NVLink bandwidth: %1 %").arg(nvlink_->value()));
  nic_label_->setText(QString("NIC / fabric bandwidth: %1 %").arg(nic_->value()));
  mbs_label_->setText(QString("micro-batch size: %1 (gbs %2)").arg(s.plan.mbs).arg(s.plan.gbs));
  cp_label_->setText(QString("context parallel: cp = %1").arg(s.plan.cp));
}

QString WhatIfTab::result_text() const { return result_->text(); }

void WhatIfTab::recompute_now() {
  debounce_->stop();
  const Session s = scenario();
  QElapsedTimer timer;
  timer.start();
  QString text;
  auto in = cache_.get(s);
  if (!in) {
    text = "Cannot build this scenario: " + QString::fromStdString(in.error().str());
    last_step_s_ = 0;
  } else if (auto check = models::validate(s.plan, in->model, in->cluster->num_gpus()); !check) {
    text = "Invalid plan: " + QString::fromStdString(check.error().str());
    last_step_s_ = 0;
  } else if (auto p = predict(*in, "analytical", false); !p) {
    text = "Prediction failed: " + QString::fromStdString(p.error().str());
    last_step_s_ = 0;
  } else {
    last_step_s_ = p->step_time_s;
    const double gib = 1024.0 * 1024.0 * 1024.0;
    text = QString("step time %1 s\ntokens/s %2 (%3 per GPU)\nMFU %4 %\nmemory %5 / %6 GiB per GPU%7\n"
                   "exposed comm %8 s, bubble %9 s")
               .arg(p->step_time_s, 0, 'f', 4)
               .arg(p->tokens_per_s, 0, 'f', 0)
               .arg(p->tokens_per_s / s.plan.gpus(), 0, 'f', 0)
               .arg(100 * p->mfu, 0, 'f', 1)
               .arg(p->memory.total().value / gib, 0, 'f', 1)
               .arg(p->gpu_memory.value / gib, 0, 'f', 1)
               .arg(p->fits_memory ? "" : "  (DOES NOT FIT)")
               .arg(p->sim.breakdown.exposed_comm().value, 0, 'f', 4)
               .arg(p->sim.breakdown[BreakdownPart::bubble].value, 0, 'f', 4);
    if (s.gpudirect_rdma)
      text += *s.gpudirect_rdma ? QString("\nGPUDirect RDMA: on (what-if)")
                                : QString("\nGPUDirect RDMA: off (what-if): traffic between nodes staged through host memory");
    if (s.pcie_only_p2p) text += QString("\nPCIe-only P2P (what-if): no NVLink");
    const Interference& f = in->compute->interference();
    text += !s.interference ? QString("\ninterference: off")
            : in->compute->per_kernel_interference()
                ? QString("\ninterference: per kernel, from the profile's measured rows (medians: compute x%1, NVLink "
                          "communication x%2 while they overlap)")
                      .arg(f.compute_slowdown, 0, 'f', 3)
                      .arg(f.comm_slowdown, 0, 'f', 3)
            : f.active() ? QString("\ninterference: compute x%1, NVLink communication x%2 while they overlap")
                               .arg(f.compute_slowdown, 0, 'f', 3)
                               .arg(f.comm_slowdown, 0, 'f', 3)
                         : QString("\ninterference: none measured (no `interference` section in the profile)");
  }
  last_ms_ = static_cast<double>(timer.nsecsElapsed()) * 1e-6;
  result_->setText(text);
  timing_->setText(QString("update took %1 ms (inputs, cached per cluster size, + analytical simulation)%2")
                       .arg(last_ms_, 0, 'f', 1)
                       .arg(last_ms_ > 100 ? "  - over the 100 ms target" : ""));
  emit updated();
}

}  // namespace scalescope::gui
