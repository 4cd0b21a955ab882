// Speed of the plan search: GPT-3 175B on 1,024 H100 GPUs of h100-rail-ndr, gbs 1536, every plan
// enumerated, pruned by memory and simulated (symmetric analytical) on all cores (target < 5 s on
// the 2-core build machine). Flow confirmation is left out (it is timed by bench_simulate).
// Counters: plans enumerated, simulated, skipped by the step-time bound (planner/bound.hpp), fitting
// candidates decided per second, and plans simulated per second.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "scalescope/planner/search.hpp"
#include "scalescope/planner/setup.hpp"

namespace {

using namespace scalescope;

void BM_PlanSearchGpt3_1024(benchmark::State& state) {
  ClusterOptions co;
  co.nodes = 128;
  auto setup = planner::load_setup("h100-rail-ndr", co, "");
  auto model = models::load_model_by_name_or_path("gpt3-175b");
  if (!setup || !model) std::abort();  // built-in files of the source tree
  const planner::EvalSetup& s = **setup;
  planner::SearchSpace space;
  space.gpus = 1024;
  space.gbs = 1536;
  planner::SearchOptions o;
  o.top = 10;
  o.flow_top = 0;
  o.threads = static_cast<int>(state.range(0));
  long evaluated = 0, plans = 0, bounded = 0;
  for (auto _ : state) {
    auto r = planner::search(*model, s.cluster, s.collectives, s.compute, space, o);
    if (!r || r->ranked.empty()) std::abort();
    evaluated = r->counts.evaluated;
    plans = r->counts.plans;
    bounded = r->counts.bounded;
    benchmark::DoNotOptimize(r->ranked.front().step_time_s);
  }
  state.counters["plans_enumerated"] = static_cast<double>(plans);
  state.counters["plans_simulated"] = static_cast<double>(evaluated);
  state.counters["plans_skipped_by_bound"] = static_cast<double>(bounded);
  // Fitting candidates decided (simulated, or skipped because their lower bound cannot reach the top).
  state.counters["candidates_per_s"] = benchmark::Counter(
      static_cast<double>(evaluated + bounded) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["plans_per_s"] =
      benchmark::Counter(static_cast<double>(evaluated) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
// range(0): worker threads (0 = all cores). Real time: the work runs on worker threads.
BENCHMARK(BM_PlanSearchGpt3_1024)->Arg(0)->Arg(1)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

}  // namespace
