// Max-min solver speed: one solve of the ring all-reduce step (1,024 flows over 3 resources
// each), with the resources shared (one component) or private to each flow.
#include "scalescope/sim/maxmin.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace {

using scalescope::MaxMinInput;
using scalescope::MaxMinSolver;

void BM_MaxMinRing(benchmark::State& state) {
  const bool disjoint = state.range(0) != 0;
  const std::uint32_t n = 1024;
  const std::uint32_t n_res = disjoint ? 3 * n : n;
  std::vector<double> capacity(n_res, 100e9);
  std::vector<std::uint32_t> offsets{0};
  std::vector<std::uint32_t> resources;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (disjoint) {
      resources.insert(resources.end(), {i, n + i, 2 * n + (i + 1) % n});
    } else {
      resources.insert(resources.end(), {i, (i + 1) % n, (i + 2) % n});
    }
    offsets.push_back(static_cast<std::uint32_t>(resources.size()));
  }
  std::vector<double> rate(n);
  MaxMinSolver solver;
  for (auto _ : state) {
    solver.solve(MaxMinInput{capacity, offsets, resources, {}, {}}, rate);
    benchmark::DoNotOptimize(rate.data());
  }
  state.counters["flows_per_s"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MaxMinRing)->ArgName("disjoint")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
