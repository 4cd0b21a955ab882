// Plan search on a real topology: ranking order, determinism across thread counts, explanations.
#include <gtest/gtest.h>

#include "scalescope/planner/search.hpp"
#include "scalescope/planner/setup.hpp"

using namespace scalescope;
using namespace scalescope::planner;

namespace {

models::ModelSpec small_model() {
  // 8 layers, 8 heads (4 KV), hidden 512, FFN 2048, seq 512: a few hundred plans on 4 GPUs.
  models::ModelSpec m;
  m.name = "small";
  m.layers = 8; m.hidden = 512; m.heads = 8; m.kv_heads = 4; m.ffn_hidden = 2048;
  m.ffn = models::FfnKind::swiglu; m.norm = models::NormKind::rmsnorm; m.vocab = 32000; m.seq_len = 512;
  return m;
}

std::unique_ptr<EvalSetup> setup_h200x4() {
  auto s = load_setup("hgx-h200-4", {}, "");
  EXPECT_TRUE(s) << (s ? "" : s.error().str());
  return std::move(s).value();
}

}  // namespace

TEST(Search, RankingIsIdenticalForOneTwoAndThreeThreads) {
  auto s = setup_h200x4();
  SearchSpace space;
  space.gpus = 4;
  space.gbs = 16;
  std::vector<SearchResult> results;
  for (int threads : {1, 2, 3}) {
    SearchOptions o;
    o.top = 20;
    o.flow_top = 2;
    o.threads = threads;
    auto r = search(small_model(), s->cluster, s->collectives, s->compute, space, o);
    ASSERT_TRUE(r) << r.error().str();
    results.push_back(std::move(r).value());
  }
  ASSERT_EQ(results[0].ranked.size(), 20u);
  for (std::size_t t = 1; t < results.size(); ++t) {
    ASSERT_EQ(results[t].ranked.size(), results[0].ranked.size());
    EXPECT_EQ(results[t].counts.evaluated, results[0].counts.evaluated);
    EXPECT_EQ(results[t].counts.bounded, results[0].counts.bounded);
    for (std::size_t i = 0; i < results[0].ranked.size(); ++i) {
      EXPECT_TRUE(results[t].ranked[i].plan == results[0].ranked[i].plan) << "rank " << i;
      EXPECT_EQ(results[t].ranked[i].step_time_s, results[0].ranked[i].step_time_s) << "rank " << i;
    }
  }
}

TEST(Search, RankedByStepTimeThenPlanFields) {
  // Past the flow-confirmed head, analytical step times ascend; equal times fall back to plan_less.
  auto s = setup_h200x4();
  SearchSpace space;
  space.gpus = 4;
  space.gbs = 16;
  SearchOptions o;
  o.top = 50;
  o.flow_top = 0;
  auto r = search(small_model(), s->cluster, s->collectives, s->compute, space, o);
  ASSERT_TRUE(r);
  for (std::size_t i = 1; i < r->ranked.size(); ++i) {
    const auto& a = r->ranked[i - 1];
    const auto& b = r->ranked[i];
    EXPECT_TRUE(a.step_time_s < b.step_time_s || (a.step_time_s == b.step_time_s && plan_less(a.plan, b.plan)));
  }
  // Every enumerated plan is accounted for once: simulated, failed, or pruned for one reason (the
  // step-time bound included).
  const auto& c = r->counts;
  EXPECT_EQ(c.evaluated + c.failed + c.invalid + c.out_of_memory + c.dominated + c.fixed_out + c.bounded, c.plans);
}

TEST(Search, ExplainsAModelThatDoesNotFit) {
  // GPT-3 175B on one H200 (141 GB): model states alone are 175e9 * 18 B = 3.15 TB (Megatron mixed
  // precision), so no plan fits and the explanation names the memory needed.
  auto s = setup_h200x4();
  auto model = models::load_model_by_name_or_path("gpt3-175b");
  ASSERT_TRUE(model);
  SearchSpace space;
  space.gpus = 1;
  space.gbs = 8;
  auto r = search(*model, s->cluster, s->collectives, s->compute, space, {});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ranked.empty());
  ASSERT_FALSE(r->explanations.empty());
  EXPECT_NE(r->explanations.front().find("does not fit"), std::string::npos) << r->explanations.front();
  ASSERT_TRUE(r->min_memory);
  EXPECT_GT(r->min_memory->value, 175e9 * 18 * 0.99);  // at least the model states (one GPU: no ZeRO)
}

TEST(Search, ExplainsAGbsThatNoDpDivides) {
  // 4 GPUs, --fix tp=2,pp=1 without context parallelism: the only such layout has dp = 2, which does
  // not divide gbs = 3, so nothing can run; the answer is an explanation, not an empty table.
  auto s = setup_h200x4();
  SearchSpace space;
  space.gpus = 4;
  space.gbs = 3;
  space.max_cp = 1;
  auto fix = parse_plan_filter("tp=2,pp=1");
  ASSERT_TRUE(fix);
  space.fix = *fix;
  auto r = search(small_model(), s->cluster, s->collectives, s->compute, space, {});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->ranked.empty());
  ASSERT_FALSE(r->explanations.empty());
  EXPECT_NE(r->explanations.front().find("not divisible"), std::string::npos) << r->explanations.front();
}

TEST(Search, RejectsMoreGpusThanTheCluster) {
  auto s = setup_h200x4();
  SearchSpace space;
  space.gpus = 8;
  space.gbs = 8;
  auto r = search(small_model(), s->cluster, s->collectives, s->compute, space, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().kind, Error::Kind::input);
}
