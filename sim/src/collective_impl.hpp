// Internal: the collective model's state (cluster, parameters, usable capacities, cached rank
// groups) and the evaluation of one (algorithm, protocol) choice, shared by both fidelities.
#pragma once

#include <memory>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include "collective_plan.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope {

namespace coll {

/// Everything one (algorithm, protocol) costs at one size.
struct Choice {
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::Simple;
  const Pattern* pattern = nullptr;
  int channels = 1;             ///< channels of the pattern in use (1 for pairwise / p2p)
  int reported_channels = 1;    ///< channels as reported (flows per pair for pairwise / p2p)
  int steps = 1;                ///< ring steps (1: everything at once)
  double unit_wire_bytes = 0;   ///< wire bytes one unit flow moves over the whole collective
  double unit_cap = kInf;       ///< wire bytes/s one unit flow may reach (per-channel cap)
  double rate = kInf;           ///< slowest unit flow's rate alone on the network
  bool cap_binds = false;
  Share share;
  double base_s = 0, hops_s = 0;
  double time_s = 0;
};

struct RanksHash {
  std::size_t operator()(const std::vector<int>& v) const noexcept {
    std::uint64_t h = 1469598103934665603ull;
    for (int x : v) h = (h ^ static_cast<std::uint32_t>(x)) * 1099511628211ull;
    return static_cast<std::size_t>(h);
  }
};

}  // namespace coll

struct CollectiveModel::Impl {
  Impl(const Cluster& c, CollectiveParams p);

  const Cluster& cluster;
  CollectiveParams params;
  std::vector<double> usable;
  coll::PatternBuilder builder;

  mutable std::shared_mutex mutex;
  mutable std::unordered_map<std::vector<int>, std::shared_ptr<coll::Group>, coll::RanksHash> groups;

  /// The cached group of these ranks (built on first use).
  std::shared_ptr<coll::Group> group(std::span<const int> ranks) const;
  /// The pattern `op` runs with `algorithm` on the group (built on first use).
  const coll::Pattern& pattern(coll::Group& g, CollOp op, Algorithm algorithm) const;
  /// Cost of one (algorithm, protocol).
  coll::Choice evaluate(CollOp op, coll::Group& g, Algorithm a, Protocol p, double size) const;
  /// Lowest-time choice among those allowed (forced ones honoured).
  coll::Choice choose(CollOp op, coll::Group& g, double size, std::optional<Algorithm> a,
                      std::optional<Protocol> p) const;
  /// A CollResult for `choice` taking `time_s`.
  CollResult result(CollOp op, const coll::Group& g, const coll::Choice& choice, double size, double time_s) const;
};

}  // namespace scalescope
