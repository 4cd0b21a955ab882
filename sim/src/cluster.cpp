// Cluster queries: deterministic ECMP routing over the precomputed tables, path metrics,
// bisection bandwidth (push-relabel max flow), and the loaders (file, JSON, built-in name).
#include "scalescope/sim/cluster.hpp"

#include <algorithm>
#include <boost/graph/push_relabel_max_flow.hpp>
#include <cassert>
#include <cstdlib>
#include <limits>
#include <set>

#include "cluster_spec.hpp"
#include "scalescope/sim/data_files.hpp"

namespace scalescope {

namespace fs = std::filesystem;

std::string_view to_string(LinkKind kind) {
  switch (kind) {
    case LinkKind::nvlink:
      return "nvlink";
    case LinkKind::pcie:
      return "pcie";
    case LinkKind::upi:
      return "upi";
    case LinkKind::ib:
      return "ib";
    case LinkKind::roce:
      return "roce";
    case LinkKind::ethernet:
      return "ethernet";
    case LinkKind::memory:
      return "memory";
  }
  return "?";
}

std::string_view to_string(VertexKind kind) {
  switch (kind) {
    case VertexKind::gpu:
      return "gpu";
    case VertexKind::nvswitch:
      return "nvswitch";
    case VertexKind::pcie_switch:
      return "pcie_switch";
    case VertexKind::cpu:
      return "cpu";
    case VertexKind::nic:
      return "nic";
    case VertexKind::fabric_switch:
      return "fabric_switch";
    case VertexKind::host_memory:
      return "host_memory";
  }
  return "?";
}

std::string_view to_string(PathType type) {
  switch (type) {
    case PathType::nvlink:
      return "NV";
    case PathType::pix:
      return "PIX";
    case PathType::pxb:
      return "PXB";
    case PathType::phb:
      return "PHB";
    case PathType::node:
      return "NODE";
    case PathType::sys:
      return "SYS";
  }
  return "?";
}

std::optional<PathType> parse_path_type(std::string_view s) {
  if (s == "NV" || s == "NVL") return PathType::nvlink;
  for (PathType t : {PathType::pix, PathType::pxb, PathType::phb, PathType::node, PathType::sys})
    if (s == to_string(t)) return t;
  return std::nullopt;
}

std::string_view to_string(FabricKind kind) {
  switch (kind) {
    case FabricKind::none:
      return "none";
    case FabricKind::single_switch:
      return "single_switch";
    case FabricKind::fat_tree:
      return "fat_tree";
    case FabricKind::rail_optimized:
      return "rail_optimized";
  }
  return "?";
}

std::optional<FlopsPerSecond> PeakFlops::get(std::string_view dtype) const {
  if (dtype == "fp8") return fp8;
  if (dtype == "bf16") return bf16;
  if (dtype == "fp16") return fp16;
  if (dtype == "tf32") return tf32;
  if (dtype == "fp32") return fp32;
  return std::nullopt;
}

VertexId Cluster::gpu_vertex(int global_rank) const {
  assert(global_rank >= 0 && global_rank < num_gpus() && "gpu_vertex: rank out of range");
  return static_cast<VertexId>(node_of(global_rank)) * static_cast<VertexId>(tv_) +
         static_cast<VertexId>(gpu_tv_[static_cast<std::size_t>(global_rank % gpus_per_node_)]);
}

VertexId Cluster::nic_vertex(int node, int local_nic) const {
  assert(node >= 0 && node < nodes_ && local_nic >= 0 && local_nic < nics_per_node() &&
         "nic_vertex: out of range");
  return static_cast<VertexId>(node) * static_cast<VertexId>(tv_) +
         static_cast<VertexId>(nic_tv_[static_cast<std::size_t>(local_nic)]);
}

const Link& Cluster::link(int index) const {
  assert(index >= 0 && index < num_links() && "link: index out of range");
  return links_[static_cast<std::size_t>(index)];
}

std::string Cluster::link_name(int index) const {
  const Link& l = link(index);
  return graph_[l.src].name + "->" + graph_[l.dst].name;
}

std::vector<BytesPerSecond> Cluster::link_capacities() const {
  std::vector<BytesPerSecond> out;
  out.reserve(links_.size());
  for (const Link& l : links_) out.push_back(l.bandwidth);
  return out;
}

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Index in [0, count) for ECMP choice number `hop` of the flow with hash `h`.
std::size_t pick(std::uint64_t h, int hop, std::size_t count) {
  return static_cast<std::size_t>(
      splitmix64(h + static_cast<std::uint64_t>(hop) * 0x632be59bd9b4e019ULL) % count);
}

}  // namespace

