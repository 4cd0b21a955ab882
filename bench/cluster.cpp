// Speed of the cluster graph: loading 1,024- and 1,120-GPU clusters, one route, bisection
// bandwidth.
#include "scalescope/sim/cluster.hpp"

#include <benchmark/benchmark.h>

#include <string>

namespace {

using scalescope::Cluster;

std::string topology(const char* name) {
  return std::string(SCALESCOPE_SOURCE_DIR) + "/topologies/" + name + ".json";
}

void BM_LoadRailOptimized1024Gpus(benchmark::State& state) {
  for (auto _ : state) {
    auto c = scalescope::load_cluster(topology("h100-rail-ndr"));
    if (!c) state.SkipWithError(c.error().str().c_str());
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_LoadRailOptimized1024Gpus)->Unit(benchmark::kMillisecond);

void BM_LoadSuperpod1120Gpus(benchmark::State& state) {
  for (auto _ : state) {
    auto c = scalescope::load_cluster(topology("superpod-a100"));
    if (!c) state.SkipWithError(c.error().str().c_str());
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_LoadSuperpod1120Gpus)->Unit(benchmark::kMillisecond);

void BM_RouteInterNode(benchmark::State& state) {
  const Cluster c = std::move(scalescope::load_cluster(topology("superpod-a100"))).take_or_throw();
  int i = 0;
  for (auto _ : state) {
    const int a = i, b = (i * 7919 + 13) % c.num_gpus();  // a spread of pairs, most across nodes
    benchmark::DoNotOptimize(c.route(a, b, static_cast<std::uint64_t>(i)));
    i = (i + 1) % c.num_gpus();
  }
}
BENCHMARK(BM_RouteInterNode);

void BM_RouteIntraNode(benchmark::State& state) {
  const Cluster c = std::move(scalescope::load_cluster(topology("dgx-h100-8"))).take_or_throw();
  int i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(c.route(i % 8, (i + 3) % 8));
    ++i;
  }
}
BENCHMARK(BM_RouteIntraNode);

void BM_BisectionRailOptimized1024Gpus(benchmark::State& state) {
  const Cluster c = std::move(scalescope::load_cluster(topology("h100-rail-ndr"))).take_or_throw();
  for (auto _ : state) benchmark::DoNotOptimize(c.bisection_bandwidth());
}
BENCHMARK(BM_BisectionRailOptimized1024Gpus)->Unit(benchmark::kMillisecond);

}  // namespace
