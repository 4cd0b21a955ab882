// Builds the unit flows of NCCL's ring, tree, broadcast pipeline, alltoall and sendrecv on the
// real routes of a cluster, and the max-min bottleneck of each channel count.
#include "collective_plan.hpp"

#include <algorithm>
#include <cassert>
#include <unordered_map>

namespace scalescope::coll {

namespace {

int net_links(const Cluster& c, const std::vector<int>& route) {
  int k = 0;
  for (int l : route) k += link_class_of(c.link(l).kind) == LinkClass::net ? 1 : 0;
  return k;
}

/// Parent of `r` in NCCL's binary tree over `n` ranks rooted at 0 (src/graph/trees.cc): clear the
/// lowest set bit and set the next one up, or just clear it if that is out of range.
int btree_parent(int n, int r) {
  if (r == 0) return -1;
  int bit = 1;
  while ((bit & r) == 0) bit <<= 1;
  int up = (r ^ bit) | (bit << 1);
  if (up >= n) up = r ^ bit;
  return up;
}

/// NCCL's second tree: the mirror of the first for an even count, the first shifted by one for an odd count.
int dtree_parent(int n, int r, int tree) {
  if (tree == 0) return btree_parent(n, r);
  if (n % 2 == 1) {
    const int u = btree_parent(n, (r - 1 + n) % n);
    return u < 0 ? -1 : (u + 1) % n;
  }
  const int u = btree_parent(n, n - 1 - r);
  return u < 0 ? -1 : n - 1 - u;
}

// ECMP candidates tried per route: NCCL spreads channels evenly over parallel NICs and links,
// so each route is the least loaded of several hash choices. Between nodes the choice is
// usually between two NICs, where 16 tries miss the other one with probability 2^-15.
constexpr int kRouteCandidates = 4;
constexpr int kInterNodeCandidates = 16;

std::uint64_t mix_key(std::uint64_t a, std::uint64_t b) {
  std::uint64_t x = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  return x ^ (x >> 32);
}

}  // namespace

/// Appends routes to a pattern channel by channel, counting unit flows per link, and records
/// the share after each channel (counts only grow, so the minimum is updated incrementally).
class PatternBuilder::Accumulator {
 public:
  Accumulator(const PatternBuilder& b, Pattern& p, std::size_t links) : b_(b), p_(p), counts_(links, 0) {
    p_ = Pattern{};
    p_.route_begin.push_back(0);
    p_.channel_begin.push_back(0);
  }
  const std::vector<int>& counts() const { return counts_; }

  void add(const std::vector<int>& route, int dst) {
    p_.links.insert(p_.links.end(), route.begin(), route.end());
    p_.route_begin.push_back(static_cast<std::uint32_t>(p_.links.size()));
    p_.dst.push_back(dst);
    for (int l : route) {
      const int c = ++counts_[static_cast<std::size_t>(l)];
      const double r = b_.usable(l) / c;
      if (r < cur_.rate * (1.0 - 1e-12) || (r <= cur_.rate * (1.0 + 1e-12) && l < cur_.link)) cur_ = Share{r, l, c};
      else if (l == cur_.link) cur_ = Share{r, l, c};
    }
  }
  void end_channel() {
    p_.channel_begin.push_back(static_cast<std::uint32_t>(p_.dst.size()));
    p_.share.push_back(cur_);
  }

