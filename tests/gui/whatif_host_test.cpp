// What-if switches for host paths: GPUDirect RDMA off slows a multi-node step and PCIe-only P2P
// slows a tensor-parallel step, and each shown step equals the library's prediction of the same
// cluster file edited by hand (the key set or the NVLink links removed here, without the GUI's
// code).
#include <QCheckBox>
#include <QSlider>
#include <QtTest>
#include <functional>

#include "scalescope/calibrate/hardware.hpp"
#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/gui/main_window.hpp"
#include "scalescope/gui/whatif_tab.hpp"
#include "scalescope/gui/workload_tab.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/sim/data_files.hpp"

using namespace scalescope;
using namespace scalescope::gui;

namespace {

/// The step time of `plan` on hgx-h200-8 (edited by `edit`) at `nodes` nodes, as `scalescope
/// simulate` computes it with no --calibration (the shipped H200 profile for the GPU, the datasheet
/// link model).
double library_step(const std::string& plan_text, int nodes,
                    const std::function<void(Json&)>& edit) {
  const auto file = find_data_file("topologies", "hgx-h200-8");
  if (!file) return -1;
  auto doc = read_json_file(file->path);
  if (!doc) return -1;
  edit(*doc);
  ClusterOptions copt;
  copt.nodes = nodes;
  auto cluster = cluster_from_json(*doc, "edited", copt);
  auto model = models::load_model_by_name_or_path("llama3-8b");
  auto plan = models::parse_plan(plan_text);
  if (!cluster || !model || !plan) return -1;
  auto hw = calib::load_hardware_models("", *cluster);
  if (!hw) return -1;
  const CollectiveModel collectives(*cluster, hw->params);
  models::PredictOptions po;
  po.build.costs.flash_attention = true;
  po.build.costs.dropout = false;
  auto p = models::predict(*model, *plan, *cluster, collectives, hw->compute, po);
  return p ? p->step_time_s : -1;
}

Session session(int tp, int dp, int gbs) {
  Session s;
  s.model = "llama3-8b";
  s.cluster = "hgx-h200-8";
  s.plan = Session::default_plan();
  s.plan.tp = tp;
  s.plan.dp = dp;
  s.plan.gbs = gbs;
  return s;
}

}  // namespace

class WhatIfHostTest : public QObject {
  Q_OBJECT
 private slots:
  void gpudirect_rdma_off_slows_a_multi_node_step_as_the_library_predicts() {
    // tp=8 inside each node, dp=2 across two nodes: the gradient all-reduce crosses the fabric.
    MainWindow w(false);
    w.workload()->set_session(session(8, 2, 16));
    QVERIFY2(w.simulate(), qPrintable(w.errors()->last()));
    QVERIFY(
        w.whatif()->gpudirect_box()->isChecked());  // hgx-h200-8 has GPUDirect RDMA (the default)
    w.whatif()->recompute_now();
    const double on = w.whatif()->last_step_time_s();
    QVERIFY2(on > 0, qPrintable(w.whatif()->result_text()));
    w.whatif()->gpudirect_box()->setChecked(false);
    w.whatif()->recompute_now();
    const double off = w.whatif()->last_step_time_s();
    QVERIFY2(off > on, qPrintable(w.whatif()->result_text()));
    QCOMPARE(on, library_step("tp=8,dp=2,mbs=1,gbs=16", 2, [](Json&) {}));
    QCOMPARE(off, library_step("tp=8,dp=2,mbs=1,gbs=16", 2,
                               [](Json& d) { d["node"]["gpudirect_rdma"] = false; }));
    QVERIFY(w.whatif()->result_text().contains("GPUDirect RDMA: off"));
  }

  void pcie_only_p2p_slows_tensor_parallel_as_the_library_predicts() {
    MainWindow w(false);
    w.workload()->set_session(session(8, 1, 8));
    QVERIFY2(w.simulate(), qPrintable(w.errors()->last()));
    const double nvlink = w.whatif()->last_step_time_s();
    w.whatif()->pcie_only_box()->setChecked(true);
    w.whatif()->recompute_now();
    const double pcie = w.whatif()->last_step_time_s();
    QVERIFY2(pcie > nvlink, qPrintable(w.whatif()->result_text()));
    const double expected = library_step("tp=8,dp=1,mbs=1,gbs=8", 1, [](Json& d) {
      Json kept = Json::array();
      for (const auto& l : d["node"]["links"])
        if (l["kind"] != "nvlink")
          kept.push_back(l);  // hgx-h200-8: only the GPU-NVSwitch links are NVLink
      d["node"]["links"] = kept;
      d["node"].erase("nvswitches");
    });
    QCOMPARE(pcie, expected);
  }
};

QTEST_MAIN(WhatIfHostTest)
#include "whatif_host_test.moc"
