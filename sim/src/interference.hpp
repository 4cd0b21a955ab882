// Work whose progress rate depends on what else runs on its ranks (SimOptions::interference): a
// compute task slows down while an NVLink collective or transfer of its rank runs (rate 1/slowed),
// and such a communication slows down while any of its ranks computes (rate 1/slows, the largest
// `slows` of the compute tasks running on its ranks). Factors are the task's own
// (TaskGraph::interference) where set, the simulation's Interference otherwise. Each item keeps its remaining
// work in "alone" nanoseconds; when the rate changes, the work done so far is booked at the old
// rate and the completion event is moved.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "scalescope/sim/engine.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope::detail {

class InterferenceTracker {
 public:
  /// Called once when an item's work is done, with the `tag` and `owner` given to start_*().
  using DoneFn = void (*)(void* context, std::uint8_t tag, std::uint32_t owner);

  InterferenceTracker(Engine& engine, Interference factors, int rank_bound, DoneFn done, void* context);

  /// A compute task of `alone` duration starts now on `rank`. `slowed` / `slows`: its own factors
  /// (TaskGraph::interference); 0 = the tracker's Interference.
  void start_compute(int rank, SimTime alone, std::uint8_t tag, std::uint32_t owner, double slowed = 0.0,
                     double slows = 0.0);
  /// A communication of `alone` duration (its time with nothing beside it) starts now on `ranks`.
  void start_comm(std::span<const int> ranks, SimTime alone, std::uint8_t tag, std::uint32_t owner);

 private:
  struct Item {
    double work_ns = 0;  ///< remaining, at rate 1
    double rate = 1;     ///< progress per simulated ns
    SimTime last = 0;    ///< when work_ns was last brought up to date
    EventId event;
    std::uint32_t owner = 0;
    std::uint8_t tag = 0;
    bool comm = false;
    double slowed = 1.0;     ///< compute: time multiplier beside communication
    double slows = 1.0;      ///< compute: multiplier it puts on communication beside it
    std::vector<int> ranks;  ///< one rank for compute
  };

  std::uint32_t acquire(SimTime alone, std::uint8_t tag, std::uint32_t owner, bool comm);
  double rate_of(const Item& item) const;
  void schedule(std::uint32_t slot);
  void rerate(std::uint32_t slot);
  void start(std::uint32_t slot);
  void occupy(std::uint32_t slot, bool add);
  void complete(std::uint32_t slot);

  Engine& engine_;
  Interference f_;
  DoneFn done_;
  void* context_;
  std::vector<Item> items_;
  std::vector<std::uint32_t> free_;
  std::vector<std::vector<std::uint32_t>> computing_;  ///< per rank: running compute items
  std::vector<std::vector<std::uint32_t>> talking_;    ///< per rank: running communication items
};

}  // namespace scalescope::detail
