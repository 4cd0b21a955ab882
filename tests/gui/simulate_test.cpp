// Simulate flow: the GUI shows the step time the library computes for the same inputs; the what-if
// tab at identity settings agrees; timeline and cluster view are filled from the same run.
#include <QCheckBox>
#include <QSlider>
#include <QtTest>

#include "scalescope/calibrate/hardware.hpp"
#include "scalescope/gui/cluster_view.hpp"
#include "scalescope/gui/error_reporter.hpp"
#include "scalescope/gui/main_window.hpp"
#include "scalescope/gui/simulation_tab.hpp"
#include "scalescope/gui/timeline_widget.hpp"
#include "scalescope/gui/whatif_tab.hpp"
#include "scalescope/gui/workload_tab.hpp"
#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/predict.hpp"

using namespace scalescope;
using namespace scalescope::gui;

namespace {
Session llama_session() {
  Session s;
  s.model = "llama3-8b";
  s.cluster = "hgx-h200-8";
  s.plan = Session::default_plan();  // tp=8, gbs=8 on one 8-GPU node
  return s;
}

/// A flow-fidelity session: `model` on `nodes` nodes of `cluster`, the default plan with these tp, pp, dp and gbs.
Session flow_session(const char* model, const char* cluster, int nodes, int tp, int pp, int dp, int gbs) {
  Session s;
  s.model = model;
  s.cluster = cluster;
  s.nodes = nodes;
  s.plan = Session::default_plan();
  s.plan.tp = tp;
  s.plan.pp = pp;
  s.plan.dp = dp;
  s.plan.gbs = gbs;
  s.fidelity = "flow";
  return s;
}

/// The step time as `scalescope simulate --model llama3-8b --cluster hgx-h200-8 --plan tp=8,gbs=8`
/// computes it: the library calls of cli/cmd_simulate.cpp with datasheet inputs, written out here
/// without the GUI's code.
double library_step_time() {
  auto model = models::load_model_by_name_or_path("llama3-8b");
  auto plan = models::parse_plan("tp=8,pp=1,dp=1,mbs=1,gbs=8");
  ClusterOptions copt;
  copt.gpus = 8;
  auto cluster = load_cluster_by_name_or_path("hgx-h200-8", copt);
  if (!model || !plan || !cluster) return -1;
  // No calibration chosen in the session: as `simulate` without --calibration, the profile shipped for the
  // cluster's GPU (calibrate/gpu-defaults.json) and the datasheet link model.
  auto hw = calib::load_hardware_models("", *cluster);
  if (!hw) return -1;
  const models::ComputeModel* compute = &hw->compute;
  const CollectiveModel collectives(*cluster, hw->params);
  models::PredictOptions po;
  po.build.costs.flash_attention = true;
  po.build.costs.dropout = false;
  auto p = models::predict(*model, *plan, *cluster, collectives, *compute, po);
  return p ? p->step_time_s : -1;
}
}  // namespace

class SimulateTest : public QObject {
  Q_OBJECT
 private slots:
  void gui_step_time_equals_library_call() {
    MainWindow w(false);
    w.workload()->set_session(llama_session());
    QVERIFY2(w.simulate(), qPrintable(w.errors()->last()));
    const double expected = library_step_time();
    QVERIFY(expected > 0);
    QCOMPARE(w.simulation()->shown_step_time_s(), expected);  // same inputs, deterministic simulator
    QVERIFY(w.simulation()->metrics_text().contains(QString::number(expected, 'f', 4)));
  }

  void timeline_and_cluster_view_are_filled() {
    MainWindow w(false);
    Session s = llama_session();
    s.plan.tp = 4;
    s.plan.pp = 2;  // 32 layers % 2 == 0, 32 heads % 4 == 0: valid on 8 GPUs
    w.workload()->set_session(s);
    QVERIFY2(w.simulate(), qPrintable(w.errors()->last()));
    // Symmetric analytical run: one representative pipeline = 2 ranks (stage 0 and stage 1), each
    // with at least its compute stream, so at least 2 rows; every task that ran is one bar.
    QVERIFY(w.simulation()->timeline()->rows() >= 2);
    QVERIFY(!w.simulation()->timeline()->bars().empty());
    // hgx-h200-8 with 8 GPUs is one node (not more than 4 nodes: drawn expanded).
    QVERIFY(!w.cluster_view()->collapsed());
    // The rank picker: the last stage's rank alone (Megatron order, tp innermost: rank tp x dp = 4), then a rank
    // that did not run, then a malformed list.
    SimulationTab* tab = w.simulation();
    const int rows_all = tab->timeline()->rows();
    QCOMPARE(tab->timeline()->shown_ranks(), (std::vector<int>{0, 4}));
    QVERIFY(tab->show_ranks("4"));
    QCOMPARE(tab->timeline()->shown_ranks(), std::vector<int>{4});
    QVERIFY(tab->timeline()->rows() >= 1 && tab->timeline()->rows() < rows_all);
    QVERIFY(tab->ranks_status().contains("showing 1 of the"));
    QVERIFY(!tab->show_ranks("7000"));
    QVERIFY(tab->ranks_status().contains("none of these ranks ran"));
    QVERIFY(!tab->show_ranks("1-"));
    QVERIFY(tab->ranks_status().contains("not a rank"));
    QVERIFY(tab->show_ranks(""));  // back to the default
    QCOMPARE(tab->timeline()->rows(), rows_all);
  }

