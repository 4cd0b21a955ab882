// Cost of every-rank flow fidelity as the cluster grows: GPT-3 175B (tp=8, pp=8, 96 micro-batches per
// pipeline, 1F1B, full recompute) and Llama 3 405B (tp=8, pp=2, ZeRO-1, 16 micro-batches per pipeline, 1F1B,
// full recompute) on h100-ndr-multiplane at 1,024 ... 131,072 GPUs: build + simulate, with the TP rail
// classes the flow fidelity uses on rail-symmetric clusters (models::PredictOptions::rail_classes).
// Targets (issue 22): 16,384 GPUs in <= 60 s and <= 8 GB, 131,072 GPUs in <= 10 min on a 2-core machine.
// Run one size per process (peak RSS is per process), e.g. --benchmark_filter='Gpt3/16384'.
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "scalescope/models/predict.hpp"
#include "scalescope/sim/collective.hpp"

namespace {

using namespace scalescope;
using namespace scalescope::models;

double max_rss_GiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB on Linux
}

void run(benchmark::State& state, const char* model_name, int tp, int pp, int zero, int micro_batches) {
  const int gpus = static_cast<int>(state.range(0));
  const int dp = gpus / (tp * pp);
  auto cluster = load_cluster_by_name_or_path("h100-ndr-multiplane", ClusterOptions{{}, gpus});
  auto model = load_model_by_name_or_path(model_name);
  auto plan = parse_plan("tp=" + std::to_string(tp) + ",pp=" + std::to_string(pp) + ",dp=" + std::to_string(dp) +
                         ",zero=" + std::to_string(zero) + ",mbs=1,gbs=" + std::to_string(micro_batches * dp) +
                         ",schedule=1f1b,recompute=full");
  if (!cluster || !model || !plan) std::abort();  // built-in files of the source tree
  auto compute = ComputeModel::datasheet(cluster->gpu_spec());
  if (!compute) std::abort();
  const CollectiveModel collectives(*cluster, datasheet_collective_params());
  PredictOptions o;
  o.fidelity = Fidelity::flow;
  double step = 0, ranks = 0, events = 0;
  for (auto _ : state) {
    auto p = predict(*model, *plan, *cluster, collectives, *compute, o);
    if (!p) {
      std::fprintf(stderr, "%s\n", p.error().str().c_str());
      std::abort();
    }
    step = p->step_time_s;
    ranks = static_cast<double>(p->sim.ranks.size());
    events = static_cast<double>(p->sim.events);
    benchmark::DoNotOptimize(p);
  }
  state.counters["step_s"] = step;
  state.counters["simulated_ranks"] = ranks;
  state.counters["events"] = events;
  state.counters["max_rss_GiB"] = max_rss_GiB();
}

void BM_Gpt3(benchmark::State& state) { run(state, "gpt3-175b", 8, 8, 0, 96); }
BENCHMARK(BM_Gpt3)->Arg(1024)->Arg(4096)->Arg(16384)->Arg(65536)->Arg(131072)->Unit(benchmark::kSecond)->Iterations(1);

void BM_Llama3_405B(benchmark::State& state) { run(state, "llama3-405b", 8, 2, 1, 16); }
BENCHMARK(BM_Llama3_405B)
    ->Arg(1024)
    ->Arg(4096)
    ->Arg(16384)
    ->Arg(65536)
    ->Arg(131072)
    ->Unit(benchmark::kSecond)
    ->Iterations(1);

}  // namespace