void Cluster::walk_template(int node, int src_tv, int dst_tv, bool nvlink_only, std::uint64_t hash,
                            int& hop, std::vector<int>& out, bool* keyed) const {
  const auto tv = static_cast<std::size_t>(tv_);
  const auto& dist = nvlink_only ? t_dist_nvl_ : t_dist_all_;
  const auto dst = static_cast<std::size_t>(dst_tv);
  auto u = static_cast<std::size_t>(src_tv);
  const int base = node * te_;
  while (u != dst) {
    const Cost target = dist[u * tv + dst];
    assert(target < kCostInf && "walk_template: no path (validated at load)");
    // The links on a least-cost path, in t_out_ order (one pass: the choice below indexes them).
    thread_local std::vector<int> ok;
    ok.clear();
    for (int e : t_out_[u]) {
      const Link& l = links_[static_cast<std::size_t>(e)];  // node 0's copy: vertex ids are template ids
      if (nvlink_only && l.kind != LinkKind::nvlink) continue;
      if (l.dst != dst && !t_transit_[l.dst]) continue;
      const Cost rest = dist[l.dst * tv + dst];
      if (rest < kCostInf && link_cost_[static_cast<std::size_t>(e)] + rest == target) ok.push_back(e);
    }
    assert(!ok.empty() && "walk_template: broken distance table");
    if (keyed != nullptr && ok.size() > 1) *keyed = true;
    const int e = ok[pick(hash, hop, ok.size())];
    out.push_back(base + e);
    u = links_[static_cast<std::size_t>(e)].dst;
    ++hop;
  }
}

void Cluster::walk_fabric(int src_switch, int dst_switch, std::uint64_t hash, std::int64_t dest, int& hop,
                          std::vector<int>& out, bool* keyed) const {
  const auto dst = static_cast<std::size_t>(dst_switch);
  std::int64_t d = dest;  // destination routing: what is left of the destination index after the earlier choices
  auto u = static_cast<std::size_t>(src_switch);
  while (u != dst) {
    const Cost target = fabric_cost(u, dst);
    assert(target < kCostInf && "walk_fabric: fabric not connected");
    auto next = [&](int e) {
      return static_cast<std::size_t>(vertex_to_switch_[links_[static_cast<std::size_t>(e)].dst]);
    };
    // The links on a least-cost path, in f_out_ order (one pass: the choice below indexes them).
    thread_local std::vector<int> ok;
    ok.clear();
    for (int e : f_out_[u]) {
      const Cost rest = fabric_cost(next(e), dst);
      if (rest < kCostInf && link_cost_[static_cast<std::size_t>(e)] + rest == target) ok.push_back(e);
    }
    const std::size_t count = ok.size();
    assert(count > 0 && "walk_fabric: broken distance table");
    std::size_t k = 0;
    if (dest < 0) {
      if (keyed != nullptr && count > 1) *keyed = true;
      k = pick(hash, hop, count);
    } else {
      const auto n = static_cast<std::int64_t>(count);
      k = static_cast<std::size_t>(d % n);
      d /= n;
    }
    out.push_back(ok[k]);
    u = next(ok[k]);
    ++hop;
  }
}

PathType Cluster::classify(const std::vector<int>& template_route) const {
  bool nvlink = !template_route.empty(), upi = false, cpu = false, bridge = false;
  int switches = 0;
  for (std::size_t i = 0; i < template_route.size(); ++i) {
    const Link& l = links_[static_cast<std::size_t>(template_route[i])];
    nvlink = nvlink && l.kind == LinkKind::nvlink;
    upi = upi || l.kind == LinkKind::upi;
    if (i + 1 == template_route.size()) break;  // the last vertex is the destination
    switch (graph_[l.dst].kind) {
      case VertexKind::cpu:
        cpu = true;
        break;
      case VertexKind::pcie_switch:
        ++switches;
        bridge = bridge || t_host_bridge_[l.dst];
        break;
      default:
        break;
    }
  }
  if (nvlink) return PathType::nvlink;
  if (upi) return PathType::sys;
  if (cpu) return PathType::node;
  if (bridge) return PathType::phb;
  return switches > 1 ? PathType::pxb : PathType::pix;
}

