// FlowNetwork's once-per-instant re-solve: find the connected components (resources linked by
// flows) touched since the last resolve, bring their flows' bytes up to date, solve each
// component's max-min problem and reschedule the completions whose rate changed.
#include <algorithm>
#include <cassert>
#include <cmath>

#include "scalescope/sim/flow_network.hpp"

namespace scalescope {
namespace {

constexpr double kSecondsPerNs = 1e-9;

/// Nanoseconds to move `bytes` at `rate`, rounded up. A relative 1e-12 is forgiven first so
/// that a quotient such as 1e7 + 2e-9 (floating-point noise) does not become 1e7 + 1.
SimTime duration_ns(double bytes, double rate) {
  const double ns = bytes / rate * 1e9;
  if (!(ns < 9e18)) return kSimTimeMax;  // also catches NaN
  return static_cast<SimTime>(std::ceil(ns * (1.0 - 1e-12)));
}

}  // namespace

void FlowNetwork::collect_components() {
  ++stamp_;
  comp_flows_.clear();
  comp_res_.clear();
  comp_ends_.clear();
  auto add_resource = [&](int r) {
    if (res_mark_[r] != stamp_) {
      res_mark_[r] = stamp_;
      comp_res_.push_back(r);
    }
  };
  auto add_flow = [&](std::uint32_t f) {
    Flow& fl = flows_[f];
    if (fl.mark == stamp_) return;
    fl.mark = stamp_;
    comp_flows_.push_back(f);
    for (const Hop& hop : fl.hops)
      if (!slack(hop.resource)) add_resource(hop.resource);
  };
  // Breadth-first over resource -> flows -> resources from each seed not yet reached; each
  // search closes one connected component.
  auto close_component = [&](std::size_t first_res) {
    for (std::size_t i = first_res; i < comp_res_.size(); ++i) {
      const int r = comp_res_[i];
      for (const User& u : users_[r]) add_flow(u.flow);
    }
    if (comp_ends_.empty() || comp_ends_.back().flows < comp_flows_.size()) {
      comp_ends_.push_back({comp_flows_.size(), comp_res_.size()});
    }
  };
  for (const int r : dirty_res_) {
    res_dirty_[r] = 0;
    if (users_[r].empty() || res_mark_[r] == stamp_) continue;
    if (slack(r)) {  // it may have bound its flows until now: each is a seed of its own
      for (std::size_t i = 0; i < users_[r].size(); ++i) {
        const std::uint32_t f = users_[r][i].flow;
        if (flows_[f].mark == stamp_) continue;
        const std::size_t first = comp_res_.size();
        add_flow(f);
        close_component(first);
      }
      continue;
    }
    const std::size_t first = comp_res_.size();
    add_resource(r);
    close_component(first);
  }
  for (const std::uint32_t f : dirty_flows_) {
    if (flows_[f].state != State::transferring || flows_[f].mark == stamp_) continue;
    const std::size_t first = comp_res_.size();
    add_flow(f);
    close_component(first);
  }
  dirty_res_.clear();
  dirty_flows_.clear();
}

void FlowNetwork::solve_component(std::size_t flow_begin, std::size_t flow_end,
                                  std::size_t res_begin, std::size_t res_end) {
  if (flow_end - flow_begin == 1) {  // alone on its resources: the tightest of them, or its cap
    local_rate_[flow_begin] = flows_[comp_flows_[flow_begin]].bound;
    return;
  }
  local_capacity_.clear();
  for (std::size_t i = res_begin; i < res_end; ++i) {
    res_local_[comp_res_[i]] = static_cast<std::uint32_t>(i - res_begin);
    local_capacity_.push_back(capacity_[comp_res_[i]]);
  }
  local_offsets_.assign(1, 0);
  local_resources_.clear();
  local_bound_.clear();
  local_count_.clear();
  bool aggregated = false;
  for (std::size_t j = flow_begin; j < flow_end; ++j) {
    const Flow& fl = flows_[comp_flows_[j]];
    for (const Hop& hop : fl.hops)
      if (res_mark_[hop.resource] == stamp_) local_resources_.push_back(res_local_[hop.resource]);
    local_offsets_.push_back(static_cast<std::uint32_t>(local_resources_.size()));
    local_bound_.push_back(fl.bound);
    local_count_.push_back(fl.count);
    aggregated = aggregated || fl.count > 1;
  }
  solver_.solve(MaxMinInput{local_capacity_, local_offsets_, local_resources_, local_bound_,
                            aggregated ? std::span<const std::uint32_t>(local_count_) : std::span<const std::uint32_t>()},
                std::span<double>(local_rate_).subspan(flow_begin, flow_end - flow_begin));
}

void FlowNetwork::resolve() {
  resolve_event_ = {};
  collect_components();
  if (comp_flows_.empty()) return;
  ++recomputations_;
  flows_resolved_ += comp_flows_.size();
  const SimTime now = engine_.now();

  // Bring remaining bytes and per-resource counters up to now at the old rates.
  for (const std::uint32_t f : comp_flows_) {
    Flow& fl = flows_[f];
    const SimTime dt = now - fl.last_update;
    if (dt > 0 && fl.rate > 0.0) {
      const double moved =
          std::min(fl.rate * static_cast<double>(dt) * kSecondsPerNs, std::max(fl.remaining, 0.0));
      fl.remaining -= moved;
      for (const Hop& hop : fl.hops) carried_[hop.resource] += moved * fl.count;
    }
    fl.last_update = now;
  }

  // Each component is an independent max-min problem.
  local_rate_.resize(comp_flows_.size());
  std::size_t flow_begin = 0;
  std::size_t res_begin = 0;
  for (const ComponentEnd& end : comp_ends_) {
    solve_component(flow_begin, end.flows, res_begin, end.resources);
    flow_begin = end.flows;
    res_begin = end.resources;
  }

  // New rates; reschedule completions only where the rate changed.
  completions_.clear();
  for (std::size_t j = 0; j < comp_flows_.size(); ++j) {
    const std::uint32_t f = comp_flows_[j];
    Flow& fl = flows_[f];
    const double x = local_rate_[j];
    const bool changed = x != fl.rate;
    fl.rate = x;
    if (fl.remaining <= kDoneBytes) {
      leave_batch(f);
      completions_.push_back({now, f});
    } else if (changed || fl.batch == kNoBatch) {
      leave_batch(f);
      if (x > 0.0) {
        const SimTime dt = duration_ns(fl.remaining, x);
        completions_.push_back({dt > kSimTimeMax - now ? kSimTimeMax : now + dt, f});
      }
    }
  }
  auto earlier = [](const Completion& a, const Completion& b) { return a.time < b.time; };
  if (!std::is_sorted(completions_.begin(), completions_.end(), earlier)) {
    std::stable_sort(completions_.begin(), completions_.end(), earlier);
  }
  schedule_completions(completions_);
}

}  // namespace scalescope