 private:
  const PatternBuilder& b_;
  Pattern& p_;
  std::vector<int> counts_;
  Share cur_;
};

std::vector<int> PatternBuilder::pick_route(int src, int dst, std::uint64_t key, const std::vector<int>& counts,
                                            const std::vector<char>& in_group, int candidates,
                                            Cluster::RouteMemo& direct) const {
  const int G = cluster_.gpus_per_node();
  if (candidates > 1 && !cluster_.same_node(src, dst)) candidates = std::max(candidates, kInterNodeCandidates);
  std::vector<int> best;
  double best_score = kInf;
  // The candidates differ only in their keys: `direct` (the caller's, for this pair) and `via_proxy` keep the
  // NIC-pair costs and routes between them.
  Cluster::RouteMemo via_proxy;
  // Candidates whose key chose only the NIC pair (no proxy, no other tie on the way) give one route per pair:
  // once each of the tied pairs has been tried, the remaining keys can only repeat one (never strictly better).
  std::vector<char> pair_tried;
  std::size_t pairs_tried = 0;
  bool every_key = false;
  for (int t = 0; t < candidates; ++t) {
    const std::uint64_t k = t == 0 ? key : mix_key(key, static_cast<std::uint64_t>(t));
    // Whether a key broke a tie in any route below: if none did, every other key gives the same candidate.
    bool keyed = false;
    std::vector<int> r = cluster_.route(src, dst, k, &keyed, direct);
    bool proxied = false;
    // PXN: leave the node through the NIC of the GPU that shares the destination's local index
    // (its rail), reached over NVLink, when that crosses fewer fabric links.
    if (!cluster_.same_node(src, dst) && src % G != dst % G) {
      const int proxy = cluster_.node_of(src) * G + dst % G;
      if (in_group[static_cast<std::size_t>(proxy)]) {
        proxied = true;
        bool keyed1 = false;
        std::vector<int> r1 = cluster_.route(src, proxy, k, &keyed1);
        keyed = keyed || keyed1;
        const bool nvlink_only = std::all_of(r1.begin(), r1.end(), [&](int l) {
          return cluster_.link(l).kind == LinkKind::nvlink;
        });
        if (nvlink_only) {
          bool keyed2 = false;
          std::vector<int> r2 = cluster_.route(proxy, dst, k, &keyed2, via_proxy);
          keyed = keyed || keyed2;
          if (net_links(cluster_, r2) < net_links(cluster_, r)) {
            r1.insert(r1.end(), r2.begin(), r2.end());
            std::vector<int> sorted = r1;
            std::sort(sorted.begin(), sorted.end());
            if (std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) r = std::move(r1);
          }
        }
      }
    }
    double score = 0.0;
    for (int l : r) score = std::max(score, (counts[static_cast<std::size_t>(l)] + 1) / usable(l));
    if (best.empty() || score < best_score * (1.0 - 1e-12)) {
      best = std::move(r);
      best_score = score;
    }
    if (!keyed) break;  // the other candidates are this one (destination-routed fabrics, own-rail NICs)
    if (every_key || proxied || !direct.only_pair_keyed || direct.tie_index < 0) {
      every_key = true;  // this key may have chosen more than the NIC pair
      continue;
    }
    pair_tried.resize(direct.tie_pairs(), 0);
    auto& tried = pair_tried[static_cast<std::size_t>(direct.tie_index)];
    if (!tried) {
      tried = 1;
      ++pairs_tried;
    }
    if (pairs_tried == direct.tie_pairs()) break;
  }
  return best;
}

void PatternBuilder::describe(Group& g) const {
  g.n = static_cast<int>(g.ranks.size());
  std::vector<int> sorted = g.ranks;
  std::sort(sorted.begin(), sorted.end());
  g.by_node.clear();
  for (int r : sorted) {
    if (g.by_node.empty() || cluster_.node_of(g.by_node.back().front()) != cluster_.node_of(r)) g.by_node.emplace_back();
    g.by_node.back().push_back(r);
  }
  g.nodes = static_cast<int>(g.by_node.size());
  g.per_node = g.nodes > 0 ? g.n / g.nodes : 0;
  // Intra-node class: the links between two GPUs of one node (of the group, else of node 0).
  std::vector<int> probe;
  for (const auto& m : g.by_node)
    if (m.size() >= 2) {
      probe = cluster_.route(m[0], m[1]);
      break;
    }
  if (probe.empty() && cluster_.gpus_per_node() >= 2) probe = cluster_.route(0, 1);
  g.intra = LinkClass::nvlink;
  for (int l : probe)
    if (link_class_of(cluster_.link(l).kind) == LinkClass::pcie) g.intra = LinkClass::pcie;
  // A ring or chain step waits for its slowest hop: one staged pair inside a node stages every intra-node step.
  g.staged_intra = false;
  for (const auto& m : g.by_node)
    for (std::size_t i = 0; i < m.size() && !g.staged_intra; ++i)
      for (std::size_t j = 0; j < m.size() && !g.staged_intra; ++j)
        g.staged_intra = i != j && cluster_.staged(m[i], m[j]);
  g.staged_net = g.nodes > 1 && !cluster_.gpudirect_rdma();
  g.cls = g.nodes > 1 ? LinkClass::net : g.intra;
  g.ll128_default = g.intra != LinkClass::pcie;
}

namespace {

std::vector<char> membership(const Cluster& c, const Group& g) {
  std::vector<char> in(static_cast<std::size_t>(c.num_gpus()), 0);
  for (int r : g.ranks) in[static_cast<std::size_t>(r)] = 1;
  return in;
}

/// Ring order of channel k: nodes in order; each node entered at its member k % size and left
/// from the member whose direct route to the next node's entry crosses the fewest fabric links
/// (then the fewest links), as NCCL's ring search leaves a node next to the NIC the ring uses
/// (on DGX-like nodes: the GPU sharing a PCIe switch with the entry GPU's NIC). Ties, and
/// members in between, keep the rotated order.
std::vector<int> ring_order(const Cluster& c, const Group& g, int k) {
  auto entry_of = [&](std::size_t j) {
    const auto& m = g.by_node[j];
    return m[static_cast<std::size_t>(k) % m.size()];
  };
  std::vector<int> order;
  order.reserve(static_cast<std::size_t>(g.n));
  for (std::size_t j = 0; j < g.by_node.size(); ++j) {
    const auto& m = g.by_node[j];
    const std::size_t s = m.size(), start = static_cast<std::size_t>(k) % s;
    std::vector<int> rotated;
    for (std::size_t i = 0; i < s; ++i) rotated.push_back(m[(start + i) % s]);
    if (g.nodes > 1 && s > 2) {
      const int next_entry = entry_of((j + 1) % g.by_node.size());
      std::size_t best = s - 1;
      std::pair<int, std::size_t> best_cost{1 << 30, 0};
      for (std::size_t i = s - 1; i >= 1; --i) {
        const std::vector<int> r = c.route(rotated[i], next_entry, static_cast<std::uint64_t>(k));
        const std::pair<int, std::size_t> cost{net_links(c, r), r.size()};
        if (cost < best_cost) {
          best_cost = cost;
          best = i;
        }
      }
      const int exit = rotated[best];
      rotated.erase(rotated.begin() + static_cast<std::ptrdiff_t>(best));
      rotated.push_back(exit);
    }
    order.insert(order.end(), rotated.begin(), rotated.end());
  }
  return order;
}

/// The route memos of a pattern's edges, so that an edge met again (the same GPU pair in another channel) reuses
/// its NIC-pair costs and routes. Bounded: past kMaxMemos edges every new edge shares one memo (refilled as needed).
class EdgeMemos {
 public:
  Cluster::RouteMemo& at(int a, int b) {
    const std::uint64_t key = static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32 |
                              static_cast<std::uint32_t>(b);
    if (auto it = memos_.find(key); it != memos_.end()) return it->second;
    if (memos_.size() >= kMaxMemos) return shared_;
    return memos_[key];
  }

