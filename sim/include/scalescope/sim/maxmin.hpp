// Max-min fair bandwidth sharing by progressive filling (the problem SimGrid's lmm solves).
//
// Given resources r with capacity C_r >= 0 (bytes/s; +inf allowed) and flows f, each using a
// set of resources R(f) (each resource at most once: multiplicity 1) and having a bound
// B_f >= 0 (+inf when the flow has none), find rates x_f such that
//
//     sum_{f : r in R(f)} x_f  <=  C_r      for every resource r        (capacity)
//     0  <=  x_f  <=  B_f                    for every flow f            (bound)
//
// and x is max-min fair: no x_f can be raised without lowering some x_g <= x_f. The unique
// such x is found by progressive filling (Bertsekas & Gallager, "Data Networks", 2nd ed.,
// 1992, sec. 6.5.2; the same algorithm as SimGrid's lmm solver without weights, Casanova et
// al., "Versatile, scalable, and accurate simulation of distributed applications and
// platforms", JPDC 74(10), 2014). With U the unfrozen flows, start with rem_r = C_r:
//
//   1. share_r = rem_r / |{f in U : r in R(f)}| for every resource still used by U;
//      s = min_r share_r (ties: lowest resource index), b = min_{f in U} B_f.
//   2. If b <= s, freeze that bounded flow at x_f = b. Otherwise freeze every f in U on the
//      arg-min resource at x_f = s (the resource is saturated).
//   3. For every frozen flow, rem_r -= x_f on each r in R(f). Repeat until U is empty.
//
// The fill level never decreases, so resources can be visited in order of their initial
// share, with a lazily re-keyed min-heap for those whose share rose since:
// O((F + sum_f |R(f)|) log R). Shares within a relative 1e-12 of the current level are taken
// to equal it, so that floating-point noise does not split flows that exact arithmetic gives
// the same rate.
//
// Conventions: a flow over zero resources gets its bound (x_f = B_f, +inf if unbounded); a
// resource used by no flow is ignored; a zero-capacity resource gives its flows rate 0.
//
// Aggregated flows: a flow may stand for m_f >= 1 identical flows (same resources and bound),
// each moving at x_f. The capacity constraint becomes sum_f m_f x_f <= C_r and step 1 divides
// by the number of unfrozen flows counted with multiplicity, sum_{f in U on r} m_f. Identical
// flows always get identical max-min rates, so this is exactly the problem with the m_f copies.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "scalescope/sim/units.hpp"

namespace scalescope {

inline constexpr double kUnboundedRate = std::numeric_limits<double>::infinity();

/// A max-min problem in compressed form (views; the caller owns the arrays).
struct MaxMinInput {
  std::span<const double> capacity;               ///< C_r in bytes/s, one per resource
  std::span<const std::uint32_t> flow_offsets;    ///< F + 1 offsets into flow_resources
  std::span<const std::uint32_t> flow_resources;  ///< R(f) = [flow_offsets[f], flow_offsets[f+1])
  std::span<const double> bound;                  ///< B_f per flow, or empty for "no bounds"
  std::span<const std::uint32_t> multiplicity;    ///< m_f >= 1 per flow, or empty for "all 1"
};

/// Solves MaxMinInput problems, reusing its scratch memory between calls (no allocation once
/// warmed up). One solver per thread.
class MaxMinSolver {
 public:
  /// Writes x_f into rate (rate.size() == number of flows).
  void solve(const MaxMinInput& in, std::span<double> rate);

 private:
  struct HeapItem {
    double share;
    std::uint32_t resource;
  };
  void freeze(std::uint32_t f, double x, const MaxMinInput& in, std::span<double> rate);

  std::vector<double> remaining_;
  std::vector<std::uint64_t> users_;  // unfrozen flows per resource, with multiplicity
  std::vector<std::uint32_t> res_offsets_;
  std::vector<std::uint32_t> res_flows_;
  std::vector<std::uint8_t> frozen_;
  std::vector<std::uint32_t> by_bound_;
  std::vector<HeapItem> order_;
  std::vector<HeapItem> heap_;
  std::size_t unfrozen_ = 0;
};

/// A convenient builder for one-off problems (tests, tools); the flow network uses
/// MaxMinSolver directly.
class MaxMinSystem {
 public:
  /// Returns the new resource's index (0, 1, ...).
  int add_resource(BytesPerSecond capacity);
  /// Returns the new flow's index (0, 1, ...). `resources` must be distinct valid indices.
  /// `multiplicity` identical flows stand behind it (their common rate is returned).
  int add_flow(const std::vector<int>& resources,
               BytesPerSecond bound = BytesPerSecond(kUnboundedRate), std::uint32_t multiplicity = 1);
  /// The max-min fair rate of every flow, in flow order.
  std::vector<BytesPerSecond> solve() const;

 private:
  std::vector<double> capacity_;
  std::vector<std::uint32_t> offsets_{0};
  std::vector<std::uint32_t> resources_;
  std::vector<double> bound_;
  std::vector<std::uint32_t> multiplicity_;
};

}  // namespace scalescope
