// Internal: the traffic patterns of NCCL's algorithms on a rank group (which flows, over which
// routes, per channel) and their max-min bottleneck, shared by the analytical and flow models.
#pragma once

#include <cstdint>
#include <limits>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective_types.hpp"

namespace scalescope::coll {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
/// Bytes NCCL moves per step through a staging buffer: NCCL_BUFFSIZE (4 MiB) / NCCL_STEPS (8), NCCL docs.
inline constexpr double kStageChunkBytes = 512.0 * 1024.0;

/// Smallest max-min share of a set of equal-sized unit flows: min over links of usable
/// capacity / flows on the link (the rate of the slowest flows when nothing else runs).
struct Share {
  double rate = kInf;  ///< bytes/s per unit flow
  int link = -1;       ///< the link giving it (lowest index among equals)
  int flows = 0;       ///< unit flows on that link
};

/// Unit flows of one algorithm on one group, grouped by channel (CSR layout).
struct Pattern {
  std::vector<int> links;                 ///< routes, concatenated
  std::vector<std::uint32_t> route_begin; ///< route r = links[route_begin[r], route_begin[r+1])
  std::vector<std::uint32_t> channel_begin;  ///< channel k = routes [channel_begin[k], channel_begin[k+1])
  std::vector<int> dst;                   ///< destination rank of each route
  std::vector<Share> share;               ///< share[c-1]: channels 0..c-1 together

  int channels() const { return static_cast<int>(channel_begin.size()) - 1; }
  std::uint32_t routes_in(int c) const { return channel_begin[static_cast<std::size_t>(c)]; }
  std::span<const int> route(std::uint32_t r) const {
    return {links.data() + route_begin[r], links.data() + route_begin[r + 1]};
  }
};

/// A rank group with its lazily built patterns. Thread-safe: each pattern is built once.
struct Group {
  std::vector<int> ranks;                  ///< as given (sendrecv and broadcast root use this order)
  std::vector<std::vector<int>> by_node;   ///< members per node, nodes ascending, ranks ascending
  int n = 0;
  int nodes = 0;
  int per_node = 0;                        ///< n / nodes (integer division, as NCCL)
  LinkClass intra = LinkClass::nvlink;     ///< class of the links between GPUs of one node
  LinkClass cls = LinkClass::nvlink;       ///< net when the group spans nodes, else intra
  bool ll128_default = true;               ///< NCCL enables LL128 by default only over NVLink
  bool staged_intra = false;               ///< some pair of one node copies through host memory (p2p_level)
  bool staged_net = false;                 ///< the group spans nodes without GPUDirect RDMA

  std::once_flag ring_once, tree_once, bcast_once, pairwise_once, p2p_once;
  Pattern ring, tree, bcast, pairwise, p2p;
  int pairwise_per_pair = 1;               ///< unit flows per ordered pair (alltoall)
  int p2p_per_pair = 1;                    ///< unit flows per send (sendrecv)
};

/// Builds patterns for one cluster; `usable` holds each link's usable capacity (bytes/s).
class PatternBuilder {
 public:
  PatternBuilder(const Cluster& cluster, std::span<const double> usable) : cluster_(cluster), usable_(usable) {}

  /// Fills by_node, n, nodes, per_node, intra, cls, ll128_default.
  void describe(Group& g) const;
  /// Ring: channel k enters each node (nodes in order) at its member k % size and leaves it
  /// from the member closest to the next node's entry GPU (fewest fabric links), through the
  /// NIC rail of that entry GPU via NVLink (PXN) where that saves fabric links.
  void build_ring(const Group& g, int channels, Pattern& out) const;
  /// Broadcast pipeline: the ring of each channel without the edge into the root (ranks[0]).
  void build_bcast(const Group& g, const Pattern& ring, Pattern& out) const;
  /// Double binary tree between nodes (NCCL trees.cc rules: btree, then mirror or shift), a
  /// chain inside each node; every edge carries one flow up and one down. Channel k uses tree k%2
  /// and chain heads rotated by k/2.
  void build_tree(const Group& g, int channels, Pattern& out) const;
  /// Alltoall: `per_pair` flows from every rank to every other rank.
  void build_pairwise(const Group& g, int per_pair, Pattern& out) const;
  /// Sendrecv: `per_pair` flows from ranks[i] to ranks[(i+1) % n].
  void build_p2p(const Group& g, int per_pair, Pattern& out) const;

  /// Usable capacity of a link (bytes/s).
  double usable(int link) const { return usable_[static_cast<std::size_t>(link)]; }

 private:
  class Accumulator;
  /// `memo` holds what route() learnt of the pair (src, dst) before (or anything, for another pair): the same routes.
  std::vector<int> pick_route(int src, int dst, std::uint64_t key, const std::vector<int>& counts,
                              const std::vector<char>& in_group, int candidates, Cluster::RouteMemo& memo) const;

  const Cluster& cluster_;
  std::span<const double> usable_;
};

}  // namespace scalescope::coll