PathType Cluster::gpu_path_type(int local_a, int local_b) const {
  assert(local_a >= 0 && local_a < gpus_per_node_ && local_b >= 0 && local_b < gpus_per_node_ &&
         "gpu_path_type: GPU out of range");
  return gpu_path_[static_cast<std::size_t>(local_a * gpus_per_node_ + local_b)];
}

PathType Cluster::gpu_nic_path_type(int local_gpu, int local_nic) const {
  assert(local_gpu >= 0 && local_gpu < gpus_per_node_ && local_nic >= 0 && local_nic < nics_per_node() &&
         "gpu_nic_path_type: out of range");
  const auto tv = static_cast<std::size_t>(tv_);
  const int g = gpu_tv_[static_cast<std::size_t>(local_gpu)], n = nic_tv_[static_cast<std::size_t>(local_nic)];
  if (t_dist_all_[static_cast<std::size_t>(g) * tv + static_cast<std::size_t>(n)] >= kCostInf) return PathType::sys;
  std::vector<int> r;
  int hop = 0;
  walk_template(0, g, n, false, 0, hop, r);
  return classify(r);
}

std::vector<int> Cluster::gpu_to_cpu_route(int local_gpu, int numa_node) const {
  assert(local_gpu >= 0 && local_gpu < gpus_per_node_ && "gpu_to_cpu_route: GPU out of range");
  std::vector<int> out;
  const auto tv = static_cast<std::size_t>(tv_);
  const auto g = static_cast<std::size_t>(gpu_tv_[static_cast<std::size_t>(local_gpu)]);
  for (std::size_t v = 0; v < tv; ++v) {
    const VertexProps& p = graph_[v];
    if (p.kind != VertexKind::cpu || cpu_numa_[static_cast<std::size_t>(p.local)] != numa_node) continue;
    if (t_dist_all_[g * tv + v] >= kCostInf) continue;
    int hop = 0;
    walk_template(0, static_cast<int>(g), static_cast<int>(v), false, 0, hop, out);
    break;
  }
  return out;
}

bool Cluster::staged(int src_rank, int dst_rank) const {
  if (src_rank == dst_rank) return false;
  if (!same_node(src_rank, dst_rank)) return !gpudirect_rdma_;
  const int G = gpus_per_node_;
  return staged_pair_[static_cast<std::size_t>((src_rank % G) * G + dst_rank % G)] != 0;
}

std::vector<int> Cluster::route(int src_rank, int dst_rank, std::uint64_t flow_key, bool* keyed) const {
  thread_local RouteMemo memo;  // storage only: forgotten on every call (this cluster may be a new one)
  memo.owner = nullptr;
  return route(src_rank, dst_rank, flow_key, keyed, memo);
}