 private:
  static constexpr std::size_t kMaxMemos = 4096;
  std::unordered_map<std::uint64_t, Cluster::RouteMemo> memos_;
  Cluster::RouteMemo shared_;
};

}  // namespace

void PatternBuilder::build_ring(const Group& g, int channels, Pattern& out) const {
  Accumulator acc(*this, out, static_cast<std::size_t>(cluster_.num_links()));
  const auto in = membership(cluster_, g);
  EdgeMemos memos;
  for (int k = 0; k < channels; ++k) {
    const std::vector<int> order = ring_order(cluster_, g, k);
    const auto key = static_cast<std::uint64_t>(k);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const int a = order[i], b = order[(i + 1) % order.size()];
      acc.add(pick_route(a, b, key, acc.counts(), in, kRouteCandidates, memos.at(a, b)), b);
    }
    acc.end_channel();
  }
}

void PatternBuilder::build_bcast(const Group& g, const Pattern& ring, Pattern& out) const {
  Accumulator acc(*this, out, static_cast<std::size_t>(cluster_.num_links()));
  const int root = g.ranks.front();
  for (int k = 0; k < ring.channels(); ++k) {
    for (std::uint32_t r = ring.routes_in(k); r < ring.routes_in(k + 1); ++r) {
      if (ring.dst[r] == root) continue;
      const auto route = ring.route(r);
      acc.add(std::vector<int>(route.begin(), route.end()), ring.dst[r]);
    }
    acc.end_channel();
  }
}

