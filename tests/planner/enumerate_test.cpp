// Plan enumeration and pruning on a tiny model: counts derived by hand.
#include <gtest/gtest.h>

#include "scalescope/planner/search.hpp"

using namespace scalescope;
using namespace scalescope::planner;

namespace {

// 4 layers, 4 heads, 2 KV heads, hidden 256, FFN 1024, seq 128.
models::ModelSpec tiny() {
  models::ModelSpec m;
  m.name = "tiny";
  m.layers = 4; m.hidden = 256; m.heads = 4; m.kv_heads = 2; m.ffn_hidden = 1024;
  m.ffn = models::FfnKind::swiglu; m.norm = models::NormKind::rmsnorm; m.vocab = 1000; m.seq_len = 128;
  return m;
}

SearchSpace space(int gpus, int gbs) {
  SearchSpace s;
  s.gpus = gpus;
  s.gbs = gbs;
  return s;
}

const Bytes kHuge{1e15};

}  // namespace

TEST(Enumerate, TinyModelOnFourGpusCountsByHand) {
  // Layouts (tp, pp): tp | 4 -> 1, 2, 4; pp | 4/tp -> 6 layouts. tp = 4 does not divide kv_heads = 2.
  // Remaining (tp,pp,dp): (1,1,4) (1,2,2) (1,4,1) (2,1,2) (2,2,1), all dp divide gbs = 8.
  // plans = zero choices (4 if dp>1 else 1) x mbs (divisors of 8/dp: 2, 3 or 4 values) x
  //         schedules (gpipe, 1f1b, + interleaved vpp=2 only when pp = 2) x recompute 3 x sp (2 if tp>1):
  //   (1,1,4): 4*2*2*3*1 = 48; (1,2,2): 4*3*3*3 = 108; (1,4,1): 1*4*2*3 = 24;
  //   (2,1,2): 4*3*2*3*2 = 144; (2,2,1): 1*4*3*3*2 = 72; total 396.
  // Invalid (Megatron: interleaved needs micro-batches % pp == 0): (1,2,2) mbs 4 -> 1 micro-batch:
  //   4 zero * 3 recompute = 12; (2,2,1) mbs 8 -> 1: 3 recompute * 2 sp = 6; 18 in all, rule key "gbs".
  // Memory is unlimited, so every valid plan fits with recompute = none: its selective and full
  // variants are dominated. 378 valid = 126 groups of 3 -> 126 candidates, 252 dominated.
  const Enumeration e = enumerate_plans(tiny(), space(4, 8), 4, kHuge);
  EXPECT_EQ(e.counts.layouts, 6);
  EXPECT_EQ(e.counts.layouts_tp_heads, 1);
  EXPECT_EQ(e.counts.layouts_tp_cross_node, 0);
  EXPECT_EQ(e.counts.layouts_gbs_not_divisible, 0);
  EXPECT_EQ(e.counts.plans, 396);
  EXPECT_EQ(e.counts.invalid, 18);
  ASSERT_EQ(e.counts.invalid_by_rule.size(), 1u);
  EXPECT_EQ(e.counts.invalid_by_rule.at("gbs"), 18);
  EXPECT_EQ(e.counts.out_of_memory, 0);
  EXPECT_EQ(e.counts.dominated, 252);
  EXPECT_EQ(e.candidates.size(), 126u);
  for (const auto& p : e.candidates) EXPECT_EQ(p.recompute, models::Recompute::none);
}

TEST(Enumerate, WithoutDominancePruningEveryValidPlanIsACandidate) {
  // The same 396 - 18 = 378 valid plans, none dropped for recompute.
  SearchSpace s = space(4, 8);
  s.prune_dominated = false;
  const Enumeration e = enumerate_plans(tiny(), s, 4, kHuge);
  EXPECT_EQ(e.counts.dominated, 0);
  EXPECT_EQ(e.candidates.size(), 378u);
}

TEST(Enumerate, TensorParallelismStaysInsideANode) {
  // With 1 GPU per node, tp = 2 and tp = 4 layouts ((2,1), (2,2), (4,1)) cross nodes: 3 layouts.
  const Enumeration e = enumerate_plans(tiny(), space(4, 8), 1, kHuge);
  EXPECT_EQ(e.counts.layouts_tp_cross_node, 3);
  for (const auto& p : e.candidates) EXPECT_EQ(p.tp, 1);
}

TEST(Enumerate, GbsNotDivisibleByDpDropsLayouts) {
  // gbs = 3: dp = 4 (1,1) and dp = 2 (1,2), (2,1) do not divide 3 -> 3 layouts dropped.
  const Enumeration e = enumerate_plans(tiny(), space(4, 3), 4, kHuge);
  EXPECT_EQ(e.counts.layouts_gbs_not_divisible, 3);
  for (const auto& p : e.candidates) EXPECT_EQ(p.dp, 1);
}

TEST(Enumerate, EveryPlanOutOfMemoryWhenGpuHasNone) {
  // A GPU with 0 bytes: all 378 valid plans are pruned for memory, and the smallest need is kept.
  const Enumeration e = enumerate_plans(tiny(), space(4, 8), 4, Bytes{0});
  EXPECT_EQ(e.counts.out_of_memory, 378);
  EXPECT_TRUE(e.candidates.empty());
  ASSERT_TRUE(e.min_memory);
  EXPECT_GT(e.min_memory->value, 0);
}

TEST(Enumerate, FixRestrictsTheSpace) {
  // --fix tp=2,schedule=1f1b: (2,1,2): 4 zero * 3 mbs * 3 recompute * 2 sp = 72; (2,2,1): 4 mbs * 3 * 2 = 24.
  // 96 kept, all valid (1f1b has no micro-batch rule); 396 - 96 = 300 excluded. Of the 96, the
  // 32 with recompute = none are candidates and the 64 others dominated.
  auto fix = parse_plan_filter("tp=2,schedule=1f1b");
  ASSERT_TRUE(fix);
  SearchSpace s = space(4, 8);
  s.fix = *fix;
  const Enumeration e = enumerate_plans(tiny(), s, 4, kHuge);
  EXPECT_EQ(e.candidates.size(), 32u);
  EXPECT_EQ(e.counts.dominated, 64);
  EXPECT_EQ(e.counts.fixed_out, 300);
}

TEST(PlanFilter, RejectsUnknownKeyAndBadValue) {
  auto bad_key = parse_plan_filter("tq=2");
  ASSERT_FALSE(bad_key);
  EXPECT_NE(bad_key.error().str().find("tq"), std::string::npos);
  auto bad_value = parse_plan_filter("schedule=zigzag");
  ASSERT_FALSE(bad_value);
  EXPECT_NE(bad_value.error().str().find("zigzag"), std::string::npos);
}