std::vector<int> Cluster::route(int src_rank, int dst_rank, std::uint64_t flow_key, bool* keyed,
                                RouteMemo& memo) const {
  assert(src_rank >= 0 && src_rank < num_gpus() && dst_rank >= 0 && dst_rank < num_gpus() &&
         "route: rank out of range");
  std::vector<int> out;
  if (keyed != nullptr) *keyed = false;
  memo.tie_index = -1;
  memo.only_pair_keyed = false;
  if (src_rank == dst_rank) return out;
  const int na = node_of(src_rank), nb = node_of(dst_rank);
  const bool rails = rail_symmetric_ && na != nb;
  const bool own_nics = own_rail_nics() && na != nb;
  const int shift = (dst_rank % gpus_per_node_ - src_rank % gpus_per_node_ + gpus_per_node_) % gpus_per_node_;
  const std::uint64_t ha = static_cast<std::uint64_t>(rails ? na : src_rank);
  const std::uint64_t hb = rails ? static_cast<std::uint64_t>(nb) << 20 ^ static_cast<std::uint64_t>(shift)
                                 : static_cast<std::uint64_t>(dst_rank);
  const std::uint64_t h = splitmix64(splitmix64(splitmix64(ha) ^ hb) ^ flow_key);
  int hop = 0;
  const auto tv = static_cast<std::size_t>(tv_);
  const auto ga =
      static_cast<std::size_t>(gpu_tv_[static_cast<std::size_t>(src_rank % gpus_per_node_)]);
  const auto gb =
      static_cast<std::size_t>(gpu_tv_[static_cast<std::size_t>(dst_rank % gpus_per_node_)]);
  if (na == nb) {
    if (staged(src_rank, dst_rank)) {  // NCCL's SHM transport: through the source GPU's host memory
      const int mem = gpu_mem_tv_[static_cast<std::size_t>(src_rank % gpus_per_node_)];
      walk_template(na, static_cast<int>(ga), mem, false, h, hop, out, keyed);
      walk_template(na, mem, static_cast<int>(gb), false, h, hop, out, keyed);
      return out;
    }
    const bool nvl = t_dist_nvl_[ga * tv + gb] < kCostInf;
    walk_template(na, static_cast<int>(ga), static_cast<int>(gb), nvl, h, hop, out, keyed);
    return out;
  }
  // Choose the (source NIC, destination NIC) pair of least total cost; ties by hash. The cost of a pair is
  // (GPU -> NIC i inside node a, its uplink) + (leaf of i -> leaf of j) + (downlink of j, NIC j -> GPU inside b):
  // the node-side parts are gathered once per NIC, so the nics x nics pairs only add the fabric part. The pair
  // costs do not depend on the flow key: kept in `memo` for the next key between the same GPUs.
  const int nics = nics_per_node();
  const auto un = static_cast<std::size_t>(nics);
  const int la = src_rank % gpus_per_node_, lb = dst_rank % gpus_per_node_;
  if (memo.owner != this || memo.na != na || memo.nb != nb || memo.la != la || memo.lb != lb) {
    memo.owner = this, memo.na = na, memo.nb = nb, memo.la = la, memo.lb = lb;
    thread_local std::vector<Cost> side_a, side_b;
    thread_local std::vector<std::size_t> leaf_a, leaf_b;
    side_a.resize(un), side_b.resize(un), leaf_a.resize(un), leaf_b.resize(un);
    memo.pair_cost.resize(un * un);
    for (std::size_t k = 0; k < un; ++k) {
      const auto nk = static_cast<std::size_t>(nic_tv_[k]);
      const auto gi = static_cast<std::size_t>(na) * un + k, gj = static_cast<std::size_t>(nb) * un + k;
      const Cost a = t_dist_all_[ga * tv + nk], b = t_dist_all_[nk * tv + gb];
      side_a[k] = a >= kCostInf ? kCostInf : a + link_cost_[static_cast<std::size_t>(nic_up_[gi])];
      side_b[k] = b >= kCostInf ? kCostInf : link_cost_[static_cast<std::size_t>(nic_down_[gj])] + b;
      leaf_a[k] = static_cast<std::size_t>(leaf_of_nic_[gi]);
      leaf_b[k] = static_cast<std::size_t>(leaf_of_nic_[gj]);
    }
    Cost best = kCostInf;
    std::size_t ties = 0;
    for (std::size_t i = 0; i < un; ++i)
      for (std::size_t j = 0; j < un; ++j) {
        Cost c = kCostInf;
        if (side_a[i] < kCostInf && side_b[j] < kCostInf) {
          const Cost f = fabric_cost(leaf_a[i], leaf_b[j]);
          if (f < kCostInf) c = side_a[i] + f + side_b[j];
        }
        memo.pair_cost[i * un + j] = c;
        if (c < best)
          best = c, ties = 1;
        else if (c == best && c < kCostInf)
          ++ties;
      }
    assert(best < kCostInf && "route: no inter-node path (validated at load)");
    memo.best = best, memo.ties = ties;
    memo.own_si = memo.own_dj = -1;
    memo.pair_route.resize(un * un);
    memo.pair_route_known.assign(un * un, 0);
    if (own_nics) {  // the GPUs' own rails where they cost no more
      const int own_a = own_nic_[ga], own_b = own_nic_[gb];
      if (memo.pair_cost[static_cast<std::size_t>(own_a) * un + static_cast<std::size_t>(own_b)] == best)
        memo.own_si = own_a, memo.own_dj = own_b;
    }
  }
  int si = memo.own_si, dj = memo.own_dj;
  if (keyed != nullptr && si < 0 && memo.ties > 1) *keyed = true;
  std::size_t k = pick(h, hop++, memo.ties);
  if (si < 0) memo.tie_index = static_cast<int>(k);
  for (std::size_t p = 0; p < un * un && si < 0; ++p)
    if (memo.pair_cost[p] == memo.best && k-- == 0) si = static_cast<int>(p / un), dj = static_cast<int>(p % un);
  const std::size_t pair = static_cast<std::size_t>(si) * un + static_cast<std::size_t>(dj);
  if (memo.pair_route_known[pair]) {
    memo.only_pair_keyed = true;
    return memo.pair_route[pair];
  }
  bool walk_keyed = false;  // a tie on the walks below went by the hash: the route is this key's only
  const auto gi = static_cast<std::size_t>(na * nics + si),
             gj = static_cast<std::size_t>(nb * nics + dj);
  // Without GPUDirect RDMA each side passes through host memory of its GPU's NUMA node.
  const int mem_a = gpudirect_rdma_ ? -1 : gpu_mem_tv_[static_cast<std::size_t>(src_rank % gpus_per_node_)];
  const int mem_b = gpudirect_rdma_ ? -1 : gpu_mem_tv_[static_cast<std::size_t>(dst_rank % gpus_per_node_)];
  if (mem_a >= 0) {
    walk_template(na, static_cast<int>(ga), mem_a, false, h, hop, out, &walk_keyed);
    walk_template(na, mem_a, nic_tv_[static_cast<std::size_t>(si)], false, h, hop, out, &walk_keyed);
  } else {
    walk_template(na, static_cast<int>(ga), nic_tv_[static_cast<std::size_t>(si)], false, h, hop, out, &walk_keyed);
  }
  out.push_back(nic_up_[gi]);
  // Destination routing balances the destinations of a leaf over its up-ports: rail-aligned leaves hold one NIC
  // per node, numbered by node (so every rail makes the same choices), other leaves NICs in global order.
  const std::int64_t dest = fabric_routing_ != FabricRouting::destination ? -1
                            : rail_aligned_leaves_                        ? static_cast<std::int64_t>(nb)
                                                                          : static_cast<std::int64_t>(gj);
  walk_fabric(leaf_of_nic_[gi], leaf_of_nic_[gj], h, dest, hop, out, &walk_keyed);
  out.push_back(nic_down_[gj]);
  if (mem_b >= 0) {
    walk_template(nb, nic_tv_[static_cast<std::size_t>(dj)], mem_b, false, h, hop, out, &walk_keyed);
    walk_template(nb, mem_b, static_cast<int>(gb), false, h, hop, out, &walk_keyed);
  } else {
    walk_template(nb, nic_tv_[static_cast<std::size_t>(dj)], static_cast<int>(gb), false, h, hop, out, &walk_keyed);
  }
  if (walk_keyed) {
    if (keyed != nullptr) *keyed = true;
  } else {
    memo.pair_route[pair] = out;
    memo.pair_route_known[pair] = 1;
    memo.only_pair_keyed = true;
  }
  return out;
}