void PatternBuilder::build_tree(const Group& g, int channels, Pattern& out) const {
  Accumulator acc(*this, out, static_cast<std::size_t>(cluster_.num_links()));
  const auto in = membership(cluster_, g);
  EdgeMemos memos;
  auto pick = [&](int a, int b, std::uint64_t key) {
    return pick_route(a, b, key, acc.counts(), in, kRouteCandidates, memos.at(a, b));
  };
  for (int k = 0; k < channels; ++k) {
    const int tree = k % 2;
    std::vector<int> heads;
    for (const auto& m : g.by_node) {
      const std::size_t s = m.size(), start = static_cast<std::size_t>(k / 2) % s;
      std::vector<int> chain;
      for (std::size_t i = 0; i < s; ++i) chain.push_back(m[(start + i) % s]);
      heads.push_back(chain.front());
      for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
        const auto key = static_cast<std::uint64_t>(k);
        acc.add(pick(chain[i + 1], chain[i], key), chain[i]);  // up
        acc.add(pick(chain[i], chain[i + 1], key), chain[i + 1]);  // down
      }
    }
    for (int j = 0; j < g.nodes; ++j) {
      const int p = dtree_parent(g.nodes, j, tree);
      if (p < 0) continue;
      const int child = heads[static_cast<std::size_t>(j)], parent = heads[static_cast<std::size_t>(p)];
      const auto key = static_cast<std::uint64_t>(k);
      acc.add(pick(child, parent, key), parent);
      acc.add(pick(parent, child, key), child);
    }
    acc.end_channel();
  }
}

void PatternBuilder::build_pairwise(const Group& g, int per_pair, Pattern& out) const {
  Accumulator acc(*this, out, static_cast<std::size_t>(cluster_.num_links()));
  const auto in = membership(cluster_, g);
  // Balancing over ECMP candidates costs a few route look-ups per flow: keep it for small groups.
  const int candidates = g.n <= 64 ? kRouteCandidates : 1;
  Cluster::RouteMemo memo;  // one pair after the other: refilled when the pair changes
  for (int a : g.ranks)
    for (int b : g.ranks) {
      if (a == b) continue;
      for (int q = 0; q < per_pair; ++q)
        acc.add(pick_route(a, b, static_cast<std::uint64_t>(q), acc.counts(), in, candidates, memo), b);
    }
  acc.end_channel();
}

void PatternBuilder::build_p2p(const Group& g, int per_pair, Pattern& out) const {
  Accumulator acc(*this, out, static_cast<std::size_t>(cluster_.num_links()));
  const auto in = membership(cluster_, g);
  Cluster::RouteMemo memo;  // one pair after the other: refilled when the pair changes
  for (int i = 0; i < g.n; ++i) {
    const int a = g.ranks[static_cast<std::size_t>(i)], b = g.ranks[static_cast<std::size_t>((i + 1) % g.n)];
    if (a == b) continue;
    for (int q = 0; q < per_pair; ++q)
      acc.add(pick_route(a, b, static_cast<std::uint64_t>(q), acc.counts(), in, kRouteCandidates, memo), b);
  }
  acc.end_channel();
}

}  // namespace scalescope::coll
