// Plan enumeration and pruning on a tiny model: counts derived by hand.
#include <gtest/gtest.h>

#include <set>

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

// The original dimensions only (no context parallelism, overlap flags as in the base plan): the counts
// below were derived for them; DenseDimensionsCountByHand covers the new ones.
SearchSpace space(int gpus, int gbs) {
  SearchSpace s;
  s.gpus = gpus;
  s.gbs = gbs;
  s.max_cp = 1;
  s.search_overlap = false;
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

TEST(Enumerate, DenseDimensionsCountByHand) {
  // 2 GPUs, gbs 2, mbs 1, cp up to 8, overlap flags searched. Layouts (tp, cp, pp): tp 1 with cp 1 (pp 1
  // or 2) or cp 2 (pp 1), tp 2 (cp 1, pp 1): 4, every dp divides gbs.
  //   (1,1,1) dp 2: zero 0..3 x 2 schedules x 3 recompute, zero 1 twice (overlap_param_gather): 5 x 6 = 30;
  //   (1,1,2) dp 1: zero 0 x (gpipe, 1f1b, interleaved vpp 2: 4 layers / (2 x 2); vpp 3, 4 have no valid
  //                 split) x 3 = 9;
  //   (1,2,1) dp 1, cp 2: ZeRO shards over dp x cp = 2, so as (1,1,1): 30;
  //   (2,1,1) dp 1: sp 0 (2 x 3) + sp 1 with tp_comm_overlap off and on (2 x 2 x 3) = 18.
  // 87 plans, all valid; with unlimited memory recompute none fits, so 2 of every 3 are dominated.
  SearchSpace s;
  s.gpus = 2;
  s.gbs = 2;
  s.max_mbs = 1;
  s.min_cp_tokens = 64;  // the tiny model's 128-token sequence split in 2
  const Enumeration e = enumerate_plans(tiny(), s, 2, kHuge);
  EXPECT_EQ(e.counts.layouts, 4);
  EXPECT_EQ(e.counts.plans, 87);
  EXPECT_EQ(e.counts.invalid, 0);
  EXPECT_EQ(e.counts.dominated, 58);
  ASSERT_EQ(e.candidates.size(), 29u);
  int cp2 = 0, opg = 0, tco = 0;
  for (const auto& p : e.candidates) {
    cp2 += p.cp == 2;
    opg += p.overlap_param_gather;
    tco += p.tp_comm_overlap;
  }
  EXPECT_EQ(cp2, 10);  // (1,2,1): 5 zero variants x 2 schedules
  EXPECT_EQ(opg, 4);   // zero 1 with dp x cp = 2, both layouts, 2 schedules
  EXPECT_EQ(tco, 2);
}

TEST(Enumerate, ContextParallelNeedsMinCpTokensPerRank) {
  // The same space with a floor of 65 tokens: cp 2 leaves 64 of the 128, so layout (1,2,1) and its 30
  // plans go (counted with the layouts 2cp does not divide), leaving 87 - 30 = 57 plans and no cp 2.
  SearchSpace s;
  s.gpus = 2;
  s.gbs = 2;
  s.max_mbs = 1;
  s.min_cp_tokens = 65;
  const Enumeration e = enumerate_plans(tiny(), s, 2, kHuge);
  EXPECT_EQ(e.counts.layouts_cp_seq, 1);
  EXPECT_EQ(e.counts.plans, 57);
  for (const auto& p : e.candidates) EXPECT_EQ(p.cp, 1);
}

TEST(Enumerate, PipelinesThatDoNotDivideTheLayersGetTheNearestUnevenSplit) {
  // 4 layers on pp = 3 (3 GPUs): first and last stage take (1, 1) (2 for the middle stage); pp 3 is no
  // longer dropped.
  SearchSpace s = space(3, 3);
  const Enumeration e = enumerate_plans(tiny(), s, 8, kHuge);
  EXPECT_EQ(e.counts.layouts_uneven, 1);
  EXPECT_EQ(e.counts.layouts_pp_layers, 0);
  bool found = false;
  for (const auto& p : e.candidates) {
    if (p.pp == 3) {
      found = true;
      EXPECT_EQ(p.first_stage_layers, 1);
      EXPECT_EQ(p.last_stage_layers, 1);
    }
  }
  EXPECT_TRUE(found);
}

TEST(Enumerate, MoeModelsSearchExpertParallelism) {
  // tiny() with 4 experts of width 512, top 2. On 4 GPUs the (tp, pp) layouts leave tp*dp stage ranks of
  // 4 (tp 1 pp 1, tp 2 pp 1), 2 (tp 1 pp 2, tp 2 pp 2) or 1 (pp 4); ep takes the divisors of the 4 experts that
  // divide them: {1, 2, 4}, {1, 2}, {1}. MoE layers with tp > 1 need sp (Megatron-Core), so every tp = 2
  // candidate has sp and the sp=false plans are refused under the rule "sp".
  models::ModelSpec m = tiny();
  m.moe.experts = 4;
  m.moe.top_k = 2;
  m.moe.ffn_hidden = 512;
  const Enumeration e = enumerate_plans(m, space(4, 8), 4, kHuge);
  std::set<int> ep_by_layout[3];
  for (const auto& p : e.candidates) {
    if (p.tp == 1 && p.pp == 1) ep_by_layout[0].insert(p.ep);
    if (p.tp == 1 && p.pp == 2) ep_by_layout[1].insert(p.ep);
    if (p.pp == 4) ep_by_layout[2].insert(p.ep);
    if (p.tp == 2) {
      EXPECT_TRUE(p.sp);
    }
  }
  EXPECT_EQ(ep_by_layout[0], (std::set<int>{1, 2, 4}));
  EXPECT_EQ(ep_by_layout[1], (std::set<int>{1, 2}));
  EXPECT_EQ(ep_by_layout[2], (std::set<int>{1}));
  EXPECT_GT(e.counts.invalid_by_rule.at("sp"), 0);
  // A dense model's search is unchanged: no ep beyond 1.
  for (const auto& p : enumerate_plans(tiny(), space(4, 8), 4, kHuge).candidates) EXPECT_EQ(p.ep, 1);
}
