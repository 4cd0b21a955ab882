// Max-min fair sharing by progressive filling with a lazily re-keyed heap of resource shares.
#include "scalescope/sim/maxmin.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace scalescope {
namespace {

// Relative tolerance under which a resource's fair share is taken to equal the current fill
// level (see the header).
constexpr double kLevelTolerance = 1e-12;

}  // namespace

void MaxMinSolver::freeze(std::uint32_t f, double x, const MaxMinInput& in,
                          std::span<double> rate) {
  rate[f] = x;
  frozen_[f] = 1;
  --unfrozen_;
  const bool finite = std::isfinite(x);
  const std::uint32_t m = in.multiplicity.empty() ? 1u : in.multiplicity[f];
  const double used = x * m;
  for (std::uint32_t k = in.flow_offsets[f]; k < in.flow_offsets[f + 1]; ++k) {
    const std::uint32_t r = in.flow_resources[k];
    users_[r] -= m;
    if (finite) remaining_[r] -= used;
  }
}

void MaxMinSolver::solve(const MaxMinInput& in, std::span<double> rate) {
  const std::size_t n_res = in.capacity.size();
  const std::size_t n_flows = in.flow_offsets.empty() ? 0 : in.flow_offsets.size() - 1;
  assert(rate.size() == n_flows && "MaxMinSolver: one rate per flow");
  assert((in.bound.empty() || in.bound.size() == n_flows) && "MaxMinSolver: one bound per flow");
  assert((in.multiplicity.empty() || in.multiplicity.size() == n_flows) && "MaxMinSolver: one multiplicity per flow");
  auto bound_of = [&](std::uint32_t f) { return in.bound.empty() ? kUnboundedRate : in.bound[f]; };

  remaining_.assign(in.capacity.begin(), in.capacity.end());
  users_.assign(n_res, 0);
  res_offsets_.assign(n_res + 1, 0);
  for (std::uint32_t f = 0; f < n_flows; ++f) {
    const std::uint32_t m = in.multiplicity.empty() ? 1u : in.multiplicity[f];
    assert(m >= 1 && "MaxMinSolver: multiplicity must be at least 1");
    for (std::uint32_t k = in.flow_offsets[f]; k < in.flow_offsets[f + 1]; ++k) {
      const std::uint32_t r = in.flow_resources[k];
      assert(r < n_res && "MaxMinSolver: resource index out of range");
      users_[r] += m;
      ++res_offsets_[r + 1];
    }
  }
  // Resource -> flows adjacency (counting sort; flows appear in increasing index order).
  for (std::size_t r = 0; r < n_res; ++r) res_offsets_[r + 1] += res_offsets_[r];
  res_flows_.resize(in.flow_resources.size());
  for (std::uint32_t f = 0; f < n_flows; ++f) {
    for (std::uint32_t k = in.flow_offsets[f]; k < in.flow_offsets[f + 1]; ++k) {
      res_flows_[res_offsets_[in.flow_resources[k]]++] = f;
    }
  }
  for (std::size_t r = n_res; r > 0; --r) res_offsets_[r] = res_offsets_[r - 1];
  res_offsets_[0] = 0;

  frozen_.assign(n_flows, 0);
  unfrozen_ = 0;
  by_bound_.clear();
  for (std::uint32_t f = 0; f < n_flows; ++f) {
    assert(bound_of(f) >= 0.0 && "MaxMinSolver: negative bound");
    if (in.flow_offsets[f] == in.flow_offsets[f + 1]) {  // uses no resource: gets its bound
      rate[f] = bound_of(f);
      frozen_[f] = 1;
      continue;
    }
    ++unfrozen_;
    if (std::isfinite(bound_of(f))) by_bound_.push_back(f);
  }
  std::stable_sort(by_bound_.begin(), by_bound_.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return bound_of(a) < bound_of(b); });

  auto share = [&](std::uint32_t r) { return std::max(remaining_[r], 0.0) / static_cast<double>(users_[r]); };
  auto less = [](const HeapItem& a, const HeapItem& b) {
    return a.share < b.share || (a.share == b.share && a.resource < b.resource);
  };
  auto after = [&](const HeapItem& a, const HeapItem& b) { return less(b, a); };

  // Candidates for the next saturated resource: every used resource sorted by its initial
  // (share, index), consumed front to back, plus a min-heap of those whose share has risen
  // since. Resources whose flows all froze elsewhere are skipped in O(1) in the sorted part.
  order_.clear();
  for (std::uint32_t r = 0; r < n_res; ++r) {
    assert(in.capacity[r] >= 0.0 && "MaxMinSolver: negative capacity");
    if (users_[r] > 0) order_.push_back({share(r), r});
  }
  if (!std::is_sorted(order_.begin(), order_.end(), less)) {
    std::sort(order_.begin(), order_.end(), less);
  }
  heap_.clear();
  std::size_t next = 0;

  double level = 0.0;
  const auto at_level = [&](double s) { return s <= level * (1.0 + kLevelTolerance); };
  std::size_t next_bounded = 0;
  while (unfrozen_ > 0) {
    // Front of the sorted part, brought up to date.
    for (; next < order_.size(); ++next) {
      HeapItem& item = order_[next];
      if (users_[item.resource] == 0) continue;
      const double cur = share(item.resource);
      if (cur == item.share) break;
      if (at_level(cur)) {  // still saturates at the current level: no need to re-key
        item.share = cur;
        break;
      }
      heap_.push_back({cur, item.resource});
      std::push_heap(heap_.begin(), heap_.end(), after);
    }
    // Top of the heap, brought up to date.
    while (!heap_.empty()) {
      const HeapItem top = heap_.front();
      if (users_[top.resource] > 0 && share(top.resource) == top.share) break;
      std::pop_heap(heap_.begin(), heap_.end(), after);
      if (users_[top.resource] > 0) {
        heap_.back().share = share(top.resource);
        std::push_heap(heap_.begin(), heap_.end(), after);
      } else {
        heap_.pop_back();
      }
    }
    const bool from_order =
        next < order_.size() && (heap_.empty() || less(order_[next], heap_.front()));
    assert((from_order || !heap_.empty()) && "MaxMinSolver: unfrozen flow on no resource");
    const HeapItem best = from_order ? order_[next] : heap_.front();

    while (next_bounded < by_bound_.size() && frozen_[by_bound_[next_bounded]]) ++next_bounded;
    if (next_bounded < by_bound_.size() && bound_of(by_bound_[next_bounded]) <= best.share) {
      const std::uint32_t f = by_bound_[next_bounded];
      freeze(f, bound_of(f), in, rate);
      continue;
    }
    // The best resource saturates: all its unfrozen flows get its fair share.
    if (from_order) {
      ++next;
    } else {
      std::pop_heap(heap_.begin(), heap_.end(), after);
      heap_.pop_back();
    }
    const double x = at_level(best.share) ? level : best.share;
    level = x;
    for (std::uint32_t k = res_offsets_[best.resource]; k < res_offsets_[best.resource + 1]; ++k) {
      const std::uint32_t f = res_flows_[k];
      if (!frozen_[f]) freeze(f, x, in, rate);
    }
  }
}

