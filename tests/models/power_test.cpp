// The power cap (docs/power.md): the profile `power` section fitted from a kernel sweep, the energy every kernel
// carries, and the rate a capped rank's tensor-core kernels run at. Expected values are worked out by hand in the
// comments from the numbers each test writes.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "datasheet_rig.hpp"
#include "model_fixtures.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::models {
namespace {

using testing::DatasheetRig;

// A sweep of an idle draw of 100 W and four kernels:
//   GEMM A, not capped: 1e12 FLOPs in 2 ms (5e14 FLOP/s), 500 W          -> 400 W above idle at 5e14
//   GEMM B, capped: 1e12 FLOPs, bursts of 1 ms (1e15 FLOP/s), sustained at 0.8 of them, 700 W
//                                                                        -> (700 - 100) / 0.8 = 750 W at 1e15
//   add, not capped: 4e9 bytes in 1 ms (4e12 B/s), 580 W                 -> 480 W at 4e12
//   layer norm, not capped: 2e9 bytes in 1 ms (2e12 B/s), 540 W          -> 440 W at 2e12
//   add of 1.2e7 bytes: under twice the sweep's L2 of 5e7 bytes, listed but not fitted
// gemm_bf16 through the two points: 350 W per 5e14 FLOP/s = 7e-13 J/FLOP, and 400 - 350 = 50 W; memory through its
// two: 40 W per 2e12 B/s = 2e-11 J/B, and 480 - 80 = 400 W; the capped draw is the one capped kernel's, 700 W.
Json sweep() {
  return Json::parse(R"J({"schema": "scalescope.power-sweep/1", "gpu": "NVIDIA H200", "torch": "2.11",
    "idle": {"power_W": 100.0}, "l2_bytes": 5e7,
    "kernels": [
      {"name": "bf16 GEMM a", "class": "gemm", "dtype": "bf16", "flops": 1e12, "bytes": 0, "burst_s": 0.002,
       "sustained_s": 0.002, "relative": 1.0, "power_W": 500.0, "cap_share": 0.0},
      {"name": "bf16 GEMM b", "class": "gemm", "dtype": "bf16", "flops": 1e12, "bytes": 0, "burst_s": 0.001,
       "sustained_s": 0.00125, "relative": 0.8, "power_W": 700.0, "cap_share": 1.0},
      {"name": "add 1 GiB", "class": "memory", "dtype": "bf16", "flops": 0, "bytes": 4e9, "burst_s": 0.001,
       "sustained_s": 0.001, "relative": 1.0, "power_W": 580.0, "cap_share": 0.0},
      {"name": "layer_norm 8192x4096", "class": "memory", "dtype": "bf16", "flops": 0, "bytes": 2e9, "burst_s": 0.001,
       "sustained_s": 0.001, "relative": 1.0, "power_W": 540.0, "cap_share": 0.0},
      {"name": "add 4 MiB", "class": "memory", "dtype": "bf16", "flops": 0, "bytes": 1.2e7, "burst_s": 1e-5,
       "sustained_s": 1e-5, "relative": 1.0, "power_W": 200.0, "cap_share": 0.0},
      {"name": "fp8 GEMM broken", "class": "gemm", "dtype": "fp8", "error": "RuntimeError('no fp8')"}]})J");
}

// A power_mix.py file whose GEMM runs at 1e15 FLOP/s in bursts (800 TFLOP/s at 0.8 of them alone) and whose add moves
// 4e12 B/s. At G = 0.5, per second of burst time: 0.5 (50 + 7e-13 x 1e15) + 0.5 (400 + 2e-11 x 4e12) = 375 + 240 = 615 J;
// the capped draw leaves 600 W above idle, so the mix takes 615 / 600 = 1.025 s, of which 0.5 is the add's: the GEMM
// runs at 0.5 / 0.525 = 0.95238 of its bursts. Alone: 750 / 600 = 1.25 s, a rate of 0.8.
Json mix() {
  return Json::parse(R"({"gpu": "NVIDIA H200", "gemm": "8192x4096 @ 4096x16384 bf16",
    "mixes": [{"gemm_share": 1.0, "gemm_TFLOPS": 800.0, "gemm_relative_to_bursts": 0.8, "power_W_median": 700.0},
              {"gemm_share": 0.5, "gemm_TFLOPS": 900.0, "gemm_relative_to_bursts": 0.9, "power_W_median": 700.0},
              {"gemm_share": 0.0, "gemm_TFLOPS": null, "gemm_relative_to_bursts": null, "add_GBps": 4000.0,
               "power_W_median": 580.0}]})");
}