  void whatif_at_identity_matches_simulation() {
    MainWindow w(false);
    w.workload()->set_session(llama_session());
    QVERIFY(w.simulate());
    // simulate() hands the session to the what-if tab: 1 node x 8 GPUs, tp*pp = 8 -> dp = 1, scales
    // 100 %, mbs 1: the same plan and cluster, so the same analytical step time.
    QCOMPARE(w.whatif()->last_step_time_s(), w.simulation()->shown_step_time_s());
  }

  void whatif_fp8_and_context_parallel_match_the_library() {
    MainWindow w(false);
    w.workload()->set_session(llama_session());
    QVERIFY(w.simulate());
    // cp = 2 on the same node: tp 8 x cp 2 needs 16 GPUs, two nodes; FP8 GEMMs. The what-if result must be the
    // library's prediction of the same plan.
    w.whatif()->nodes_slider()->setValue(2);
    w.whatif()->cp_slider()->setValue(2);
    w.whatif()->fp8_box()->setChecked(true);
    w.whatif()->recompute_now();
    const double shown = w.whatif()->last_step_time_s();
    QVERIFY2(shown > 0, qPrintable(w.whatif()->result_text()));
    auto model = models::load_model_by_name_or_path("llama3-8b");
    auto plan = models::parse_plan("tp=8,cp=2,dp=1,mbs=1,gbs=8,precision=fp8");
    ClusterOptions copt;
    copt.nodes = 2;
    auto cluster = load_cluster_by_name_or_path("hgx-h200-8", copt);
    QVERIFY(model && plan && cluster);
    auto hw = calib::load_hardware_models("", *cluster);  // no calibration chosen: the shipped H200 profile
    QVERIFY2(hw.has_value(), hw ? "" : hw.error().str().c_str());
    const CollectiveModel collectives(*cluster, hw->params);
    models::PredictOptions po;
    po.build.costs.flash_attention = true;
    po.build.costs.dropout = false;
    auto p = models::predict(*model, *plan, *cluster, collectives, hw->compute, po);
    QVERIFY2(p.has_value(), p ? "" : p.error().str().c_str());
    QCOMPARE(shown, p->step_time_s);
  }

  void whatif_faster_nvlink_does_not_slow_the_step() {
    MainWindow w(false);
    w.workload()->set_session(llama_session());
    QVERIFY(w.simulate());
    const double base = w.whatif()->last_step_time_s();
    // tp=8 all-reduces run on NVLink: more NVLink bandwidth can only shorten or keep them.
    w.whatif()->nvlink_slider()->setValue(400);
    w.whatif()->recompute_now();
    QVERIFY2(w.whatif()->last_step_time_s() > 0, qPrintable(w.whatif()->result_text()));
    QVERIFY(w.whatif()->last_step_time_s() < base);
    w.whatif()->nvlink_slider()->setValue(10);
    w.whatif()->recompute_now();
    QVERIFY(w.whatif()->last_step_time_s() > base);
  }

