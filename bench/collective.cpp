// Collective model speed: analytical per-call cost at 8 and 1,024 GPUs once the rank group is
// cached, and a flow-fidelity 1 GiB all_reduce over 1,024 GPUs (h100-rail-ndr, 128 nodes), as
// chosen (tree) and with the ring forced.
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "scalescope/sim/collective.hpp"

namespace {

using namespace scalescope;

const Cluster& cluster(const std::string& name) {
  static const Cluster dgx = [] {
    auto c = load_cluster_by_name_or_path("dgx-h100-8");
    if (!c) std::abort();
    return std::move(c).value();
  }();
  static const Cluster rail = [] {
    ClusterOptions o;
    o.nodes = 128;
    auto c = load_cluster_by_name_or_path("h100-rail-ndr", o);
    if (!c) std::abort();
    return std::move(c).value();
  }();
  return name == "dgx-h100-8" ? dgx : rail;
}

std::vector<int> first_ranks(int n) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

// Each call picks the fastest (algorithm, protocol) for a size that changes every call.
void BM_Analytical(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const Cluster& c = n <= 8 ? cluster("dgx-h100-8") : cluster("h100-rail-ndr");
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = first_ranks(n);
  (void)m.analytical(CollOp::all_reduce, ranks, Bytes(1 << 20));  // warm-up: builds the group
  double size = 8;
  for (auto _ : state) {
    benchmark::DoNotOptimize(m.analytical(CollOp::all_reduce, ranks, Bytes(size)));
    size = size >= 1e9 ? 8 : size * 2;
  }
}
BENCHMARK(BM_Analytical)->Arg(8)->Arg(1024)->Unit(benchmark::kMicrosecond);

void BM_AnalyticalFirstCall(benchmark::State& state) {
  const Cluster& c = cluster("h100-rail-ndr");
  const auto ranks = first_ranks(1024);
  for (auto _ : state) {
    const CollectiveModel m(c, datasheet_collective_params());
    benchmark::DoNotOptimize(m.analytical(CollOp::all_reduce, ranks, Bytes(1 << 30)));
  }
}
BENCHMARK(BM_AnalyticalFirstCall)->Unit(benchmark::kMillisecond);

// 1 GiB all_reduce on 1,024 GPUs at flow fidelity (group cached: the simulation alone).
void BM_FlowAllReduce1024(benchmark::State& state) {
  const Cluster& c = cluster("h100-rail-ndr");
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = first_ranks(1024);
  (void)m.analytical(CollOp::all_reduce, ranks, Bytes(1 << 30));
  double simulated = 0;
  for (auto _ : state) simulated = m.simulate_flow(CollOp::all_reduce, ranks, Bytes(1 << 30)).time.value;
  state.counters["simulated_ms"] = simulated * 1e3;
}
BENCHMARK(BM_FlowAllReduce1024)->Unit(benchmark::kMillisecond)->Iterations(3);

// The same with the ring forced (2,046 steps in 16 phases of 16,384 flows).
void BM_FlowRingAllReduce1024(benchmark::State& state) {
  const Cluster& c = cluster("h100-rail-ndr");
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = first_ranks(1024);
  FlowRunOptions o;
  o.algorithm = Algorithm::ring;
  o.protocol = Protocol::Simple;
  (void)m.analytical(CollOp::all_reduce, ranks, Bytes(1 << 30), o.algorithm, o.protocol);
  double simulated = 0;
  for (auto _ : state) simulated = m.simulate_flow(CollOp::all_reduce, ranks, Bytes(1 << 30), o).time.value;
  state.counters["simulated_ms"] = simulated * 1e3;
}
BENCHMARK(BM_FlowRingAllReduce1024)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