TEST(PowerSection, FitsEachClassOnTheSweepAndChecksTheMixes) {
  auto section = make_power_section({{sweep(), "sweep.json"}, {mix(), "mix.json"}}, "");
  ASSERT_TRUE(section.has_value()) << section.error().str();
  const Json& s = *section;
  EXPECT_DOUBLE_EQ(s["idle_w"].get<double>(), 100.0);
  EXPECT_DOUBLE_EQ(s["capped_w"].get<double>(), 700.0);
  EXPECT_NEAR(s["classes"]["gemm_bf16"]["watts"].get<double>(), 50.0, 1e-9);
  EXPECT_NEAR(s["classes"]["gemm_bf16"]["joules_per_unit"].get<double>(), 7e-13, 1e-24);
  EXPECT_NEAR(s["classes"]["memory"]["watts"].get<double>(), 400.0, 1e-9);
  EXPECT_NEAR(s["classes"]["memory"]["joules_per_unit"].get<double>(), 2e-11, 1e-22);
  EXPECT_EQ(s["classes"]["memory"]["kernels"].size(), 2u);  // the add in L2 is listed, not fitted
  EXPECT_FALSE(s["classes"].contains("gemm_fp8"));         // its one kernel failed on the lease
  bool small_listed = false;
  for (const Json& k : s["kernels"]) small_listed = small_listed || (k["name"] == "add 4 MiB" && !k["fitted"]);
  EXPECT_TRUE(small_listed);
  ASSERT_EQ(s["checks"].size(), 2u);
  EXPECT_NEAR(s["checks"][0]["modelled"].get<double>(), 0.8, 1e-12);
  EXPECT_NEAR(s["checks"][1]["modelled"].get<double>(), 0.5 / 0.525, 1e-12);
  EXPECT_DOUBLE_EQ(s["checks"][1]["measured"].get<double>(), 0.9);

  // The section reads back as the model's parameters.
  auto profile = with_profile_section(Json{{"schema", "scalescope.calibration/1"}}, "power", s, "p.json");
  ASSERT_TRUE(profile.has_value()) << profile.error().str();
  auto back = compute_profile_from_json(*profile, "p.json");
  ASSERT_TRUE(back.has_value()) << back.error().str();
  ASSERT_TRUE(back->power.has_value());
  EXPECT_NEAR(back->power->gemm_bf16.watts, 50.0, 1e-9);
  EXPECT_EQ(back->power->gemm_bf16.kernels, 2);
  EXPECT_FALSE(back->power->gemm_fp8.measured());
}

TEST(PowerSection, RefusesWhatCannotBeModelled) {
  auto no_sweep = make_power_section({{mix(), "mix.json"}}, "");
  ASSERT_FALSE(no_sweep.has_value());
  EXPECT_NE(no_sweep.error().str().find("expected a power sweep"), std::string::npos) << no_sweep.error().str();

  Json cool = sweep();
  for (Json& k : cool["kernels"]) k["cap_share"] = 0.0;
  auto uncapped = make_power_section({{cool, "sweep.json"}}, "");
  ASSERT_FALSE(uncapped.has_value());
  EXPECT_NE(uncapped.error().str().find("sweep.json: $.kernels: expected a kernel at the power cap"), std::string::npos)
      << uncapped.error().str();

  const Json good = make_power_section({{sweep(), "sweep.json"}}, "").value();
  auto refused = [&](const std::function<void(Json&)>& edit, const std::string& says) {
    Json p = {{"schema", "scalescope.calibration/1"}, {"power", good}};
    edit(p["power"]);
    auto r = compute_profile_from_json(p, "p.json");
    ASSERT_FALSE(r.has_value()) << says;
    EXPECT_NE(r.error().str().find(says), std::string::npos) << r.error().str();
  };
  refused([](Json& s) { s["capped_w"] = 90.0; }, "$.power.capped_w: expected more than idle_w=100");
  refused([](Json& s) { s["classes"].erase("memory"); }, "$.power.classes: missing required key 'memory'");
  refused([](Json& s) { s["classes"]["memory"]["unit"] = "FLOP"; }, "$.power.classes.memory.unit: expected \"byte\"");
  refused([](Json& s) { s["classes"]["gemm_bf16"]["watts"] = -1.0; }, "$.power.classes.gemm_bf16.watts");
  refused([](Json& s) { s["classes"]["gemm_int4"] = s["classes"]["gemm_bf16"]; }, "gemm_int4");
}

