// Tests for the per-kernel interference curves (interference_curves.hpp) and how they reach kernel
// costs, phase costs and the builder's compute tasks. Expected values are worked out by hand from the
// header's rule: per kernel the median over its collectives, equal x merged by median, linear in
// ln(x) between points, held beyond the ends.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/interference_curves.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "gpu_fixtures.hpp"

namespace scalescope::models {
namespace {

InterferenceSample row(const std::string& compute, const char* cls, std::int64_t m, std::int64_t n, double alone_us,
                       std::optional<double> slowed, std::optional<double> slows, const char* op = "all_gather") {
  InterferenceSample s;
  s.compute = compute;
  s.kernel_class = cls;
  s.op = op;
  s.m = m;
  s.n = n;
  s.k = 64;
  s.compute_alone = Seconds(alone_us * 1e-6);
  s.compute_slowdown = slowed;
  s.coll_slowdown = slows;
  return s;
}

// GEMM A: 512 x 512 (262,144 outputs = 8 tiles of 256 x 128), 10 us, three collectives: slowed
//   {2.0, 2.2, 2.1} -> 2.1; slows {1.2, 1.4} (the third window not covered) -> 1.3.
// GEMM B: 256 x 1024 (also 262,144 outputs), 10 us: slowed 2.3, slows 1.5. Same x as A on both axes:
//   merged points 262,144 -> median(2.1, 2.3) = 2.2 and 10 us -> median(1.3, 1.5) = 1.4.
// GEMM C: 1024 x 1024 (1,048,576 outputs), 100 us: slowed 1.2, slows 2.0.
// Copy D: 20 us, slowed 1.3, slows 1.5. Copy E: 80 us, slowed 1.1, slows 2.5.
std::vector<InterferenceSample> rows() {
  return {row("bf16 GEMM 512x512x64", "gemm", 512, 512, 10, 2.0, 1.2),
          row("bf16 GEMM 512x512x64", "gemm", 512, 512, 10, 2.2, 1.4, "reduce_scatter"),
          row("bf16 GEMM 512x512x64", "gemm", 512, 512, 10, 2.1, std::nullopt, "all_reduce"),
          row("bf16 GEMM 256x1024x64", "gemm", 256, 1024, 10, 2.3, 1.5),
          row("bf16 GEMM 1024x1024x64", "gemm", 1024, 1024, 100, 1.2, 2.0),
          row("copy 20", "memory", 0, 0, 20, 1.3, 1.5),
          row("copy 80", "memory", 0, 0, 80, 1.1, 2.5)};
}

TEST(InterferenceCurves, InterpolateInLogSpaceAndHoldBeyondTheEnds) {
  const InterferenceCurves c(rows());
  ASSERT_FALSE(c.empty());
  // At the merged points.
  EXPECT_NEAR(c.gemm(262144, microseconds(10)).slowed, 2.2, 1e-12);
  EXPECT_NEAR(c.gemm(262144, microseconds(10)).slows, 1.4, 1e-12);
  // Halfway in ln: 524,288 outputs (x2 of 262,144 on a x4 span), sqrt(10 x 100) us.
  const KernelInterference mid = c.gemm(524288, Seconds(std::sqrt(10e-6 * 100e-6)));
  EXPECT_NEAR(mid.slowed, 2.2 + 0.5 * (1.2 - 2.2), 1e-9);
  EXPECT_NEAR(mid.slows, 1.4 + 0.5 * (2.0 - 1.4), 1e-9);
  // Held beyond both ends (no extrapolation).
  EXPECT_NEAR(c.gemm(1000, microseconds(1)).slowed, 2.2, 1e-12);
  EXPECT_NEAR(c.gemm(1000, microseconds(1)).slows, 1.4, 1e-12);
  EXPECT_NEAR(c.gemm(1e9, Seconds(1)).slowed, 1.2, 1e-12);
  EXPECT_NEAR(c.gemm(1e9, Seconds(1)).slows, 2.0, 1e-12);
  // Memory-bound: 40 us is halfway between 20 and 80 in ln.
  EXPECT_NEAR(c.memory(microseconds(40)).slowed, 1.2, 1e-9);
  EXPECT_NEAR(c.memory(microseconds(40)).slows, 2.0, 1e-9);
  // Attention: batch 1 x 4 heads x ceil(512 / 128) = 16 blocks -> 16 x 32,768 = 524,288 outputs.
  EXPECT_NEAR(c.attention(1, 4, 512, microseconds(10)).slowed, 1.7, 1e-9);
  EXPECT_NE(c.describe().find("0.3M x2.20"), std::string::npos) << c.describe();
  EXPECT_NE(c.describe().find("80 us x2.50"), std::string::npos) << c.describe();
}

// sendrecv rows are measured but not used: adding one changes nothing.
TEST(InterferenceCurves, SendrecvRowsAreNotUsed) {
  std::vector<InterferenceSample> with = rows();
  with.push_back(row("bf16 GEMM 512x512x64", "gemm", 512, 512, 10, 9.0, 9.0, "sendrecv"));
  const InterferenceCurves c(with);
  EXPECT_NEAR(c.gemm(262144, microseconds(10)).slowed, 2.2, 1e-12);
  EXPECT_NEAR(c.gemm(262144, microseconds(10)).slows, 1.4, 1e-12);
}

TEST(InterferenceCurves, NothingMeasuredMeansNoInterference) {
  const InterferenceCurves none;
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.gemm(262144, microseconds(10)).slowed, 1.0);
  EXPECT_EQ(none.memory(microseconds(10)).slows, 1.0);
  // Only GEMM rows: memory-bound kernels are left alone.
  const InterferenceCurves gemm_only({row("bf16 GEMM 512x512x64", "gemm", 512, 512, 10, 2.0, 1.2)});
  EXPECT_EQ(gemm_only.memory(microseconds(10)).slowed, 1.0);
  EXPECT_EQ(gemm_only.gemm(1, microseconds(10)).slowed, 2.0);
}

using testing::h200_spec;

ComputeModel model_with_rows() {
  ComputeProfile p;
  p.source = "test.json";
  p.interference = rows();
  return ComputeModel::with_profile(h200_spec(), p).value();
}

TEST(InterferenceCurves, KernelCostsCarryTheirFactorsUntilReplaced) {
  ComputeModel m = model_with_rows();
  ASSERT_TRUE(m.per_kernel_interference());
  // A 512 x 512 GEMM: the merged point's compute factor; its collective factor at its own time.
  const KernelCost g = m.gemm(512, 512, 64);
  EXPECT_NEAR(g.interference.slowed, 2.2, 1e-12);
  EXPECT_NEAR(g.interference.slows, InterferenceCurves(rows()).gemm(262144, g.time).slows, 1e-12);
  const KernelCost copy = m.memory_bound(Bytes(4800e9 * 0.7 * 40e-6));  // 40 us at the assumed 0.7 of HBM
  EXPECT_NEAR(copy.time.value, 40e-6, 1e-12);
  EXPECT_NEAR(copy.interference.slowed, 1.2, 1e-9);
  bool listed = false;
  for (const auto& in : m.inputs()) listed = listed || in.name == "interference_per_kernel";
  EXPECT_TRUE(listed);
  m.set_interference({}, "off");
  EXPECT_FALSE(m.per_kernel_interference());
  EXPECT_EQ(m.gemm(512, 512, 64).interference.slowed, 1.0);
}

// A phase's factors are its kernels' time-weighted ones; a launch gap (host slower than the kernel)
// counts with factor 1. Datasheet model: launch overhead 5 us.
TEST(InterferenceCurves, PhaseCostWeightsKernelsByTime) {
  const ComputeModel m = ComputeModel::datasheet(h200_spec()).value();
  PhaseCost p;
  p.add_kernel(m, KernelCost(microseconds(10), Provenance::measured, {2.0, 1.5}));
  p.add_kernel(m, KernelCost(microseconds(30), Provenance::measured, {1.0, 2.5}));
  // (10 x 2 + 30 x 1) / 40 = 1.25; (10 x 1.5 + 30 x 2.5) / 40 = 2.25.
  EXPECT_NEAR(p.interference().slowed, 1.25, 1e-12);
  EXPECT_NEAR(p.interference().slows, 2.25, 1e-12);
  PhaseCost gap;
  gap.add_kernel(m, KernelCost(microseconds(2), Provenance::measured, {2.0, 3.0}));
  // Charged 5 us: (2 x 2 + 3) / 5 = 1.4 and (2 x 3 + 3) / 5 = 1.8.
  EXPECT_NEAR(gap.interference().slowed, 1.4, 1e-9);
  EXPECT_NEAR(gap.interference().slows, 1.8, 1e-9);
  EXPECT_NEAR((p * 3.0).interference().slowed, 1.25, 1e-12);
  EXPECT_EQ(PhaseCost{}.interference().slowed, 1.0);
}

TEST(InterferenceCurves, BuilderGivesEveryComputeTaskItsPhaseFactors) {
  auto cluster = load_cluster_by_name_or_path("hgx-h200-4");
  ASSERT_TRUE(cluster.has_value());
  ModelSpec s;
  s.name = "t";
  s.layers = 2;
  s.hidden = 1024;
  s.heads = 8;
  s.kv_heads = 8;
  s.ffn_hidden = 4096;
  s.vocab = 32000;
  s.seq_len = 1024;
  const Plan plan = parse_plan("dp=4,zero=3,mbs=1,gbs=4").value();
  ComputeModel m = model_with_rows();
  auto g = build_task_graph(s, plan, *cluster, m);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  EXPECT_TRUE(g->has_task_interference());
  const LayerCost layer = layer_cost(s, plan, m);
  bool found = false;
  for (TaskId id = 0; id < g->size(); ++id) {
    const Task& t = g->task(id);
    if (t.kind != TaskKind::compute) continue;
    const TaskGraph::TaskInterference f = g->interference(id);
    EXPECT_GE(f.slowed, 1.0f);  // every point here slows compute down
    if (t.category == TaskCategory::forward && std::abs(t.amount - layer.forward.time.value) < 1e-12) {
      found = true;
      EXPECT_FLOAT_EQ(f.slowed, static_cast<float>(layer.forward.interference().slowed));
      EXPECT_FLOAT_EQ(f.slows, static_cast<float>(layer.forward.interference().slows));
    }
  }
  EXPECT_TRUE(found);
  BuildOptions off;
  off.task_interference = false;
  EXPECT_FALSE(build_task_graph(s, plan, *cluster, m, off)->has_task_interference());
  m.set_interference({}, "off");
  EXPECT_FALSE(build_task_graph(s, plan, *cluster, m)->has_task_interference());
}

}  // namespace
}  // namespace scalescope::models
