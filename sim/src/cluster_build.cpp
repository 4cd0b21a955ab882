// Expanding a ClusterSpec into the cluster graph: node template copies, the fabric switches and
// the routing tables (template all-pairs costs, fabric switch all-pairs costs), then validation.
#include <algorithm>
#include <cassert>
#include <boost/graph/dijkstra_shortest_paths.hpp>
#include <cmath>
#include <limits>
#include <string>

#include "cluster_spec.hpp"

namespace scalescope {

namespace {

std::int64_t link_cost(Seconds latency) { return kHopCost + std::llround(latency.value * 1e12); }

/// Down and up ports of a switch of `radix` ports with down:up ratio `ratio` (as many down ports as
/// fit).
std::pair<int, int> split_ports(int radix, double ratio) {
  int down = static_cast<int>(std::floor(radix * ratio / (ratio + 1.0) + 1e-9));
  down = std::max(down, 1);
  auto up_for = [&](int d) { return std::max(1, static_cast<int>(std::ceil(d / ratio - 1e-9))); };
  while (down > 1 && down + up_for(down) > radix) --down;
  return {down, up_for(down)};
}

/// Smallest number of upper switches `s` dividing `up` such that each upper switch needs at most
/// `radix` ports for `lowers` lower switches with up/s parallel ports each; 0 if none.
int upper_switch_count(int up, int lowers, int radix) {
  for (int s = 1; s <= up; ++s)
    if (up % s == 0 && static_cast<std::int64_t>(lowers) * (up / s) <= radix) return s;
  return 0;
}


/// The upper tiers of one fabric plane of `leaves` leaves, as the build lays them out: the fewest tiers that
/// connect the leaves (a rail-optimized fabric drops its third tier when two suffice), the spines of a 2-tier
/// plane or the pods and core switches of a 3-tier one, and why the tiers cannot connect them ("" when they can).
/// One function for the capacity check before the build and the build itself, so the two cannot disagree.
struct UpperTiers {
  int tiers = 0;
  int spines = 0;          ///< 2 tiers: spine switches
  int pods = 0, cores = 0;  ///< 3 tiers: pods of down2 leaves, core switches per aggregation column
  std::string error;
};

UpperTiers upper_tiers(const FabricSpec& f, int up1, int leaves, std::int64_t total_nics, int nodes) {
  UpperTiers t;
  t.tiers = f.tiers;
  if (f.kind == FabricKind::rail_optimized && t.tiers == 3 && upper_switch_count(up1, leaves, f.radix) > 0) t.tiers = 2;
  const std::string too_small = "a " + std::to_string(t.tiers) + "-tier fat tree of radix " + std::to_string(f.radix) +
                                " cannot connect " + std::to_string(total_nics) + " NICs (" + std::to_string(nodes) +
                                " nodes)";
  if (t.tiers == 2) {
    t.spines = upper_switch_count(up1, leaves, f.radix);
    if (t.spines == 0) t.error = too_small + (f.kind == FabricKind::fat_tree ? "; use 3 tiers" : "; give max_tiers 3");
    return t;
  }
  const int down2 = split_ports(f.radix, f.oversubscription[1]).first;
  const int up2 = split_ports(f.radix, f.oversubscription[1]).second;
  const std::int64_t pods = (static_cast<std::int64_t>(leaves) + down2 - 1) / down2;
  t.pods = static_cast<int>(std::min<std::int64_t>(pods, std::numeric_limits<int>::max()));
  t.cores = t.pods > 1 ? upper_switch_count(up2, t.pods, f.radix) : 0;
  if (t.pods > 1 && t.cores == 0) t.error = too_small;
  return t;
}

/// The leaves of one fabric plane and whether the tiers can connect them, as the fabric build below
/// lays them out, computed before anything is built: a request the fabric cannot connect (a million
/// GPUs on a 2-tier radix-64 tree) fails at once instead of after the node copies of the whole
/// cluster (gigabytes). Returns the error message, or "" when the fabric connects them.
std::string fabric_capacity_error(const NodeSpec& n, const FabricSpec& f, int nodes) {
  if (f.kind == FabricKind::none || f.kind == FabricKind::single_switch || nodes <= 1) return "";
  const auto [down1, up1] = split_ports(f.radix, f.oversubscription[0]);
  const std::int64_t total_nics = static_cast<std::int64_t>(n.nics) * nodes;
  std::vector<int> rails = n.nic_rails;
  std::sort(rails.begin(), rails.end());
  std::int64_t leaves = 0, L = 0;
  if (f.rail_aligned) {
    const std::int64_t blocks = (nodes + down1 - 1) / down1;
    leaves = blocks * static_cast<std::int64_t>(rails.size());
    L = f.rail_planes && !rails.empty() ? blocks * std::count(rails.begin(), rails.end(), rails[0]) : leaves;
  } else {
    leaves = (total_nics + down1 - 1) / down1;
    L = f.rail_planes && !rails.empty() ? 0 : leaves;  // unaligned leaves serve no rail
  }
  if (leaves == 0 || L <= 1) return "";
  const int Li = static_cast<int>(std::min<std::int64_t>(L, std::numeric_limits<int>::max()));
  return upper_tiers(f, up1, Li, total_nics, nodes).error;
}
}  // namespace

/// Local NIC of rail g by local GPU g when every GPU's rail NIC is among its nearest NICs, both ways (one NIC per GPU,
/// rails 0..G-1); else empty.
std::vector<int> ClusterBuilder::own_rail_nics(const Cluster& c, const NodeSpec& n) {
  if (c.nodes_ < 2 || n.nics != n.gpus) return {};
  std::vector<int> own(static_cast<std::size_t>(n.gpus), -1);
  for (int k = 0; k < n.nics; ++k) {
    const int rail = n.nic_rails[static_cast<std::size_t>(k)];
    if (rail < 0 || rail >= n.gpus || own[static_cast<std::size_t>(rail)] >= 0) return {};
    own[static_cast<std::size_t>(rail)] = k;
  }
  const auto tv = static_cast<std::size_t>(c.tv_);
  for (int g = 0; g < n.gpus; ++g) {  // the own NIC is a nearest NIC, both ways
    const auto gv = static_cast<std::size_t>(c.gpu_tv_[static_cast<std::size_t>(g)]);
    const auto ov = static_cast<std::size_t>(c.nic_tv_[static_cast<std::size_t>(own[static_cast<std::size_t>(g)])]);
    for (int nic : c.nic_tv_) {
      const auto nv = static_cast<std::size_t>(nic);
      if (c.t_dist_all_[gv * tv + nv] < c.t_dist_all_[gv * tv + ov] ||
          c.t_dist_all_[nv * tv + gv] < c.t_dist_all_[ov * tv + gv])
        return {};
    }
  }
  return own;
}

/// No link between two switches that serve no single rail (Cluster::rail_symmetric()).
bool ClusterBuilder::rails_share_no_link(const Cluster& c) {
  for (const Link& l : c.links_) {
    const int s = c.vertex_to_switch_[l.src], d = c.vertex_to_switch_[l.dst];
    if (s >= 0 && d >= 0 && c.graph_[l.src].rail < 0 && c.graph_[l.dst].rail < 0) return false;
  }
  return true;
}

void ClusterBuilder::host_paths(Cluster& c, const NodeSpec& n, const std::string& source) {
  const auto tv = static_cast<std::size_t>(c.tv_);
  c.gpudirect_rdma_ = n.gpudirect_rdma;
  c.p2p_level_ = n.p2p_level;
  c.cpu_numa_ = n.cpu_numa;
  c.cpu_affinity_ = n.cpu_affinity;
  c.t_host_bridge_.assign(tv, 0);
  for (int k = 0; k < n.pcie_switches; ++k)
    c.t_host_bridge_[static_cast<std::size_t>(n.first_pcie() + k)] = n.host_bridge[static_cast<std::size_t>(k)];
  // NUMA node of a device: that of its nearest CPU (ties: the lowest index).
  auto numa_of = [&](int dev) {
    Cluster::Cost best = kCostInf;
    int numa = -1;
    for (int k = 0; k < n.cpus; ++k) {
      const Cluster::Cost d =
          c.t_dist_all_[static_cast<std::size_t>(dev) * tv + static_cast<std::size_t>(n.first_cpu() + k)];
      if (d < best) best = d, numa = n.cpu_numa[static_cast<std::size_t>(k)];
    }
    return numa;
  };
  for (int k = 0; k < n.gpus; ++k) c.gpu_numa_.push_back(numa_of(k));
  for (int k = 0; k < n.nics; ++k) c.nic_numa_.push_back(numa_of(n.first_nic() + k));
  c.gpu_mem_tv_.assign(static_cast<std::size_t>(n.gpus), -1);
  for (int k = 0; k < n.gpus && n.stages(); ++k) {
    const int numa = c.gpu_numa_[static_cast<std::size_t>(k)];
    const auto m = std::find(n.host_memory_numa.begin(), n.host_memory_numa.end(), numa);
    if (m == n.host_memory_numa.end())
      throw ErrorException(input_error(source, "$.node.links",
                                       "gpu" + std::to_string(k) +
                                           " reaches no CPU, so it cannot copy through host memory (gpudirect_rdma "
                                           "false or p2p_level " +
                                           (n.p2p_level ? std::string(to_string(*n.p2p_level)) : "LOC") + ")"));
    c.gpu_mem_tv_[static_cast<std::size_t>(k)] =
        n.first_host_memory() + static_cast<int>(m - n.host_memory_numa.begin());
  }
  // Path types of the direct GPU-to-GPU routes, and the pairs that copy through host memory instead.
  const auto G = static_cast<std::size_t>(n.gpus);
  c.gpu_path_.assign(G * G, PathType::nvlink);
  c.staged_pair_.assign(G * G, 0);
  for (int a = 0; a < n.gpus; ++a)
    for (int b = 0; b < n.gpus; ++b) {
      if (a == b) continue;
      const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
      std::vector<int> r;
      int hop = 0;
      c.walk_template(0, a, b, c.t_dist_nvl_[ua * tv + ub] < kCostInf, 0, hop, r);
      const PathType t = c.classify(r);
      c.gpu_path_[ua * G + ub] = t;
      auto rank = [](PathType x) { return static_cast<int>(x == PathType::node ? PathType::phb : x); };  // as NCCL
      c.staged_pair_[ua * G + ub] = !n.p2p_level || rank(t) > rank(*n.p2p_level);
    }
}

Cluster ClusterBuilder::build(const ClusterSpec& spec, int nodes) {
  const NodeSpec& n = spec.node;
  const FabricSpec& f = spec.fabric;
  auto fail_at = [&](const std::string& path, const std::string& msg) {
    throw ErrorException(input_error(spec.source, path, msg));
  };

  Cluster c;
  c.name_ = spec.name;
  c.description_ = spec.description;
  c.sources_ = spec.sources;
  c.fabric_kind_ = f.kind;
  c.fabric_routing_ = f.routing;
  c.rail_aligned_leaves_ = f.rail_aligned;
  c.gpu_ = n.gpu;
  c.nodes_ = nodes;
  c.gpus_per_node_ = n.gpus;
  c.tv_ = n.num_vertices();
  c.te_ = 2 * static_cast<int>(n.links.size());
  if (f.kind == FabricKind::none && nodes > 1)
    fail_at("$.fabric.kind",
            "fabric 'none' holds a single node, but " + std::to_string(nodes) +
                " nodes were asked for (give a fabric: single_switch, fat_tree or rail_optimized)");

  if (const std::string e = fabric_capacity_error(n, f, nodes); !e.empty()) fail_at("$.fabric.radix", e);

  auto& g = c.graph_;
  auto add_link = [&](VertexId a, VertexId b, LinkKind kind, BytesPerSecond bw, Seconds lat,
                      int lanes) {
    for (int dir = 0; dir < 2; ++dir) {
      const int index = static_cast<int>(c.links_.size());
      const VertexId s = dir == 0 ? a : b, d = dir == 0 ? b : a;
      boost::add_edge(s, d, EdgeProps{kind, bw, lat, index, lanes}, g);
      c.links_.push_back(Link{index, s, d, index ^ 1, kind, bw, lat, lanes});
      c.link_cost_.push_back(link_cost(lat));
    }
  };

  // Node copies: vertices [node*tv, (node+1)*tv), links [node*te, (node+1)*te).
  for (int node = 0; node < nodes; ++node) {
    const std::string prefix = "n" + std::to_string(node) + ".";
    for (int tv = 0; tv < c.tv_; ++tv) {
      const VertexKind kind = n.kind_of(tv);
      const int local = n.local_of(tv);
      const int rail = kind == VertexKind::nic ? n.nic_rails[static_cast<std::size_t>(local)] : -1;
      boost::add_vertex(VertexProps{kind, prefix + n.name_of(tv), node, local, rail, 0}, g);
    }
    const auto base = static_cast<VertexId>(node) * static_cast<VertexId>(c.tv_);
    for (const auto& l : n.links)
      add_link(base + static_cast<VertexId>(l.a), base + static_cast<VertexId>(l.b), l.kind,
               l.bandwidth, l.latency, l.lanes);
  }
  for (int k = 0; k < n.gpus; ++k) c.gpu_tv_.push_back(k);
  for (int k = 0; k < n.nics; ++k) c.nic_tv_.push_back(n.first_nic() + k);

  // Template tables (node 0's vertex ids are the template ids).
  const auto tv = static_cast<std::size_t>(c.tv_);
  c.t_transit_.assign(tv, 0);
  for (std::size_t v = 0; v < tv; ++v) {
    const VertexKind k = n.kind_of(static_cast<int>(v));
    c.t_transit_[v] =  // host memory is an end point: only staged routes (two walks) reach it
        k == VertexKind::nvswitch || k == VertexKind::pcie_switch || k == VertexKind::cpu;
  }
  c.t_out_.assign(tv, {});
  for (int e = 0; e < c.te_; ++e) c.t_out_[c.links_[static_cast<std::size_t>(e)].src].push_back(e);
  auto all_pairs = [&](bool nvlink_only) {
    std::vector<Cluster::Cost> d(tv * tv, kCostInf);
    for (std::size_t v = 0; v < tv; ++v) d[v * tv + v] = 0;
    for (int e = 0; e < c.te_; ++e) {
      const Link& l = c.links_[static_cast<std::size_t>(e)];
      if (nvlink_only && l.kind != LinkKind::nvlink) continue;
      auto& x = d[l.src * tv + l.dst];
      x = std::min(x, c.link_cost_[static_cast<std::size_t>(e)]);
    }
    for (std::size_t k = 0; k < tv; ++k) {  // Floyd-Warshall, only through transit vertices
      if (!c.t_transit_[k]) continue;
      for (std::size_t i = 0; i < tv; ++i) {
        const auto dik = d[i * tv + k];
        if (dik >= kCostInf) continue;
        for (std::size_t j = 0; j < tv; ++j) {
          const auto dkj = d[k * tv + j];
          if (dkj < kCostInf && dik + dkj < d[i * tv + j]) d[i * tv + j] = dik + dkj;
        }
      }
    }
    return d;
  };
  c.t_dist_all_ = all_pairs(false);
  c.t_dist_nvl_ = all_pairs(true);

  // Every GPU of a node reaches every other GPU of the node.
  for (int a = 0; a < n.gpus; ++a)
    for (int b = 0; b < n.gpus; ++b)
      if (a != b &&
          c.t_dist_all_[static_cast<std::size_t>(a) * tv + static_cast<std::size_t>(b)] >= kCostInf)
        fail_at("$.node.links",
                "GPU n0.gpu" + std::to_string(a) + " has no route to n0.gpu" + std::to_string(b));

  host_paths(c, n, spec.source);

  c.vertex_to_switch_.assign(boost::num_vertices(g), -1);
  if (f.kind == FabricKind::none || nodes == 1)
    return c;  // a single node is built without its fabric

  // ---- Fabric ----
  const int nics = n.nics;
  const std::int64_t total_nics = static_cast<std::int64_t>(nics) * nodes;
  std::vector<int> nic_leaf(static_cast<std::size_t>(total_nics), 0);
  auto add_switch = [&](const std::string& name, int local, int rail, int tier) {
    const VertexId v =
        boost::add_vertex(VertexProps{VertexKind::fabric_switch, name, -1, local, rail, tier}, g);
    c.vertex_to_switch_.push_back(static_cast<int>(c.fs_vertex_.size()));
    c.fs_vertex_.push_back(v);
    return static_cast<int>(c.fs_vertex_.size()) - 1;
  };
  std::vector<int> leaves;  // switch ids of the leaf tier
  int down1 = 0, up1 = 0;
  if (f.kind == FabricKind::single_switch) {
    leaves.push_back(add_switch("switch0", 0, -1, 1));
  } else {
    std::tie(down1, up1) = split_ports(f.radix, f.oversubscription[0]);
    std::vector<int> leaf_rail;
    if (f.rail_aligned) {
      std::vector<int> rails = n.nic_rails;
      std::sort(rails.begin(), rails.end());
      const int blocks = (nodes + down1 - 1) / down1;
      for (int b = 0; b < blocks; ++b)
        for (int r : rails) leaf_rail.push_back(r);
      for (int node = 0; node < nodes; ++node)
        for (int k = 0; k < nics; ++k) {
          const int rail = n.nic_rails[static_cast<std::size_t>(k)];
          const auto slot = std::lower_bound(rails.begin(), rails.end(), rail) - rails.begin();
          nic_leaf[static_cast<std::size_t>(node) * static_cast<std::size_t>(nics) +
                   static_cast<std::size_t>(k)] = (node / down1) * nics + static_cast<int>(slot);
        }
    } else {
      const auto count = (total_nics + down1 - 1) / down1;
      leaf_rail.assign(static_cast<std::size_t>(count), -1);
      for (std::int64_t i = 0; i < total_nics; ++i)
        nic_leaf[static_cast<std::size_t>(i)] = static_cast<int>(i / down1);
    }
    for (std::size_t l = 0; l < leaf_rail.size(); ++l)
      leaves.push_back(
          add_switch("leaf" + std::to_string(l), static_cast<int>(l), leaf_rail[l], 1));
  }
  if (leaves.empty())
    leaves.push_back(add_switch("switch0", 0, -1, 1));  // no NICs: validation reports it

  // NIC <-> leaf links, in global NIC order.
  for (int node = 0; node < nodes; ++node)
    for (int k = 0; k < nics; ++k) {
      const auto gi = static_cast<std::size_t>(node) * static_cast<std::size_t>(nics) +
                      static_cast<std::size_t>(k);
      const int leaf = leaves[static_cast<std::size_t>(nic_leaf[gi])];
      c.leaf_of_nic_.push_back(leaf);
      c.nic_up_.push_back(static_cast<int>(c.links_.size()));
      c.nic_down_.push_back(static_cast<int>(c.links_.size()) + 1);
      add_link(c.nic_vertex(node, k), c.fs_vertex_[static_cast<std::size_t>(leaf)], f.link_kind,
               f.port_bandwidth, f.link_latency, 1);
    }

  auto link_switches = [&](int lower, int upper, int lanes) {
    add_link(c.fs_vertex_[static_cast<std::size_t>(lower)],
             c.fs_vertex_[static_cast<std::size_t>(upper)], f.link_kind,
             f.port_bandwidth * static_cast<double>(lanes), f.link_latency, lanes);
  };
  // Fabric planes: every leaf in one plane, or (rail planes) the leaves of each rail in their own.
  std::vector<std::vector<int>> planes;
  std::vector<int> plane_rail;
  if (f.rail_planes) {
    std::vector<int> rails = n.nic_rails;
    std::sort(rails.begin(), rails.end());
    for (int r : rails) {
      planes.emplace_back();
      plane_rail.push_back(r);
      for (int leaf : leaves)
        if (c.graph_[c.fs_vertex_[static_cast<std::size_t>(leaf)]].rail == r) planes.back().push_back(leaf);
    }
  } else {
    planes.push_back(leaves);
    plane_rail.push_back(-1);
  }
  const int L = static_cast<int>(planes[0].size());
  const UpperTiers ut = upper_tiers(f, up1, L, total_nics, nodes);
  c.fabric_tiers_ = L > 1 && f.kind != FabricKind::single_switch ? ut.tiers : 1;
  std::vector<std::vector<int>> plane_switches(planes.size());
  for (std::size_t p = 0; p < planes.size(); ++p) {
    std::vector<int>& mine = plane_switches[p];
    mine = planes[p];
    const std::vector<int>& pl = planes[p];
    const std::string prefix = f.rail_planes ? "r" + std::to_string(plane_rail[p]) + "." : "";
    auto add_upper = [&](const std::string& name, int local, int tier) {
      const int id = add_switch(prefix + name + std::to_string(local), local, plane_rail[p], tier);
      mine.push_back(id);
      return id;
    };
    if (f.kind == FabricKind::single_switch || L <= 1) continue;
    if (!ut.error.empty()) fail_at("$.fabric.radix", ut.error);
    if (ut.tiers == 2) {
      std::vector<int> ids;
      for (int sp = 0; sp < ut.spines; ++sp) ids.push_back(add_upper("spine", sp, 2));
      for (int l = 0; l < L; ++l)
        for (int sp = 0; sp < ut.spines; ++sp)
          link_switches(pl[static_cast<std::size_t>(l)], ids[static_cast<std::size_t>(sp)], up1 / ut.spines);
      continue;
    }
    const auto [down2, up2] = split_ports(f.radix, f.oversubscription[1]);
    const int pod_leaves = down2, aggs = up1, pods = ut.pods, cores = ut.cores;
    std::vector<int> agg_ids;
    for (int q = 0; q < pods; ++q)
      for (int a = 0; a < aggs; ++a) agg_ids.push_back(add_upper("agg", q * aggs + a, 2));
    for (int l = 0; l < L; ++l)
      for (int a = 0; a < aggs; ++a)
        link_switches(pl[static_cast<std::size_t>(l)], agg_ids[static_cast<std::size_t>((l / pod_leaves) * aggs + a)],
                      1);
    std::vector<int> core_ids;
    for (int a = 0; a < aggs && pods > 1; ++a)
      for (int k = 0; k < cores; ++k) core_ids.push_back(add_upper("core", a * cores + k, 3));
    for (int q = 0; q < pods && pods > 1; ++q)
      for (int a = 0; a < aggs; ++a)
        for (int k = 0; k < cores; ++k)
          link_switches(agg_ids[static_cast<std::size_t>(q * aggs + a)],
                        core_ids[static_cast<std::size_t>(a * cores + k)], up2 / cores);
  }

  // Fabric tables: switch -> switch links, and the all-pairs costs of one plane (Dijkstra from each
  // of its switches); the planes are built alike, so one table serves every plane.
  const auto S = c.fs_vertex_.size();
  c.f_out_.assign(S, {});
  c.f_plane_.assign(S, -1);
  c.f_local_.assign(S, -1);
  for (std::size_t p = 0; p < plane_switches.size(); ++p) {
    assert(plane_switches[p].size() == plane_switches[0].size() && "rail planes are built alike");
    for (std::size_t i = 0; i < plane_switches[p].size(); ++i) {
      c.f_plane_[static_cast<std::size_t>(plane_switches[p][i])] = static_cast<int>(p);
      c.f_local_[static_cast<std::size_t>(plane_switches[p][i])] = static_cast<int>(i);
    }
  }
  const std::size_t P = plane_switches[0].size();
  c.f_plane_size_ = P;
  using FGraph =
      boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, boost::no_property,
                            boost::property<boost::edge_weight_t, std::int64_t>>;
  FGraph fg(P);
  for (const Link& l : c.links_) {
    const int s = c.vertex_to_switch_[l.src], d = c.vertex_to_switch_[l.dst];
    if (s < 0 || d < 0) continue;
    c.f_out_[static_cast<std::size_t>(s)].push_back(l.index);
    if (c.f_plane_[static_cast<std::size_t>(s)] != 0 || c.f_plane_[static_cast<std::size_t>(d)] != 0) continue;
    boost::add_edge(static_cast<std::size_t>(c.f_local_[static_cast<std::size_t>(s)]),
                    static_cast<std::size_t>(c.f_local_[static_cast<std::size_t>(d)]),
                    c.link_cost_[static_cast<std::size_t>(l.index)], fg);
  }
  c.f_dist_.assign(P * P, kCostInf);
  std::vector<std::int64_t> dist(P);
  for (std::size_t v = 0; v < P; ++v) {
    boost::dijkstra_shortest_paths(fg, v, boost::distance_map(dist.data()).distance_inf(kCostInf));
    std::copy(dist.begin(), dist.end(), c.f_dist_.begin() + static_cast<std::ptrdiff_t>(v * P));
  }
  // NCCL sends through the NIC nearest each GPU: its own rail's on DGX / HGX H100-class nodes (docs/cluster-format.md,
  // "NIC selection"). The rails are symmetric with rail planes, or one plane whose switch-to-switch links each touch
  // one rail's leaf (leaf + spine: the spines are shared, their links are not). Staging through host memory joins
  // the rails again (a NUMA node's host memory and PCIe uplinks carry every rail of its GPUs), so no rail stands for
  // the others then.
  if (f.kind == FabricKind::rail_optimized && f.own_rail_nics) c.own_nic_ = own_rail_nics(c, n);
  c.rail_symmetric_ = c.own_rail_nics() && !n.stages() && rails_share_no_link(c);

  // Every GPU reaches a NIC and is reached from one (the fabric itself is connected by
  // construction).
  if (nodes > 1) {
    auto reach = [&](int gpu, bool from_gpu) {
      for (int nic : c.nic_tv_) {
        const auto a = static_cast<std::size_t>(from_gpu ? gpu : nic),
                   b = static_cast<std::size_t>(from_gpu ? nic : gpu);
        if (c.t_dist_all_[a * tv + b] < kCostInf) return true;
      }
      return false;
    };
    for (int k = 0; k < n.gpus; ++k) {
      if (!reach(k, true))
        fail_at("$.node.links",
                "GPU n0.gpu" + std::to_string(k) + " has no route to n1.gpu0" +
                    (nics == 0 ? " (the node has no NICs)" : " (it reaches no NIC)"));
      if (!reach(k, false))
        fail_at("$.node.links",
                "GPU n0.gpu0 has no route to n1.gpu" + std::to_string(k) + " (no NIC reaches it)");
    }
  }
  return c;
}

}  // namespace scalescope