BytesPerSecond Cluster::path_bandwidth(const std::vector<int>& route) const {
  BytesPerSecond bw(std::numeric_limits<double>::infinity());
  for (int e : route) bw = std::min(bw, link(e).bandwidth);
  return bw;
}

Seconds Cluster::path_latency(const std::vector<int>& route) const {
  Seconds s(0.0);
  for (int e : route) s += link(e).latency;
  return s;
}

BytesPerSecond Cluster::bisection_bandwidth() const {
  const int gpus = num_gpus();
  if (gpus < 2) return BytesPerSecond(0.0);
  using Traits = boost::adjacency_list_traits<boost::vecS, boost::vecS, boost::directedS>;
  using FlowGraph = boost::adjacency_list<
      boost::vecS, boost::vecS, boost::directedS, boost::no_property,
      boost::property<
          boost::edge_capacity_t, std::int64_t,
          boost::property<boost::edge_residual_capacity_t, std::int64_t,
                          boost::property<boost::edge_reverse_t, Traits::edge_descriptor>>>>;
  const auto V = boost::num_vertices(graph_);
  FlowGraph fg(V + 2);
  const auto source = V, sink = V + 1;
  auto cap = boost::get(boost::edge_capacity, fg);
  auto rev = boost::get(boost::edge_reverse, fg);
  auto add = [&](std::size_t a, std::size_t b, std::int64_t c) {
    const auto e = boost::add_edge(a, b, fg).first;
    const auto r = boost::add_edge(b, a, fg).first;
    cap[e] = c;
    cap[r] = 0;
    rev[e] = r;
    rev[r] = e;
  };
  std::int64_t sum = 1;
  for (const Link& l : links_) {
    const auto c = static_cast<std::int64_t>(std::llround(l.bandwidth.value));
    sum += c;
    add(l.src, l.dst, c);
  }
  for (int r = 0; r < gpus; ++r) {
    if (r < gpus / 2)
      add(source, gpu_vertex(r), sum);
    else
      add(gpu_vertex(r), sink, sum);
  }
  const std::int64_t flow = boost::push_relabel_max_flow(fg, source, sink);
  return BytesPerSecond(static_cast<double>(flow));
}

