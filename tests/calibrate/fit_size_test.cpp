// Tests of the collective fit's efficiency-by-size curves (stage D) and of its latency rule when the
// rows do not separate base from per-hop latency (one group size).
#include <gtest/gtest.h>

#include <cmath>

#include "scalescope/calibrate/fit.hpp"
#include "synthetic_profile.hpp"

namespace scalescope::calib {
namespace {

using testing::h200x4;

/// Rows 8 B .. 1 GiB (x2) of `op` on each group size: the datasheet model's time x slow(n, bytes).
Profile rows_times(const Cluster& c, CollOp op, const std::vector<int>& groups,
                   const std::function<double(int, double)>& slow) {
  const CollectiveModel model(c, datasheet_collective_params());
  return testing::model_rows(model, {op}, groups, [&](CollOp, int n, double s) { return slow(n, s); });
}

TEST(SizeEfficiencyFit, OneGroupSizeIsReproducedAtEveryMeasuredSize) {
  const Cluster c = h200x4();
  // A wiggle in log2(size) that no latency / bandwidth / channel parameter can express.
  const Profile p = rows_times(c, CollOp::all_gather, {4}, [](int, double s) { return 1.0 + 0.3 * std::sin(std::log2(s)); });
  auto fit = fit_collective_params(p, c);
  ASSERT_TRUE(fit) << fit.error().str();
  // One row per knot (sizes are powers of 2, knots at their log2): the knot is t_model / t_measured
  // of that row, so the final time t_model / knot equals t_measured: every error is 0.
  ASSERT_EQ(fit->report.residuals.size(), 28u);  // 8 B .. 1 GiB
  for (const auto& r : fit->report.residuals) EXPECT_NEAR(r.error(), 0.0, 1e-9) << r.bytes;
  const auto& curve = fit->params.size_curve(CollOp::all_gather, 4);
  ASSERT_EQ(curve.log2_bytes.size(), 28u);
  EXPECT_DOUBLE_EQ(curve.log2_bytes.front(), 3.0);
  EXPECT_DOUBLE_EQ(curve.log2_bytes.back(), 30.0);
  // Every knot is visible in the report with the rows it came from.
  int knots = 0;
  for (const auto& v : fit->report.values)
    if (v.name.rfind("size_efficiency.all_gather@", 0) == 0) ++knots;
  EXPECT_EQ(knots, 28);
  EXPECT_NE(fit->params.size_efficiency_source.find("efficiency by size from all_gather on n=4"), std::string::npos)
      << fit->params.size_efficiency_source;
}

TEST(SizeEfficiencyFit, KnotIsTheMedianOverGroupSizes) {
  const Cluster c = h200x4();
  // 2 GPUs 10% slower than the model, 3 GPUs as the model, 4 GPUs 10% faster (times x 1.1, 1, 0.9),
  // plus a common wiggle in size.
  const Profile p = rows_times(c, CollOp::broadcast, {2, 3, 4}, [](int n, double s) {
    return (n == 2 ? 1.1 : n == 3 ? 1.0 : 0.9) * (1.0 + 0.2 * std::cos(std::log2(s)));
  });
  auto fit = fit_collective_params(p, c);
  ASSERT_TRUE(fit) << fit.error().str();
  // Each knot is the median over the three groups of t_model / t_measured, so at every size one
  // group's row is reproduced exactly and, of the other two, one is over and one under (or exact).
  for (double s = 8; s <= 1024.0 * 1024 * 1024; s *= 2) {
    std::vector<double> e;
    for (const auto& r : fit->report.residuals)
      if (r.bytes == s) e.push_back(r.error());
    ASSERT_EQ(e.size(), 3u);
    std::sort(e.begin(), e.end());
    EXPECT_NEAR(e[1], 0.0, 1e-9) << s;
    EXPECT_LE(e[0], 1e-9) << s;
    EXPECT_GE(e[2], -1e-9) << s;
  }
}

TEST(SizeEfficiencyFit, SendrecvOnThreeOrMoreRanksGetsItsOwnRegime) {
  const Cluster c = h200x4();
  // 3 and 4 GPUs (send and receive peers differ) run at half speed from 16 MiB to 128 MiB.
  const auto regime = [](int n, double s) { return n >= 3 && s >= 16.0 * 1024 * 1024 && s <= 128.0 * 1024 * 1024 ? 2.0 : 1.0; };
  const Profile p = rows_times(c, CollOp::sendrecv, {2, 3, 4}, regime);
  auto fit = fit_collective_params(p, c);
  ASSERT_TRUE(fit) << fit.error().str();
  ASSERT_FALSE(fit->params.sendrecv_distinct_peers.empty());
  // The 2-GPU curve comes from the 2-GPU rows alone (one per knot: reproduced exactly); the 3- and
  // 4-GPU rows share the other curve, and the model gives them the same time (one send of S per rank
  // over its own NVLink to the switch), so both are reproduced exactly too.
  for (const auto& r : fit->report.residuals) EXPECT_NEAR(r.error(), 0.0, 1e-9) << r.nranks << " " << r.bytes;
  // At 64 MiB the regime halves the 3+ GPU speed: that curve's knot is half the 2-GPU one.
  const double s = 64.0 * 1024 * 1024;
  EXPECT_NEAR(fit->params.size_curve(CollOp::sendrecv, 4).at(s), 0.5 * fit->params.size_curve(CollOp::sendrecv, 2).at(s), 1e-9);

  // Fitted on 2 GPUs only, the regime cannot be known: 4 GPUs at 64 MiB are predicted twice as fast
  // (error +100%), and outside the regime (1 GiB) exactly.
  FitOptions two;
  two.groups = {2};
  auto fit2 = fit_collective_params(p, c, two);
  ASSERT_TRUE(fit2) << fit2.error().str();
  EXPECT_TRUE(fit2->params.sendrecv_distinct_peers.empty());
  for (const auto& r : fit2->report.residuals) {
    if (r.nranks != 4) continue;
    if (r.bytes == s) {
      EXPECT_NEAR(r.error(), 1.0, 1e-9);
    }
    if (r.bytes == 1024.0 * 1024 * 1024) {
      EXPECT_NEAR(r.error(), 0.0, 1e-9);
    }
  }
}

TEST(LatencyFit, OneGroupSizeGivesTreeRingsHopAndPairwiseNoHop) {
  const Cluster c = h200x4();
  // 2-GPU rows only: every tree and pairwise entry has one hop count, so base and per-hop latency
  // cannot be told apart. Tree takes ring's fitted LL hop (ring is separable here: all_reduce has 2
  // hops, all_gather 1); pairwise gets hop 0 and base = the whole latency.
  Profile p = rows_times(c, CollOp::all_reduce, {2}, [](int, double) { return 1.0; });
  for (CollOp op : {CollOp::all_gather, CollOp::alltoall}) {
    Profile q = rows_times(c, op, {2}, [](int, double) { return 1.0; });
    p.collectives.push_back(q.collectives[0]);
  }
  auto fit = fit_collective_params(p, c);
  ASSERT_TRUE(fit) << fit.error().str();
  const auto& P = fit->params;
  EXPECT_DOUBLE_EQ(P.hop_latency(LinkClass::nvlink, Algorithm::tree, Protocol::LL),
                   P.hop_latency(LinkClass::nvlink, Algorithm::ring, Protocol::LL));
  EXPECT_DOUBLE_EQ(P.hop_latency(LinkClass::nvlink, Algorithm::pairwise, Protocol::Simple), 0.0);
  // Datasheet pairwise latency on 2 GPUs: base 8.4 + 1 hop x 3.4 = 11.8 us, now all in base (the
  // rows are the datasheet model's own, so the latency estimate is exact up to the median).
  EXPECT_NEAR(P.base_latency(Algorithm::pairwise, Protocol::Simple), 11.8, 0.05);
}

}  // namespace
}  // namespace scalescope::calib