// The shipped power profiles are what import-power makes of the sweeps they name: refitting each committed sweep gives
// the shipped idle and capped draws and every class's two numbers (the checks, power_mix.py files, do not enter the
// fit). A change to the fit that would change a shipped profile fails here until the profile is re-imported.
TEST(PowerSection, TheShippedProfilesAreTheFitsOfTheirCommittedSweeps) {
  const std::string root = SCALESCOPE_SOURCE_DIR;
  const std::pair<const char*, const char*> shipped[] = {
      {"calibrate/profiles/h200-power.json", "validation/session34/sweep34x/sweep-extended.json"},  // session 35's fit
      {"calibrate/profiles/h100-power.json", "validation/session37/h100/sweep-extended.json"},     // session 37
  };
  for (const auto& [profile, sweep_file] : shipped) {
    SCOPED_TRACE(profile);
    auto doc = read_json_file(root + "/" + profile);
    auto sweep_doc = read_json_file(root + "/" + sweep_file);
    ASSERT_TRUE(doc.has_value() && sweep_doc.has_value());
    auto refit = make_power_section({{*sweep_doc, sweep_file}}, "");
    ASSERT_TRUE(refit.has_value()) << refit.error().str();
    const Json& ship = (*doc)["power"];
    EXPECT_NEAR((*refit)["idle_w"].get<double>(), ship["idle_w"].get<double>(), 1e-9);
    EXPECT_NEAR((*refit)["capped_w"].get<double>(), ship["capped_w"].get<double>(), 1e-9);
    ASSERT_EQ((*refit)["classes"].size(), ship["classes"].size());
    for (const auto& [name, c] : ship["classes"].items()) {
      ASSERT_TRUE((*refit)["classes"].contains(name)) << name;
      const Json& r = (*refit)["classes"][name];
      EXPECT_NEAR(r["watts"].get<double>(), c["watts"].get<double>(), 1e-6) << name;
      EXPECT_NEAR(r["joules_per_unit"].get<double>(), c["joules_per_unit"].get<double>(),
                  1e-9 * c["joules_per_unit"].get<double>())
          << name;
    }
  }
}

PowerModel model_of(double idle, double capped) {
  PowerModel pm;
  pm.idle_w = idle;
  pm.capped_w = capped;
  pm.gemm_bf16 = {50.0, 7e-13, 2};
  pm.memory = {0.0, 1.2e-10, 1};
  pm.source = "test";
  return pm;
}

// One rank, one task of 1 s whose tensor-core kernels take 0.8 s and whose kernels take 700 J: with 500 W of headroom
// (capped 600 - idle 100) the work needs 700 / 500 = 1.4 s, the other 0.2 s stays, so the tensor kernels stretch to
// 1.2 s: a rate of 0.8 / 1.2 = 2/3, and the task takes 1.4 s. Before, it drew 100 + 700 = 800 W; after, 100 + 700 / 1.4
// = 600 W, the cap.
TEST(PowerCap, StretchesTheTensorKernelsOfACappedRankToTheCap) {
  TaskGraph g;
  const TaskId t = g.add_compute(0, 0, TaskCategory::forward, "layer", Seconds(1.0));
  g.set_power(t, 700.0, 0.8);
  SimResult sim;
  sim.critical_rank = 0;
  RankStats rs;
  rs.rank = 0;
  rs.breakdown.total = Seconds(1.0);
  sim.ranks = {rs};
  const PowerCapEstimate est = apply_power_cap(g, sim, model_of(100.0, 600.0));
  EXPECT_TRUE(est.modelled);
  EXPECT_EQ(est.capped_ranks, 1);
  EXPECT_NEAR(est.tensor_rate, 2.0 / 3.0, 1e-12);
  EXPECT_NEAR(est.uncapped_draw_w, 800.0, 1e-9);
  EXPECT_NEAR(est.draw_w, 600.0, 1e-9);
  EXPECT_NEAR(est.working_s, 1.0, 1e-12);  // the whole step: no idle bubble
  EXPECT_NEAR(g.task(t).duration().value, 1.4, 1e-12);

  // 400 J in the same second draw 500 W: under the cap, nothing changes.
  TaskGraph cool;
  const TaskId u = cool.add_compute(0, 0, TaskCategory::forward, "layer", Seconds(1.0));
  cool.set_power(u, 400.0, 0.8);
  const PowerCapEstimate none = apply_power_cap(cool, sim, model_of(100.0, 600.0));
  EXPECT_EQ(none.capped_ranks, 0);
  EXPECT_DOUBLE_EQ(none.tensor_rate, 1.0);
  EXPECT_DOUBLE_EQ(cool.task(u).duration().value, 1.0);

  // An idle bubble does not lower the draw the cap sees: with 0.5 s of it the working time is still 1 s.
  sim.ranks[0].breakdown.total = Seconds(1.5);
  sim.ranks[0].breakdown[BreakdownPart::bubble] = Seconds(0.5);
  TaskGraph again;
  const TaskId v = again.add_compute(0, 0, TaskCategory::forward, "layer", Seconds(1.0));
  again.set_power(v, 700.0, 0.8);
  EXPECT_NEAR(apply_power_cap(again, sim, model_of(100.0, 600.0)).tensor_rate, 2.0 / 3.0, 1e-12);
}