int MaxMinSystem::add_resource(BytesPerSecond capacity) {
  assert(capacity.value >= 0.0 && "MaxMinSystem: negative capacity");
  capacity_.push_back(capacity.value);
  return static_cast<int>(capacity_.size()) - 1;
}

int MaxMinSystem::add_flow(const std::vector<int>& resources, BytesPerSecond bound, std::uint32_t multiplicity) {
  assert(bound.value >= 0.0 && "MaxMinSystem: negative bound");
  assert(multiplicity >= 1 && "MaxMinSystem: multiplicity must be at least 1");
  multiplicity_.push_back(multiplicity);
  for (std::size_t i = 0; i < resources.size(); ++i) {
    assert(resources[i] >= 0 && static_cast<std::size_t>(resources[i]) < capacity_.size() &&
           "MaxMinSystem: unknown resource");
    assert(std::find(resources.begin() + static_cast<std::ptrdiff_t>(i) + 1, resources.end(),
                     resources[i]) == resources.end() &&
           "MaxMinSystem: a flow uses each resource at most once");
    resources_.push_back(static_cast<std::uint32_t>(resources[i]));
  }
  offsets_.push_back(static_cast<std::uint32_t>(resources_.size()));
  bound_.push_back(bound.value);
  return static_cast<int>(bound_.size()) - 1;
}

std::vector<BytesPerSecond> MaxMinSystem::solve() const {
  std::vector<double> rate(bound_.size());
  MaxMinSolver solver;
  solver.solve(MaxMinInput{capacity_, offsets_, resources_, bound_, multiplicity_}, rate);
  std::vector<BytesPerSecond> out;
  out.reserve(rate.size());
  for (const double x : rate) out.emplace_back(x);
  return out;
}

}  // namespace scalescope
