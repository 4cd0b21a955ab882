// Statistics of a simulated iteration as an observer: per-rank busy time per category, FLOPs,
// bytes, and the breakdown (rules in simulator.hpp), computed by a sweep over task start/end
// events.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "scalescope/sim/simulator.hpp"

namespace scalescope {

/// Sweeps each rank's timeline as task events arrive (they come in time order), so it needs no
/// per-task storage: O(ranks) memory. simulate() runs one internally; attach another to observe
/// a run yourself.
class StatsCollector final : public SimObserver {
 public:
  void simulation_started(const TaskGraph& graph) override;
  void task_started(int rank, int stream, TaskId task, SimTime t) override;
  void task_finished(int rank, int stream, TaskId task, SimTime t) override;
  void simulation_finished(SimTime step_end) override;

  /// After simulation_finished: per present rank (ascending), critical rank, breakdowns.
  void fill(SimResult& result) const;

 private:
  static constexpr int kBuckets = kNumBreakdownParts - 1;  // BreakdownPart without bubble
  struct RankState {
    SimTime last = 0;
    std::uint32_t mask = 0;                       // bit b set while a task of breakdown part b runs
    std::array<std::int32_t, kBuckets> active{};  // running tasks per breakdown part
    std::array<double, kBuckets + 1> part_ns{};   // accumulated breakdown, ns
    std::array<SimTime, kNumTaskCategories>
        busy_ns{};  // sum of (end - start): -start at start, +end at end
    double flops = 0.0;
    double comm_bytes = 0.0;
    SimTime end = 0;
    bool present = false;
  };
  void advance(RankState& s, SimTime t) const;
  static int bucket_of(const Task& t);

  const TaskGraph* graph_ = nullptr;
  std::vector<RankState> ranks_;
  SimTime step_end_ = 0;
};

/// The median of `values` (the mean of the middle two for an even count); NaN when empty.
double median(std::vector<double> values);

}  // namespace scalescope
