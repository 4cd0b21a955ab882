// Scaling curves: grouping of measured runs, speedups, errors and fits.
#include <gtest/gtest.h>

#include "scalescope/planner/capacity.hpp"
#include "scalescope/planner/scaling.hpp"

using namespace scalescope;
using namespace scalescope::planner;

namespace {

MeasuredRun run(const std::string& family, int gpus, int gbs, double t, ScalingKind kind = ScalingKind::strong) {
  MeasuredRun r;
  r.file = family + std::to_string(gpus);
  r.model.name = "m";
  r.plan.dp = gpus;
  r.plan.gbs = gbs;
  r.plan.mbs = 1;
  r.cluster = "c";
  r.gpus = gpus;
  r.family = family;
  r.scaling = kind;
  r.step_time_s = t;
  return r;
}

}  // namespace

TEST(ScalingCurves, StrongCurveUsesSingleGpuBaseAndRecoversAmdahl) {
  // Step times made with s = 0.1 and T(1) = 1 s: T(n) = 0.1 + 0.9 / n -> T(2) = 0.55, T(4) = 0.325.
  // Speedup at 4 = 1 / 0.325 = 3.0769, efficiency = 3.0769 / 4 = 0.76923. Predicted = 1.1 x
  // measured everywhere: error +10 %, same speedups, same s.
  std::vector<MeasuredRun> runs{run("single", 1, 16, 1.0), run("ddp", 2, 16, 0.55), run("ddp", 4, 16, 0.325)};
  auto curves = group_curves(runs);
  ASSERT_EQ(curves.size(), 1u);
  auto& c = curves[0];
  ASSERT_EQ(c.points.size(), 3u);
  EXPECT_EQ(c.points[0].gpus, 1);
  for (auto& p : c.points) p.predicted_s = 1.1 * *p.measured_s;
  finish_curve(c);
  EXPECT_EQ(c.base_gpus, 1);
  EXPECT_NEAR(*c.points[2].measured_speedup, 1.0 / 0.325, 1e-12);
  EXPECT_NEAR(*c.points[2].measured_efficiency, 1.0 / 0.325 / 4.0, 1e-12);
  EXPECT_NEAR(*c.points[1].error, 0.1, 1e-12);
  ASSERT_TRUE(c.measured_fit && c.predicted_fit);
  EXPECT_NEAR(c.measured_fit->serial_fraction, 0.1, 1e-12);
  EXPECT_NEAR(c.predicted_fit->serial_fraction, 0.1, 1e-12);
}

TEST(ScalingCurves, WeakCurveUsesThroughputRatioAndGustafson) {
  // Per-GPU batch 2: gbs = 2n. Times made with Gustafson s = 0.2: scaled speedup S(n) = n - 0.2 (n - 1)
  // = throughput ratio (2n / T(n)) / (2 / T(1)) with T(1) = 1 -> T(n) = n / S(n): T(2) = 2/1.8, T(4) = 4/3.4.
  std::vector<MeasuredRun> runs{run("single", 1, 2, 1.0, ScalingKind::weak),
                                run("ddp", 2, 4, 2.0 / 1.8, ScalingKind::weak),
                                run("ddp", 4, 8, 4.0 / 3.4, ScalingKind::weak)};
  auto curves = group_curves(runs);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].batch, 2);
  finish_curve(curves[0]);
  EXPECT_NEAR(*curves[0].points[2].measured_speedup, 3.4, 1e-12);
  ASSERT_TRUE(curves[0].measured_fit);
  EXPECT_NEAR(curves[0].measured_fit->serial_fraction, 0.2, 1e-12);
  EXPECT_FALSE(curves[0].predicted_fit);  // nothing predicted yet
}

TEST(ScalingCurves, DifferentGlobalBatchesAreDifferentCurves) {
  // gbs 16 and gbs 8 strong runs: two curves; the single-GPU run (gbs 16) joins only the first.
  std::vector<MeasuredRun> runs{run("single", 1, 16, 1.0), run("ddp", 2, 16, 0.55), run("ddp", 2, 8, 0.3)};
  auto curves = group_curves(runs);
  ASSERT_EQ(curves.size(), 2u);
  EXPECT_EQ(curves[0].batch, 8);  // ordered by batch
  EXPECT_EQ(curves[0].points.size(), 1u);
  EXPECT_EQ(curves[1].points.size(), 2u);
}

TEST(MeasuredRuns, LoadsTheH200x4FolderAndBuildsTheDdpCurve) {
  // validation/h200x4/measured holds single-llama-1b-strong n1 mbs2 gbs16 and ddp-llama-1b-strong
  // n2 / n4 mbs2 gbs16 (file names), so that curve has GPU counts 1, 2, 4.
  auto runs = load_measured("validation/h200x4/measured");
  ASSERT_TRUE(runs) << runs.error().str();
  auto curves = group_curves(*runs);
  const ScalingCurve* ddp = nullptr;
  for (const auto& c : curves)
    if (c.family == "ddp" && c.model == "llama-1b" && c.scaling == ScalingKind::strong && c.mbs == 2 && c.batch == 16) ddp = &c;
  ASSERT_NE(ddp, nullptr);
  ASSERT_EQ(ddp->points.size(), 3u);
  EXPECT_EQ(ddp->points[0].gpus, 1);
  EXPECT_EQ(ddp->points[1].gpus, 2);
  EXPECT_EQ(ddp->points[2].gpus, 4);
}

TEST(MeasuredRuns, RejectsAFileOfAnotherSchema) {
  auto r = load_measured_run("topologies/hgx-h200-4.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, Error::Kind::input);
}

TEST(Capacity, NodeCountsArePowersOfTwoAndThreeTimesThem) {
  // max 20: 1, 2, 3, 4, 6, 8, 12, 16 and 20 itself.
  EXPECT_EQ(capacity_node_counts(20), (std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 20}));
}
