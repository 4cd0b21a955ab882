// Rate-stretched compute and communication (see interference.hpp).
#include "interference.hpp"

#include <algorithm>
#include <cmath>

namespace scalescope::detail {

InterferenceTracker::InterferenceTracker(Engine& engine, Interference factors, int rank_bound, DoneFn done,
                                         void* context)
    : engine_(engine),
      f_(factors),
      done_(done),
      context_(context),
      computing_(static_cast<std::size_t>(rank_bound)),
      talking_(static_cast<std::size_t>(rank_bound)) {}

std::uint32_t InterferenceTracker::acquire(SimTime alone, std::uint8_t tag, std::uint32_t owner, bool comm) {
  std::uint32_t slot;
  if (free_.empty()) {
    slot = static_cast<std::uint32_t>(items_.size());
    items_.emplace_back();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  Item& it = items_[slot];
  it.work_ns = static_cast<double>(alone);
  it.last = engine_.now();
  it.owner = owner;
  it.tag = tag;
  it.comm = comm;
  it.ranks.clear();
  return slot;
}

double InterferenceTracker::rate_of(const Item& item) const {
  if (!item.comm) {
    return talking_[static_cast<std::size_t>(item.ranks.front())].empty() ? 1.0 : 1.0 / item.slowed;
  }
  double worst = 0.0;  // the largest factor of the compute running on any of its ranks
  for (int r : item.ranks) {
    for (std::uint32_t c : computing_[static_cast<std::size_t>(r)]) worst = std::max(worst, items_[c].slows);
  }
  return worst > 0.0 ? 1.0 / worst : 1.0;
}

void InterferenceTracker::schedule(std::uint32_t slot) {
  const Item& it = items_[slot];
  const double dt = std::max(0.0, std::round(it.work_ns / it.rate));
  items_[slot].event = engine_.schedule_after(static_cast<SimTime>(dt), [this, slot] { complete(slot); });
}

void InterferenceTracker::rerate(std::uint32_t slot) {
  Item& it = items_[slot];
  const double rate = rate_of(it);
  if (rate == it.rate) return;
  const SimTime now = engine_.now();
  it.work_ns = std::max(0.0, it.work_ns - static_cast<double>(now - it.last) * it.rate);
  it.last = now;
  it.rate = rate;
  engine_.cancel(it.event);
  schedule(slot);
}

// Puts `slot` on (or takes it off) the per-rank lists of its kind. Compute on a rank changes the rate of
// that rank's communication whenever it starts or ends (the largest factor may change); communication
// changes the rate of the rank's compute only where the rank's list turns non-empty (or empty).
void InterferenceTracker::occupy(std::uint32_t slot, bool add) {
  const bool comm = items_[slot].comm;
  auto& own = comm ? talking_ : computing_;
  auto& other = comm ? computing_ : talking_;
  for (int rank : items_[slot].ranks) {
    auto& mine = own[static_cast<std::size_t>(rank)];
    if (add) {
      mine.push_back(slot);
    } else {
      mine.erase(std::find(mine.begin(), mine.end(), slot));
    }
    if (!comm || mine.size() == (add ? 1u : 0u)) {
      for (std::uint32_t c : other[static_cast<std::size_t>(rank)]) rerate(c);
    }
  }
}

void InterferenceTracker::start(std::uint32_t slot) {
  occupy(slot, true);
  items_[slot].rate = rate_of(items_[slot]);
  schedule(slot);
}

void InterferenceTracker::start_compute(int rank, SimTime alone, std::uint8_t tag, std::uint32_t owner,
                                        double slowed, double slows) {
  const std::uint32_t slot = acquire(alone, tag, owner, false);
  items_[slot].slowed = slowed > 0.0 ? slowed : f_.compute_slowdown;
  items_[slot].slows = slows > 0.0 ? slows : f_.comm_slowdown;
  items_[slot].ranks.push_back(rank);
  start(slot);
}

void InterferenceTracker::start_comm(std::span<const int> ranks, SimTime alone, std::uint8_t tag,
                                     std::uint32_t owner) {
  const std::uint32_t slot = acquire(alone, tag, owner, true);
  items_[slot].ranks.assign(ranks.begin(), ranks.end());
  start(slot);
}

void InterferenceTracker::complete(std::uint32_t slot) {
  const std::uint32_t owner = items_[slot].owner;
  const std::uint8_t tag = items_[slot].tag;
  occupy(slot, false);
  free_.push_back(slot);
  done_(context_, tag, owner);
}

}  // namespace scalescope::detail
