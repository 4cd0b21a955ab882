// Planner speed-ups that must not change the answer: the compute-only step-time lower bound, the
// piece-cost cache, bound pruning in search(), and rank_plans() over a fixed list of plans.
#include <gtest/gtest.h>

#include <cstdlib>

#include "scalescope/models/counts.hpp"
#include "scalescope/planner/bound.hpp"
#include "scalescope/planner/rank.hpp"
#include "scalescope/planner/search.hpp"
#include "scalescope/planner/setup.hpp"

using namespace scalescope;
using namespace scalescope::planner;

namespace {

std::unique_ptr<EvalSetup> setup_of(const std::string& cluster, int nodes) {
  ClusterOptions co;
  co.nodes = nodes;
  auto s = load_setup(cluster, co, "");
  if (!s) {
    ADD_FAILURE() << s.error().str();
    std::abort();
  }
  return std::move(s).value();
}

models::ModelSpec model_of(const std::string& name) {
  auto m = models::load_model_by_name_or_path(name);
  if (!m) {
    ADD_FAILURE() << m.error().str();
    std::abort();
  }
  return *m;
}

models::CostOptions search_costs() {
  models::CostOptions c;  // what evaluate() prices with
  c.flash_attention = true;
  c.dropout = false;
  return c;
}

}  // namespace

TEST(StepTimeBound, EqualsTheSimulatedStepOnOneGpuWithoutCommunication) {
  // One GPU (tp = pp = dp = 1): no collective, no transfer, every task on the compute stream, so the
  // simulated step is the serial sum of m forward + backward units (with embedding and head) and the
  // optimizer step - exactly the pp = 1 bound. Each task is rounded up to a whole ns: m = 4
  // micro-batches x 2 units + 1 optimizer = 9 tasks, so the two agree within 9 ns (+ the 1e-9 scale).
  const auto s = setup_of("hgx-h200-4", 1);
  const models::ModelSpec model = model_of("megatron-gpt-1.7b");
  models::Plan p;
  p.mbs = 1;
  p.gbs = 4;
  p.recompute = models::Recompute::full;
  auto pred = evaluate(model, p, s->cluster, s->compute, s->collectives, Fidelity::analytical);
  ASSERT_TRUE(pred) << pred.error().str();
  PieceCostCache cache(model, s->compute, s->collectives, search_costs());
  const double bound = step_time_lower_bound(model, p, s->compute, cache);
  EXPECT_LE(bound, pred->step_time_s);
  EXPECT_NEAR(bound, pred->step_time_s, 9e-9 + 1e-9 * pred->step_time_s);
}

TEST(StepTimeBound, NeverExceedsTheSimulatedStepOfAnyCandidate) {
  // The bound leaves out communication, transfers and idle time (bound.hpp), so it must lie at or
  // below the simulated step of every plan: checked on every candidate of a 16-GPU search (2 nodes,
  // tp / pp / dp / ZeRO / schedules / recompute / sp all present).
  const auto s = setup_of("h100-rail-ndr", 2);
  const models::ModelSpec model = model_of("llama3-8b");
  SearchSpace space;
  space.gpus = 16;
  space.gbs = 32;
  space.max_mbs = 2;
  space.max_vpp = 2;
  const Enumeration e = enumerate_plans(model, space, s->cluster.gpus_per_node(), s->cluster.gpu_spec().memory);
  ASSERT_GT(e.candidates.size(), 50u);
  PieceCostCache cache(model, s->compute, s->collectives, search_costs());
  int pp_gt1 = 0;
  for (std::size_t i = 0; i < e.candidates.size(); ++i) {
    const models::Plan& p = e.candidates[i];
    auto pred = evaluate(model, p, s->cluster, s->compute, s->collectives, Fidelity::analytical);
    ASSERT_TRUE(pred) << models::to_string(p);
    EXPECT_LE(step_time_lower_bound(model, p, s->compute, cache), pred->step_time_s) << models::to_string(p);
    pp_gt1 += p.pp > 1 ? 1 : 0;
  }
  EXPECT_GT(pp_gt1, 0);
}

