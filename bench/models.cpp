// Speed of the models library calls the planner makes per candidate plan: parse, validate,
// parameter counts, FLOPs per token and the per-rank memory peak.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/memory.hpp"

namespace {

using namespace scalescope::models;

ModelSpec model(const char* name) {
  auto m = load_model_by_name_or_path(name);
  if (!m) std::abort();  // the catalog is part of the source tree
  return *m;
}

void BM_ParseAndValidatePlan(benchmark::State& state) {
  const ModelSpec m = model("llama3-70b");
  for (auto _ : state) {
    auto p = parse_plan("tp=8,pp=4,dp=32,zero=1,mbs=1,gbs=1536,schedule=1f1b,sp=true");
    auto v = validate(*p, m, 1024);
    benchmark::DoNotOptimize(v);
  }
}
BENCHMARK(BM_ParseAndValidatePlan);

void BM_FlopsPerToken(benchmark::State& state) {
  const ModelSpec m = model("llama3-405b");
  for (auto _ : state)
    benchmark::DoNotOptimize(flops_per_token(m, {.recompute = Recompute::selective}));
}
BENCHMARK(BM_FlopsPerToken);

/// Peak memory over all pp stages (the planner's memory check for one plan).
void BM_PeakMemory(benchmark::State& state) {
  const ModelSpec m = model("llama3-405b");
  Plan p;
  p.tp = 8;
  p.pp = static_cast<int>(state.range(0));
  p.dp = 16;
  p.gbs = 2048;
  p.zero = 1;
  p.sp = true;
  for (auto _ : state) benchmark::DoNotOptimize(peak_memory(m, p));
}
BENCHMARK(BM_PeakMemory)->Arg(1)->Arg(9)->Arg(63);

}  // namespace