  void whatif_interference_switch_matches_the_library() {
    // llama-1b (the harness's model) with ZeRO-3 on 4 H200s, h200x4 profile: FSDP's all-gathers and
    // reduce-scatters overlap compute on NVLink, so the profile's measured interference slows the step.
    // Checked on, the what-if step time is the library's default prediction; unchecked, the library's
    // prediction with the interference switched off (PredictOptions::interference = none).
    MainWindow w(false);
    Session s;
    s.model = SCALESCOPE_SOURCE_DIR "/validation/models/llama-1b.json";
    s.cluster = "hgx-h200-4";
    s.calibration = "h200x4";
    s.plan = models::parse_plan("tp=1,pp=1,dp=4,zero=3,mbs=1,gbs=16,recompute=none").value();
    w.workload()->set_session(s);
    QVERIFY2(w.simulate(), qPrintable(w.errors()->last()));
    QVERIFY(w.whatif()->interference_box()->isChecked());
    const double on = w.whatif()->last_step_time_s();
    QVERIFY2(w.whatif()->result_text().contains("interference: per kernel"), qPrintable(w.whatif()->result_text()));
    w.whatif()->interference_box()->setChecked(false);
    w.whatif()->recompute_now();
    const double off = w.whatif()->last_step_time_s();
    QVERIFY(w.whatif()->result_text().contains("interference: off"));
    QVERIFY2(off < on, qPrintable(QString("off %1, on %2").arg(off).arg(on)));

    InputsCache cache;
    Session base = w.whatif()->scenario();
    base.interference = true;
    auto in = cache.get(base);
    QVERIFY2(in.has_value(), in ? "" : in.error().str().c_str());
    const CollectiveModel collectives(*in->cluster, in->params);
    models::PredictOptions po;
    po.build.costs.flash_attention = true;
    po.build.costs.dropout = false;
    auto with = models::predict(in->model, in->plan, *in->cluster, collectives, *in->compute, po);
    po.interference = Interference{};
    auto without = models::predict(in->model, in->plan, *in->cluster, collectives, *in->compute, po);
    QVERIFY(with && without);
    QCOMPARE(on, with->step_time_s);
    QCOMPARE(off, without->step_time_s);
  }

  void window_handles_events_while_a_run_is_in_progress() {
    // A flow-fidelity run of every rank (llama3-8b, tp=2 pp=2 dp=4 over 2 nodes of hgx-h200-8). A
    // zero-time timer posted before simulate() is delivered by the event loop simulate() runs while it
    // waits (posted before the run's own finished() notice, so whatever the run's length): it must see
    // the run in progress, and a second simulate() made from it must be refused without starting
    // anything; the first run then completes normally.
    MainWindow w(false);
    w.workload()->set_session(flow_session("llama3-8b", "hgx-h200-8", 2, 2, 2, 4, 64));
    bool fired = false, busy_seen = false, second = true;
    QTimer::singleShot(0, &w, [&] {
      fired = true;
      busy_seen = w.simulating();
      second = w.simulate();
    });
    QVERIFY2(w.simulate(), qPrintable(w.errors()->last()));
    QVERIFY(fired);
    QVERIFY(busy_seen);
    QVERIFY(!second);
    QVERIFY(!w.simulating());
    QVERIFY(w.simulation()->shown_step_time_s() > 0);
  }

  void a_long_run_reports_progress_and_can_be_cancelled() {
    // First a quick run, whose results must stay shown; then flow-fidelity runs of every rank of llama3-70b on 512
    // GPUs of h100-rail-ndr (about 2 s of simulation on the 2-core build machine).
    MainWindow w(false);
    w.workload()->set_session(llama_session());
    QVERIFY(w.simulate());
    const double before = w.simulation()->shown_step_time_s();
    w.workload()->set_session(flow_session("llama3-70b", "h100-rail-ndr", 64, 4, 4, 32, 1024));
    // Progress, polled every 10 ms while the run goes: tasks done never exceed the graph's tasks, and the graph's
    // size is known once the simulation starts.
    QTimer poll;
    std::uint64_t max_total = 0;
    bool ordered = true;
    connect(&poll, &QTimer::timeout, &w, [&] {
      const auto [done, total] = w.simulation_progress();
      max_total = std::max(max_total, total);
      ordered = ordered && done <= total;
    });
    poll.start(10);
    QVERIFY2(w.simulate(), qPrintable(w.errors()->last()));
    poll.stop();
    QVERIFY(ordered);
    QVERIFY(max_total > 0);
    const double full = w.simulation()->shown_step_time_s();
    QVERIFY(full > 0 && full != before);
    // Cancelled from the event loop simulate() runs while it waits: simulate() returns false, nothing is
    // reported as an error, and the previous results stay.
    const QString last_error = w.errors()->last();
    bool seen_running = false;
    QTimer::singleShot(0, &w, [&] {
      seen_running = w.simulating();
      w.cancel_simulation();
    });
    QVERIFY(!w.simulate());
    QVERIFY(seen_running);
    QVERIFY(!w.simulating());
    QCOMPARE(w.simulation()->shown_step_time_s(), full);
    QCOMPARE(w.errors()->last(), last_error);
    QCOMPARE(w.simulation_progress(), (std::pair<std::uint64_t, std::uint64_t>{0, 0}));
  }

  void bad_model_shows_error_without_crashing() {
    MainWindow w(false);
    Session s = llama_session();
    s.model = "no-such-model";
    w.workload()->set_session(s);
    QVERIFY(!w.simulate());
    QVERIFY(w.errors()->last().contains("no-such-model"));
  }
};

QTEST_MAIN(SimulateTest)
#include "simulate_test.moc"