TEST(PieceCostCache, KeysOnlyOnWhatTheCostsDependOn) {
  // Plans differing in pp, dp and schedule share one entry (a layer's cost does not see them);
  // a different micro-batch size is a second entry, with a larger forward time (more tokens).
  const auto s = setup_of("hgx-h200-4", 1);
  const models::ModelSpec model = model_of("megatron-gpt-1.7b");
  PieceCostCache cache(model, s->compute, s->collectives, search_costs());
  models::Plan a;
  a.gbs = 8;
  models::Plan b = a;
  b.pp = 2;
  b.dp = 2;
  b.schedule = models::Schedule::gpipe;
  const PieceCosts& ca = cache.get(a);
  const PieceCosts& cb = cache.get(b);
  EXPECT_EQ(&ca, &cb);
  EXPECT_EQ(cache.size(), 1u);
  models::Plan c = a;
  c.mbs = 2;
  EXPECT_GT(cache.get(c).layer.forward.time.value, ca.layer.forward.time.value);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(SearchBound, GivesTheSameTopPlansAsTheExhaustiveSearchForAnyThreadCount) {
  // Bound pruning only skips plans slower than `top` simulated ones, so the ranked list (plans,
  // times, order) must equal the exhaustive search's; skipped + simulated = simulated without it.
  // The chunks do not depend on the thread count, so 1 and 2 threads give the same counts.
  const auto s = setup_of("h100-rail-ndr", 2);
  const models::ModelSpec model = model_of("llama3-8b");
  SearchSpace space;
  space.gpus = 16;
  space.gbs = 64;
  SearchOptions o;
  o.top = 5;
  o.flow_top = 0;
  o.threads = 2;
  SearchSpace full = space;
  full.prune_bound = false;
  auto exhaustive = search(model, s->cluster, s->collectives, s->compute, full, o);
  auto bounded = search(model, s->cluster, s->collectives, s->compute, space, o);
  o.threads = 1;
  auto bounded1 = search(model, s->cluster, s->collectives, s->compute, space, o);
  ASSERT_TRUE(exhaustive && bounded && bounded1);
  ASSERT_EQ(exhaustive->ranked.size(), 5u);
  ASSERT_EQ(bounded->ranked.size(), 5u);
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(models::to_string(bounded->ranked[i].plan), models::to_string(exhaustive->ranked[i].plan));
    EXPECT_EQ(bounded->ranked[i].step_time_s, exhaustive->ranked[i].step_time_s);
    EXPECT_EQ(models::to_string(bounded1->ranked[i].plan), models::to_string(bounded->ranked[i].plan));
  }
  EXPECT_EQ(exhaustive->counts.bounded, 0);
  EXPECT_GT(bounded->counts.bounded, 0);
  EXPECT_EQ(bounded->counts.bounded + bounded->counts.evaluated, exhaustive->counts.evaluated);
  EXPECT_EQ(bounded1->counts.bounded, bounded->counts.bounded);
}

TEST(RankPlans, OrdersByStepTimeAndRefusesInvalidAndOversizedPlans) {
  // On one GPU, full recompute repeats the forward pass and changes no traffic, so it is slower than
  // no recompute (ranked second). gpt3-175b does not fit one GPU (its bf16 weights alone are 350 GB
  // against 141 GB): refused as out of memory. gbs 3 with mbs 2 is not a whole number of
  // micro-batches: refused as invalid.
  const auto s = setup_of("hgx-h200-4", 1);
  const models::ModelSpec model = model_of("megatron-gpt-1.7b");
  models::Plan none;
  none.gbs = 4;
  none.zero = 0;
  models::Plan full = none;
  full.recompute = models::Recompute::full;
  models::Plan bad = none;
  bad.mbs = 2;
  bad.gbs = 3;
  PlanRanking r = rank_plans(model, {full, bad, none}, s->cluster, s->collectives, s->compute);
  ASSERT_EQ(r.ranked.size(), 2u);
  EXPECT_EQ(r.ranked[0].plan.recompute, models::Recompute::none);
  EXPECT_EQ(r.ranked[1].plan.recompute, models::Recompute::full);
  EXPECT_LT(r.ranked[0].step_time_s, r.ranked[1].step_time_s);
  ASSERT_EQ(r.rejected.size(), 1u);
  EXPECT_EQ(r.rejected[0].reason.rfind("invalid: ", 0), 0u) << r.rejected[0].reason;

  PlanRanking big = rank_plans(model_of("gpt3-175b"), {none}, s->cluster, s->collectives, s->compute);
  ASSERT_EQ(big.rejected.size(), 1u);
  EXPECT_EQ(big.rejected[0].reason.rfind("out of memory: ", 0), 0u) << big.rejected[0].reason;
}