// Kernels carry their class's energy: a bf16 GEMM of t seconds and F FLOPs 50 t + 7e-13 F; a memory-bound kernel of
// B bytes 1.2e-10 B; without a power model nothing.
TEST(PowerCap, KernelsCarryTheirClassEnergy) {
  const GpuSpec gpu = load_cluster_by_name_or_path("hgx-h200-8").value().gpu_spec();
  ComputeProfile prof;
  prof.source = "test";
  prof.power = model_of(100.0, 600.0);
  const ComputeModel with = ComputeModel::with_profile(gpu, prof).value();
  const KernelCost g = with.gemm(4096, 4096, 4096, "bf16");
  EXPECT_TRUE(g.tensor);
  EXPECT_NEAR(g.energy, 50.0 * g.time.value + 7e-13 * 2.0 * 4096.0 * 4096.0 * 4096.0, 1e-9 * g.energy);
  const KernelCost m = with.memory_bound(Bytes(1e9));
  EXPECT_FALSE(m.tensor);
  EXPECT_NEAR(m.energy, 1.2e-10 * 1e9, 1e-12);
  const ComputeModel without = ComputeModel::datasheet(gpu).value();
  EXPECT_DOUBLE_EQ(without.gemm(4096, 4096, 4096, "bf16").energy, 0.0);
}

// On one GPU every compute task is on the critical path, so the capped step is the step at the profile's rates plus
// the tensor time x (1 / r - 1), r the estimate's rate: checked against the graph's own sums.
TEST(PowerCap, APredictionAtTheCapStretchesItsStepByTheTensorTime) {
  DatasheetRig rig(load_cluster_by_name_or_path("hgx-h200-8").value());
  ComputeProfile prof;
  prof.source = "test";
  prof.power = model_of(100.0, 500.0);  // a low cap, so that the step reaches it
  const ComputeModel compute = ComputeModel::with_profile(rig.cluster.gpu_spec(), prof).value();
  const ModelSpec m = testing::catalog("llama3-8b");
  const Plan p = testing::plan("tp=1,pp=1,dp=1,mbs=1,gbs=2,precision=bf16");
  PredictOptions off;
  off.power_cap = false;
  const Prediction burst = predict(m, p, rig.cluster, rig.coll, compute, off).value();
  const Prediction capped = predict(m, p, rig.cluster, rig.coll, compute).value();
  EXPECT_FALSE(burst.power.modelled);
  ASSERT_TRUE(capped.power.modelled);
  ASSERT_LT(capped.power.tensor_rate, 1.0);
  double tensor = 0.0;
  for (TaskId t = 0; t < burst.graph.size(); ++t) tensor += burst.graph.power(t).tensor_s;
  ASSERT_GT(tensor, 0.0);
  EXPECT_NEAR(capped.step_time_s, burst.step_time_s + tensor * (1.0 / capped.power.tensor_rate - 1.0),
              1e-6 * capped.step_time_s);
  EXPECT_NEAR(capped.power.draw_w, 500.0, 1e-6 * 500.0);
}

}  // namespace
}  // namespace scalescope::models
