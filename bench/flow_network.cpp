// Flow network speed on the ring all-reduce pattern: N = 1,024 flows i -> i+1 per step, each
// over 3 resources, 2,046 steps (2 (N - 1), as in a ring all-reduce), each step started when
// the previous one has fully ended.
#include "scalescope/sim/flow_network.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

namespace {

using namespace scalescope;

constexpr int kRanks = 1024;
constexpr int kSteps = 2 * (kRanks - 1);

enum Layout : std::int64_t {
  kShared = 0,    // resources 0..N-1 in a ring; flow i uses i, i+1, i+2: one big component
  kDisjoint = 1,  // 3N resources; flow i uses out[i], mid[i], in[i+1]: N tiny components
};

void BM_RingAllReduce(benchmark::State& state) {
  const auto layout = static_cast<Layout>(state.range(0));
  const double latency_us = static_cast<double>(state.range(1));
  const int n_res = layout == kShared ? kRanks : 3 * kRanks;
  std::uint64_t flows = 0;
  std::uint64_t recomputations = 0;
  SimTime sim_end = 0;
  for (auto _ : state) {
    Engine e;
    FlowNetwork net(e, std::vector<BytesPerSecond>(static_cast<std::size_t>(n_res), GBps(100)));
    // The step driver; on_done captures one pointer, as a task-graph executor's would.
    struct Driver {
      FlowNetwork* net;
      Layout layout;
      Seconds latency;
      int step = 0;
      int left = 0;
      void start_step() {
        left = kRanks;
        for (int i = 0; i < kRanks; ++i) {
          const int j = (i + 1) % kRanks;
          std::vector<int> route = layout == kShared
                                       ? std::vector<int>{i, j, (i + 2) % kRanks}
                                       : std::vector<int>{i, kRanks + i, 2 * kRanks + j};
          net->start(
              std::move(route), MiB(1), [this](FlowId) { on_done(); }, latency);
        }
      }
      void on_done() {
        if (--left == 0 && ++step < kSteps) start_step();
      }
    } driver{&net, layout, microseconds(latency_us)};
    driver.start_step();
    e.run();
    if (driver.step != kSteps) state.SkipWithError("ring did not complete");
    flows += static_cast<std::uint64_t>(kRanks) * kSteps;
    recomputations = net.recomputations();
    sim_end = e.now();
  }
  state.counters["flows_per_s"] =
      benchmark::Counter(static_cast<double>(flows), benchmark::Counter::kIsRate);
  state.counters["recomputations"] = static_cast<double>(recomputations);
  state.counters["sim_ms"] = static_cast<double>(sim_end) * 1e-6;
}
BENCHMARK(BM_RingAllReduce)
    ->ArgNames({"disjoint", "latency_us"})
    ->Args({kShared, 0})
    ->Args({kDisjoint, 0})
    ->Args({kShared, 5})
    ->Unit(benchmark::kMillisecond);

}  // namespace