// ---- Loaders ----

namespace {

constexpr std::int64_t kMaxGpus = 1 << 20;  // a multi-plane NDR fabric reaches 524,288

int resolve_nodes(const ClusterSpec& spec, const ClusterOptions& opt) {
  auto fail = [&](const std::string& path, const std::string& msg) {
    throw ErrorException(input_error(spec.source, path, msg));
  };
  const int gpn = spec.node.gpus;
  int nodes = spec.default_nodes;
  if (opt.nodes) {
    if (*opt.nodes < 1)
      fail("--nodes", "expected a positive node count, got " + std::to_string(*opt.nodes));
    nodes = *opt.nodes;
  }
  if (opt.gpus) {
    if (*opt.gpus < 1)
      fail("--gpus", "expected a positive GPU count, got " + std::to_string(*opt.gpus));
    const auto from_gpus = static_cast<int>((static_cast<std::int64_t>(*opt.gpus) + gpn - 1) / gpn);  // no int overflow
    if (opt.nodes && from_gpus != *opt.nodes)
      fail("--gpus", std::to_string(*opt.gpus) + " GPUs need " + std::to_string(from_gpus) +
                         " nodes of " + std::to_string(gpn) + " GPUs, but " +
                         std::to_string(*opt.nodes) + " nodes were given");
    nodes = from_gpus;
  }
  if (static_cast<std::int64_t>(nodes) * gpn > kMaxGpus)
    fail(opt.gpus    ? "--gpus"
         : opt.nodes ? "--nodes"
                     : "$.nodes",
         "expected at most " + std::to_string(kMaxGpus) + " GPUs, got " + std::to_string(nodes) +
             " nodes of " + std::to_string(gpn) + " GPUs");
  return nodes;
}

}  // namespace

Expected<Cluster> cluster_from_json(const Json& doc, std::string source, ClusterOptions options) {
  return catch_errors([&] {
    const ClusterSpec spec = parse_cluster_spec(doc, source);
    return ClusterBuilder::build(spec, resolve_nodes(spec, options));
  });
}

Expected<Cluster> load_cluster(const fs::path& file, ClusterOptions options) {
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  return cluster_from_json(*doc, file.string(), options);
}

std::vector<std::string> available_cluster_names() { return available_data_names("topologies"); }

Expected<Cluster> load_cluster_by_name_or_path(std::string_view name_or_path,
                                               ClusterOptions options) {
  const std::string s(name_or_path);
  if (looks_like_path(s)) return load_cluster(s, options);
  if (const auto f = find_data_file("topologies", s)) {
    auto doc = read_json_file(f->path);
    if (!doc) return doc.error();
    return cluster_from_json(*doc, f->label, options);
  }
  std::string list;
  for (const auto& n : available_cluster_names()) list += (list.empty() ? "" : ", ") + n;
  return input_error("", "",
                     "unknown cluster '" + s +
                         "' (available: " + (list.empty() ? "none found" : list) +
                         "; or give the path of a .json file)");
}

}  // namespace scalescope
