// The analytical collective model: cached rank groups, per-(algorithm, protocol) cost on the
// real ring/tree bottleneck, and NCCL-style choice of the fastest.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <mutex>

#include "collective_impl.hpp"

namespace scalescope {

using coll::Choice;
using coll::Group;
using coll::kInf;
using coll::Pattern;

namespace {

std::vector<double> usable_capacities(const Cluster& c, const CollectiveParams& p) {
  std::vector<double> out(static_cast<std::size_t>(c.num_links()));
  for (int l = 0; l < c.num_links(); ++l)
    out[static_cast<std::size_t>(l)] = c.link(l).bandwidth.value * p.link_eff(link_class_of(c.link(l).kind));
  return out;
}

double or_inf(double v) { return v > 0.0 ? v : kInf; }

int floor_log2(int x) {
  int k = 0;
  while (x > 1) {
    x >>= 1;
    ++k;
  }
  return k;
}

}  // namespace

CollectiveModel::Impl::Impl(const Cluster& c, CollectiveParams p)
    : cluster(c), params(std::move(p)), usable(usable_capacities(c, params)), builder(c, usable) {}

std::shared_ptr<Group> CollectiveModel::Impl::group(std::span<const int> ranks) const {
  std::vector<int> key(ranks.begin(), ranks.end());
  {
    std::shared_lock lock(mutex);
    auto it = groups.find(key);
    if (it != groups.end()) return it->second;
  }
  auto g = std::make_shared<Group>();
  g->ranks = key;
  builder.describe(*g);
  std::unique_lock lock(mutex);
  auto [it, inserted] = groups.emplace(std::move(key), std::move(g));
  return it->second;
}

const Pattern& CollectiveModel::Impl::pattern(Group& g, CollOp op, Algorithm a) const {
  switch (a) {
    case Algorithm::ring:
      std::call_once(g.ring_once, [&] { builder.build_ring(g, params.channels, g.ring); });
      if (op == CollOp::broadcast) {
        std::call_once(g.bcast_once, [&] { builder.build_bcast(g, g.ring, g.bcast); });
        return g.bcast;
      }
      return g.ring;
    case Algorithm::tree:
      std::call_once(g.tree_once, [&] { builder.build_tree(g, params.channels, g.tree); });
      return g.tree;
    case Algorithm::pairwise:
      std::call_once(g.pairwise_once, [&] {
        g.pairwise_per_pair = std::max(1, params.p2p_channels / std::max(1, g.n - 1));
        builder.build_pairwise(g, g.pairwise_per_pair, g.pairwise);
      });
      return g.pairwise;
    case Algorithm::p2p:
      std::call_once(g.p2p_once, [&] {
        g.p2p_per_pair = std::max(1, params.p2p_channels);
        builder.build_p2p(g, g.p2p_per_pair, g.p2p);
      });
      return g.p2p;
  }
  assert(false && "unknown algorithm");
  return g.ring;
}

Choice CollectiveModel::Impl::evaluate(CollOp op, Group& g, Algorithm a, Protocol p, double size) const {
  const CollectiveParams& P = params;
  Choice ch;
  ch.algorithm = a;
  ch.protocol = p;
  ch.pattern = &pattern(g, op, a);
  const double n = g.n;
  const double pe = P.proto_eff(a, p);
  const double be = P.bus_eff(op, a, g.cls);
  assert(pe > 0.0 && be > 0.0 && "evaluate: protocol disabled for this algorithm");
  const double intra = P.hop_latency(g.intra, a, p), net = P.hop_latency(LinkClass::net, a, p);

  double unit_data = 0.0, unit_cap_data = kInf, hops_us = 0.0;
  int intra_hops = 0, net_hops = 0;  // for staging through host memory (below)
  if (a == Algorithm::ring || a == Algorithm::tree) {
    const double thr = P.channel_threshold_bytes[static_cast<std::size_t>(idx(p))] *
                       (a == Algorithm::ring && p == Protocol::LL ? n : 1.0);
    const double fit = thr > 0.0 ? std::floor(size / thr) : P.channels;
    ch.channels = static_cast<int>(std::clamp(fit, 1.0, static_cast<double>(P.channels)));
    ch.reported_channels = ch.channels;
    const double c = ch.channels;
    const double per_channel = std::min(or_inf(P.channel_max_GBps[static_cast<std::size_t>(idx(p))]) * 1e9,
                                        or_inf(P.max_busbw_GBps[static_cast<std::size_t>(idx(p))]) * 1e9 / c);
    if (a == Algorithm::tree) {
      unit_data = size / c;
      unit_cap_data = per_channel / 2.0;  // a tree channel's busbw is twice its flows' data rate
      hops_us = 2.0 * ((g.per_node - 1) * intra + floor_log2(g.nodes) * net);
      intra_hops = 2 * (g.per_node - 1);
      net_hops = 2 * floor_log2(g.nodes);
    } else if (op == CollOp::broadcast) {
      unit_data = size / c;
      unit_cap_data = per_channel;
      const int inter = g.nodes > 1 ? g.nodes - 1 : 0;
      hops_us = (g.n - 1 - inter) * intra + inter * net;
      intra_hops = g.n - 1 - inter;
      net_hops = inter;
    } else {
      ch.steps = op == CollOp::all_reduce ? 2 * (g.n - 1) : g.n - 1;
      const int inter = g.nodes > 1 ? std::min(ch.steps, op == CollOp::all_reduce ? 2 * g.nodes : g.nodes - 1) : 0;
      unit_data = ch.steps * size / (n * c);
      unit_cap_data = per_channel;
      hops_us = (ch.steps - inter) * intra + inter * net;
      intra_hops = ch.steps - inter;
      net_hops = inter;
    }
  } else {
    const bool pairwise = a == Algorithm::pairwise;
    const int q = pairwise ? g.pairwise_per_pair : g.p2p_per_pair;
    ch.channels = 1;
    ch.reported_channels = q;
    unit_data = pairwise ? size / (n * q) : size / q;
    unit_cap_data = or_inf(P.channel_max_GBps[static_cast<std::size_t>(idx(p))]) * 1e9;
    hops_us = (pairwise ? (g.n - 1) : 1) * P.hop_latency(g.cls, a, p);
    (g.cls == LinkClass::net ? net_hops : intra_hops) = pairwise ? g.n - 1 : 1;
  }

  // Efficiency by size divides the whole time: wire bytes (the cap is a wire rate) and latencies.
  const double e = P.size_curve(op, g.n).at(size);
  ch.unit_wire_bytes = unit_data / (pe * be * e);
  ch.unit_cap = unit_cap_data / (pe * be);
  ch.share = ch.pattern->share[static_cast<std::size_t>(ch.channels - 1)];
  ch.cap_binds = ch.unit_cap <= ch.share.rate;
  ch.rate = std::min(ch.share.rate, ch.unit_cap);
  ch.base_s = P.base_latency(a, p) * 1e-6 / e;
  ch.hops_s = hops_us * 1e-6 / e;
  // Staging through host memory (no GPUDirect RDMA between nodes, or P2P off inside a node): each staged hop
  // copies a chunk into a host buffer and out of it again. The copies pipeline with the transfer at the route's
  // bottleneck rate (the staged route's links carry them), and each adds the time of one chunk (NCCL_BUFFSIZE
  // 4 MiB / NCCL_STEPS 8 = 512 KiB, or the whole step when smaller) to the hop: the pipeline's fill.
  const int staged = (g.staged_net ? net_hops : 0) + (g.staged_intra ? intra_hops : 0);
  if (staged > 0 && ch.unit_wire_bytes > 0.0 && ch.rate < kInf) {
    const double step = ch.unit_wire_bytes / std::max(1, a == Algorithm::ring && op != CollOp::broadcast ? ch.steps : 1);
    ch.hops_s += staged * 2.0 * std::min(coll::kStageChunkBytes, step) / ch.rate;
  }
  ch.time_s = ch.base_s + ch.hops_s + (ch.unit_wire_bytes > 0.0 ? ch.unit_wire_bytes / ch.rate : 0.0);
  return ch;
}

Choice CollectiveModel::Impl::choose(CollOp op, Group& g, double size, std::optional<Algorithm> fa,
                                     std::optional<Protocol> fp) const {
  Choice best;
  bool found = false;
  for (Algorithm a : kAllAlgorithms) {
    if (!algorithm_supports(a, op) || (fa && *fa != a)) continue;
    for (Protocol p : kAllProtocols) {
      if (fp && *fp != p) continue;
      if (params.proto_eff(a, p) <= 0.0) continue;
      if (!fp && p == Protocol::LL128 && !g.ll128_default) continue;
      Choice c = evaluate(op, g, a, p, size);
      if (!found || c.time_s < best.time_s) {
        best = c;
        found = true;
      }
    }
  }
  assert(found && "choose: nothing allowed (call check() first)");
  return best;
}

CollResult CollectiveModel::Impl::result(CollOp op, const Group& g, const Choice& ch, double size, double time_s) const {
  CollResult r;
  r.time = Seconds(time_s);
  r.algorithm = ch.algorithm;
  r.protocol = ch.protocol;
  r.algbw = BytesPerSecond(time_s > 0.0 ? size / time_s : 0.0);
  r.busbw = r.algbw * busbw_factor(op, g.n);
  r.channels = ch.reported_channels;
  r.latency = Seconds(ch.base_s + ch.hops_s);
  r.link_class = g.cls;
  char buf[96];
  if (ch.cap_binds) {
    const double data_cap = ch.unit_cap * params.proto_eff(ch.algorithm, ch.protocol) *
                            params.bus_eff(op, ch.algorithm, g.cls);
    std::snprintf(buf, sizeof buf, "per-channel cap %.1f GB/s", data_cap / 1e9);
    r.bottleneck = buf;
  } else {
    r.bottleneck_link = ch.share.link;
    std::snprintf(buf, sizeof buf, " (%s, %d flows)", std::string(to_string(cluster.link(ch.share.link).kind)).c_str(),
                  ch.share.flows);
    r.bottleneck = cluster.link_name(ch.share.link) + buf;
  }
  return r;
}

// ---- CollectiveModel -----------------------------------------------------------------------

CollectiveModel::CollectiveModel(const Cluster& cluster, CollectiveParams params)
    : impl_(std::make_unique<Impl>(cluster, std::move(params))) {}
CollectiveModel::CollectiveModel(const CollectiveModel& shape, CollectiveParams params)
    : impl_(std::make_unique<Impl>(shape.impl_->cluster, std::move(params))) {
  const CollectiveParams& a = shape.impl_->params;
  const CollectiveParams& b = impl_->params;
  if (a.channels == b.channels && a.p2p_channels == b.p2p_channels && a.link_efficiency == b.link_efficiency) {
    std::shared_lock lock(shape.impl_->mutex);
    impl_->groups = shape.impl_->groups;  // patterns depend only on the cluster, channels and usable capacities
  }
}
CollectiveModel::~CollectiveModel() = default;

const Cluster& CollectiveModel::cluster() const { return impl_->cluster; }
const CollectiveParams& CollectiveModel::params() const { return impl_->params; }

std::vector<BytesPerSecond> CollectiveModel::effective_capacities() const {
  std::vector<BytesPerSecond> out;
  out.reserve(impl_->usable.size());
  for (double u : impl_->usable) out.emplace_back(u);
  return out;
}

std::optional<std::string> CollectiveModel::check(CollOp op, std::span<const int> ranks, std::optional<Algorithm> a,
                                                  std::optional<Protocol> p) const {
  if (ranks.empty()) return "no ranks given";
  const int G = impl_->cluster.num_gpus();
  std::vector<char> seen(static_cast<std::size_t>(G), 0);
  for (int r : ranks) {
    if (r < 0 || r >= G)
      return "rank " + std::to_string(r) + " is not a GPU of cluster '" + impl_->cluster.name() + "' (it has " +
             std::to_string(G) + " GPUs)";
    if (seen[static_cast<std::size_t>(r)]) return "rank " + std::to_string(r) + " is listed twice";
    seen[static_cast<std::size_t>(r)] = 1;
  }
  if (a && !algorithm_supports(*a, op))
    return "algorithm " + std::string(to_string(*a)) + " does not run " + std::string(to_string(op));
  if (p) {
    bool any = false;
    for (Algorithm x : kAllAlgorithms)
      if (algorithm_supports(x, op) && (!a || *a == x) && impl_->params.proto_eff(x, *p) > 0.0) any = true;
    if (!any)
      return "protocol " + std::string(to_string(*p)) + " is not available for " + std::string(to_string(op)) +
             (a ? " with algorithm " + std::string(to_string(*a)) : std::string()) +
             " (its protocol_efficiency is 0)";
  }
  return std::nullopt;
}

CollResult CollectiveModel::analytical(CollOp op, std::span<const int> ranks, Bytes size, std::optional<Algorithm> a,
                                       std::optional<Protocol> p) const {
  assert(!check(op, ranks, a, p) && "CollectiveModel::analytical: invalid request (see check())");
  auto g = impl_->group(ranks);
  if (g->n < 2) {
    CollResult r;
    r.link_class = g->cls;
    r.bottleneck = "single rank: nothing to move";
    return r;
  }
  const Choice ch = impl_->choose(op, *g, size.value, a, p);
  return impl_->result(op, *g, ch, size.value, ch.time_s);
}

CollResult CollectiveModel::analytical_concurrent(CollOp op, std::span<const int> ranks,
                                                 std::span<const std::span<const int>> siblings, Bytes size) const {
  auto g = impl_->group(ranks);
  if (g->n < 2 || siblings.empty()) return analytical(op, ranks, size);
  coll::Choice ch = impl_->choose(op, *g, size.value, {}, {});
  // Unit flows per link of every group's pattern (channels 0..c-1, as the pattern's own share), and the links
  // they touch; the counts are kept zeroed between calls (a cluster of 128k GPUs has millions of links).
  thread_local std::vector<int> flows;
  thread_local std::vector<int> touched;
  flows.resize(static_cast<std::size_t>(impl_->cluster.num_links()), 0);
  touched.clear();
  auto add = [&](coll::Group& grp) {
    const coll::Pattern& pat = impl_->pattern(grp, op, ch.algorithm);
    const int c = std::min(ch.channels, pat.channels());
    for (std::uint32_t r = 0; r < pat.routes_in(c); ++r)
      for (int l : pat.route(r))
        if (flows[static_cast<std::size_t>(l)]++ == 0) touched.push_back(l);
  };
  add(*g);
  // Only siblings with a rank on one of the group's nodes are counted: they meet its flows on the
  // node's NICs, PCIe switches and NVLinks. Siblings on other nodes could only meet them in the
  // fabric, where a non-blocking fat tree leaves them apart (flow fidelity routes them all).
  const Cluster& cl = impl_->cluster;
  std::vector<int> nodes;
  for (int r : ranks) nodes.push_back(cl.node_of(r));
  std::sort(nodes.begin(), nodes.end());
  for (auto s : siblings) {
    assert(s.size() == ranks.size() && "analytical_concurrent: siblings must have the group's size");
    const bool shares_node =
        std::any_of(s.begin(), s.end(), [&](int r) { return std::binary_search(nodes.begin(), nodes.end(), cl.node_of(r)); });
    if (!shares_node) continue;
    auto sg = impl_->group(s);
    if (sg->n >= 2) add(*sg);
  }
  // The tightest link, the lowest-numbered of equally tight ones (ascending order, as a scan of every link).
  std::sort(touched.begin(), touched.end());
  coll::Share share;
  for (int l : touched) {
    int& f = flows[static_cast<std::size_t>(l)];
    const double r = impl_->usable[static_cast<std::size_t>(l)] / f;
    if (r < share.rate * (1.0 - 1e-12)) share = coll::Share{r, l, f};
    f = 0;
  }
  ch.share = share;
  ch.cap_binds = ch.unit_cap <= share.rate;
  ch.rate = std::min(share.rate, ch.unit_cap);
  ch.time_s = ch.base_s + ch.hops_s + (ch.unit_wire_bytes > 0.0 ? ch.unit_wire_bytes / ch.rate : 0.0);
  return impl_->result(op, *g, ch, size.value, ch.time_s);
}

}  // namespace scalescope
