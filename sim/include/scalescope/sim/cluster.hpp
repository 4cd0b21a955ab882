// The cluster graph: GPUs, NVSwitches, PCIe switches, CPUs, NICs and fabric switches joined by
// full-duplex links (Boost.Graph), with deterministic shortest-path routing (ECMP), path metrics
// and bisection bandwidth. Loaded from the JSON format described in docs/cluster-format.md.
//
// Routing rules (route()):
//  * A route is a list of directed link indices from the source GPU to the destination GPU.
//  * Cost is lexicographic: fewest hops first, then lowest summed latency.
//  * Routes never pass THROUGH a GPU or a NIC (they are endpoints), and never through a node
//    other than the source's and the destination's; a route between two GPUs of one node stays
//    inside the node.
//  * Inside a node an all-NVLink path is preferred whenever one exists (as NCCL prefers NVLink
//    P2P over PCIe); otherwise the route uses PCIe switches / CPUs (and the CPU-CPU link).
//  * Among equal-cost paths one is chosen per hop by hashing (src rank, dst rank, flow_key):
//    deterministic ECMP. The same arguments always give the same route, on every platform.
//  * Host-memory staging (docs/cluster-format.md, `gpudirect_rdma`, `p2p_level`): without GPUDirect RDMA a
//    route between nodes goes GPU -> host memory of the GPU's NUMA node -> NIC ... NIC -> host memory of the
//    destination GPU's NUMA node -> GPU (NCCL's net transport stages through host buffers); a pair of one node
//    whose path type is farther than `p2p_level` goes GPU -> host memory of the source GPU's NUMA node -> GPU
//    (NCCL's SHM transport). Each half is a shortest path of its own; host memory is a vertex per NUMA node
//    (added only when a node stages) joined to its CPU by a `memory` link.
//  * Own rail NICs (own_rail_nics(): rail_optimized fabrics with nic_selection own_rail, the default): between
//    nodes, GPU g leaves through its own rail's NIC whenever that costs no more than another NIC.
//  * Rail-symmetric clusters (rail_symmetric()): own rail NICs, and the hash is taken over (src node,
//    dst node, dst GPU - src GPU mod GPUs per node, flow_key), so the traffic of GPU g of every node
//    takes the same choices on rail g as GPU 0's on rail 0: the rails carry isomorphic traffic.
//  * route() is const, allocation-light and thread-safe: all tables are precomputed at load.
#pragma once

#include <boost/graph/adjacency_list.hpp>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope {

/// Route cost of "no path" (internal to the routing tables).
inline constexpr std::int64_t kRouteCostInf = std::numeric_limits<std::int64_t>::max() / 8;

/// Physical link technology. `upi` is the CPU-to-CPU socket interconnect (Intel UPI, AMD xGMI);
/// `memory` joins a CPU to its NUMA node's host memory (built, never written in files).
enum class LinkKind { nvlink, pcie, upi, ib, roce, ethernet, memory };
/// "nvlink", "pcie", "upi", "ib", "roce", "ethernet", "memory" (the spelling used in files).
std::string_view to_string(LinkKind kind);

enum class VertexKind { gpu, nvswitch, pcie_switch, cpu, nic, fabric_switch, host_memory };
/// "gpu", "nvswitch", "pcie_switch", "cpu", "nic", "fabric_switch", "host_memory".
std::string_view to_string(VertexKind kind);

/// The path between two devices of one node, nearest first, as `nvidia-smi topo -m` and NCCL name them:
/// NVLink; PIX one PCIe switch; PXB several PCIe switches (no host bridge); PHB through a PCIe host bridge
/// (a PCIe switch the file lists in `host_bridges`); NODE through a CPU (its root complexes) of one socket;
/// SYS across the CPU-to-CPU link. NCCL counts NODE as PHB.
enum class PathType { nvlink, pix, pxb, phb, node, sys };
/// "NV", "PIX", "PXB", "PHB", "NODE", "SYS".
std::string_view to_string(PathType type);
/// Inverse of to_string; also "NVL" for nvlink (NCCL_P2P_LEVEL's spelling).
std::optional<PathType> parse_path_type(std::string_view s);

struct VertexProps {
  VertexKind kind = VertexKind::gpu;
  /// "n3.gpu5", "n0.nvswitch0", "n2.pcie1", "n0.cpu1", "n7.nic3"; fabric switches:
  /// "switch0" (single_switch), "leaf12", "spine3" (2-tier), "leaf4", "agg7", "core0" (3-tier).
  std::string name;
  int node = -1;   ///< node index; -1 for fabric switches
  int local = -1;  ///< index among the node's devices of this kind (gpu5 -> 5); fabric switch:
                   ///< index in its tier
  int rail = -1;   ///< NIC: its rail; rail-aligned leaf switch: the rail it serves; otherwise -1
  int tier = 0;    ///< fabric switch: 1 leaf, 2 spine / aggregation, 3 core; 0 for node devices
};

struct EdgeProps {
  LinkKind kind = LinkKind::pcie;
  BytesPerSecond bandwidth;  ///< in this direction (each physical link is two directed edges)
  Seconds latency;           ///< one traversal of this link (wire + the switch it enters)
  int index = -1;  ///< dense id in [0, num_links()): the resource id used by the flow network
  int lanes = 1;   ///< physical links bundled in this edge (NVLink count, parallel switch ports)
};

using ClusterGraph =
    boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS, VertexProps, EdgeProps>;
using VertexId = ClusterGraph::vertex_descriptor;

/// One directed link, by its dense index.
struct Link {
  int index = -1;
  VertexId src = 0;
  VertexId dst = 0;
  int reverse = -1;  ///< index of the opposite direction of the same physical link
  LinkKind kind = LinkKind::pcie;
  BytesPerSecond bandwidth;
  Seconds latency;
  int lanes = 1;
};

/// Peak dense tensor throughput per data type (absent where the GPU has no such mode, e.g. fp8 on
/// A100).
struct PeakFlops {
  std::optional<FlopsPerSecond> fp8, bf16, fp16, tf32, fp32;
  /// By name: "fp8", "bf16", "fp16", "tf32", "fp32"; nullopt for an unknown name or an absent
  /// value.
  std::optional<FlopsPerSecond> get(std::string_view dtype) const;
};

struct GpuSpec {
  std::string model;             ///< e.g. "H200 SXM 141GB"
  Bytes memory;                  ///< usable device memory as nvidia-smi reports it
  BytesPerSecond hbm_bandwidth;  ///< peak HBM bandwidth (datasheet)
  int sm_count = 0;
  PeakFlops peak;  ///< dense (no sparsity) peak
};

enum class FabricKind { none, single_switch, fat_tree, rail_optimized };
std::string_view to_string(FabricKind kind);

/// How fabric switches choose among equal-cost next hops (docs/cluster-format.md, "Routing").
/// destination: by the destination alone (D-mod-k: the i-th choice of a route toward destination d takes port
/// (d / k_1 / ... / k_{i-1}) mod k_i), as an InfiniBand subnet manager's fat-tree routing fills the switches'
/// forwarding tables (OpenSM ftree, congestion-free for shift permutations); every flow to one destination NIC
/// leaves a switch through one port. ecmp: by a hash of (source, destination, flow key) at each hop, as Ethernet
/// ECMP hashes a flow's 5-tuple.
enum class FabricRouting { destination, ecmp };

/// Size of the cluster built from a file. At most one is needed; with neither, the file's
/// "nodes" (default 1) is used. `gpus` = N gives ceil(N / gpus_per_node) nodes. If both are
/// given they must agree (an input error otherwise).
struct ClusterOptions {
  std::optional<int> nodes;
  std::optional<int> gpus;
};

/// A built cluster. Obtained only from the loaders below (never half-built); copyable and movable.
/// All queries are const and thread-safe.
class Cluster {
 public:
  const std::string& name() const { return name_; }
  const std::string& description() const { return description_; }
  const std::vector<std::string>& sources() const { return sources_; }
  /// The file's fabric kind. A single-node cluster is built without fabric switches (its NICs
  /// then lead nowhere), whatever the kind.
  FabricKind fabric_kind() const { return fabric_kind_; }
  /// True when routes between nodes leave GPU g through its own rail-g NIC wherever that NIC costs no more than
  /// another (own_rail_nics()), as NCCL takes the NIC nearest each GPU.
  bool own_rail_nics() const { return !own_nic_.empty(); }
  /// True when the rails are disjoint and alike: own_rail_nics() and no fabric link joins two switches that serve
  /// no single rail (rail planes, or one plane of leaf + spine, whose spines are shared but whose links each touch
  /// one rail's leaf). Traffic that stays on its GPU's rail then never meets another rail's, and equal choices on
  /// every rail are made alike (route()), so simulating GPU 0's rail stands for all of them (models' TP rail
  /// classes). Never true for a node that stages through host memory (gpudirect_rdma false or a p2p_level other
  /// than SYS): its GPUs' rails meet in host memory and on the PCIe uplinks.
  bool rail_symmetric() const { return rail_symmetric_; }
  /// How the fabric's switches choose among equal-cost ports (FabricRouting).
  FabricRouting fabric_routing() const { return fabric_routing_; }
  /// Switch tiers the fabric was built with (0 without a fabric, 1 for a single switch or leaf);
  /// a rail_optimized fabric uses the fewest tiers up to its max_tiers that connect the nodes.
  int fabric_tiers() const { return fabric_tiers_; }

  /// False when the node's NICs cannot read and write GPU memory (`gpudirect_rdma: false`): routes between
  /// nodes are staged through host memory (top of this file).
  bool gpudirect_rdma() const { return gpudirect_rdma_; }
  /// NCCL_P2P_LEVEL of the nodes (`p2p_level`): pairs of one node whose path type is farther copy through host
  /// memory; nullopt for LOC (P2P off, NCCL_P2P_DISABLE=1). Default SYS: P2P over every path.
  std::optional<PathType> p2p_level() const { return p2p_level_; }
  /// Path type between two GPUs of one node (of the direct GPU-to-GPU route, before any staging), by local index.
  PathType gpu_path_type(int local_a, int local_b) const;
  /// Path type between a GPU and a NIC of one node, by local index.
  PathType gpu_nic_path_type(int local_gpu, int local_nic) const;
  /// NUMA node of a GPU / NIC: that of the CPU nearest to it (fewest hops, then lowest latency, then lowest
  /// index; `cpu_numa_nodes`, default cpu k = NUMA node k); -1 when no CPU is reachable.
  int gpu_numa_node(int local_gpu) const { return gpu_numa_[static_cast<std::size_t>(local_gpu)]; }
  int nic_numa_node(int local_nic) const { return nic_numa_[static_cast<std::size_t>(local_nic)]; }
  /// NUMA node of each CPU vertex, and its `cpu_affinity` text (empty when the file gives none).
  const std::vector<int>& cpu_numa_nodes() const { return cpu_numa_; }
  const std::vector<std::string>& cpu_affinity() const { return cpu_affinity_; }
  /// Links of node 0 from local GPU `local_gpu` to the (first) CPU of NUMA node `numa_node`, fewest hops: the path
  /// of a host-device copy. Empty when the node has no CPU of that NUMA node or no path to it.
  std::vector<int> gpu_to_cpu_route(int local_gpu, int numa_node) const;
  /// Whether route(src, dst) passes through host memory (staging).
  bool staged(int src_rank, int dst_rank) const;

  int num_nodes() const { return nodes_; }
  int gpus_per_node() const { return gpus_per_node_; }
  int num_gpus() const { return nodes_ * gpus_per_node_; }
  int nics_per_node() const { return static_cast<int>(nic_tv_.size()); }
  const GpuSpec& gpu_spec() const { return gpu_; }

  /// Vertex of GPU `global_rank` (= node * gpus_per_node + local).
  VertexId gpu_vertex(int global_rank) const;
  int node_of(int global_rank) const { return global_rank / gpus_per_node_; }
  bool same_node(int rank_a, int rank_b) const { return node_of(rank_a) == node_of(rank_b); }
  /// Vertex of NIC `local_nic` (0-based, in file order) of `node`.
  VertexId nic_vertex(int node, int local_nic) const;

  const ClusterGraph& graph() const { return graph_; }
  const VertexProps& vertex(VertexId v) const { return graph_[v]; }
  int num_vertices() const { return static_cast<int>(boost::num_vertices(graph_)); }

  /// Number of directed links (twice the physical links).
  int num_links() const { return static_cast<int>(links_.size()); }
  const Link& link(int index) const;
  /// "n0.gpu0->n0.nvswitch0" (for traces and messages).
  std::string link_name(int index) const;
  /// Capacity of every directed link, indexed by link index (for the flow network).
  std::vector<BytesPerSecond> link_capacities() const;

  /// Directed link indices along the route from src_rank's GPU to dst_rank's GPU (rules at the
  /// top of this file). Empty when src_rank == dst_rank. Thread-safe. `keyed`, when given, is set to whether the
  /// flow key broke an equal-cost tie on the way: when false, every flow key gives this same route.
  std::vector<int> route(int src_rank, int dst_rank, std::uint64_t flow_key = 0, bool* keyed = nullptr) const;
  /// What route() computes once per (source node, destination node, local GPUs) before the flow key is used: the
  /// cost of every (source NIC, destination NIC) pair. Callers that route many flow keys between the same GPUs
  /// (ECMP candidates) pass one memo to keep it; a memo belongs to one cluster and one thread.
  class RouteMemo {
    friend class Cluster;
    const Cluster* owner = nullptr;
    int na = -1, nb = -1, la = -1, lb = -1;
    std::int64_t best = 0;
    std::size_t ties = 0;
    int own_si = -1, own_dj = -1;  ///< the GPUs' own rails where they cost no more (rail-symmetric), else -1
    std::vector<std::int64_t> pair_cost;
    /// The route through each (source NIC, destination NIC) pair, once walked without a hashed choice on the way
    /// (the walks' ties, not the NIC pair's): every flow key then gives the same route through that pair.
    std::vector<std::vector<int>> pair_route;
    std::vector<char> pair_route_known;

   public:
    /// Of the last route() between nodes: the index of its NIC pair among the pairs of least cost (0 ... ties-1,
    /// or -1 when it took the GPUs' own rails or crossed no fabric), and whether the key chose nothing else on
    /// it. When every one of the `tie_pairs()` pairs was taken by a key that chose nothing else, any other key
    /// gives one of those routes.
    int tie_index = -1;
    bool only_pair_keyed = false;
    std::size_t tie_pairs() const { return ties; }
  };
  /// route() reusing `memo` when it holds the same pair of nodes and local GPUs (the same route, faster).
  std::vector<int> route(int src_rank, int dst_rank, std::uint64_t flow_key, bool* keyed, RouteMemo& memo) const;
  /// Minimum bandwidth over the route's links; +infinity for an empty route.
  BytesPerSecond path_bandwidth(const std::vector<int>& route) const;
  /// Sum of the route's link latencies; 0 for an empty route.
  Seconds path_latency(const std::vector<int>& route) const;

  /// Bisection bandwidth: the maximum flow (= minimum cut) from the GPUs of ranks
  /// [0, num_gpus/2) to the GPUs of ranks [num_gpus/2, num_gpus), one direction, counting every
  /// link (NVLink, PCIe, fabric) at its per-direction bandwidth (Boost push-relabel max flow).
  /// 0 when the cluster has fewer than 2 GPUs. Computed on each call (milliseconds at 1,024 GPUs).
  BytesPerSecond bisection_bandwidth() const;

 private:
  friend class ClusterBuilder;
  Cluster() = default;
  using Cost =
      std::int64_t;  ///< hops * 1e12 + latency in picoseconds (lexicographic in one integer)

  /// `keyed` (if not null) is set when a choice among several went by `hash`.
  void walk_template(int node, int src_tv, int dst_tv, bool nvlink_only, std::uint64_t hash,
                     int& hop, std::vector<int>& out, bool* keyed = nullptr) const;
  /// Path type of a template route (links of node 0).
  PathType classify(const std::vector<int>& template_route) const;
  /// Equal-cost choices by `dest` (destination routing, dest >= 0) or by `hash` (ECMP, dest < 0).
  void walk_fabric(int src_switch, int dst_switch, std::uint64_t hash, std::int64_t dest, int& hop,
                   std::vector<int>& out, bool* keyed = nullptr) const;

  std::string name_, description_;
  std::vector<std::string> sources_;
  FabricKind fabric_kind_ = FabricKind::none;
  bool rail_symmetric_ = false;
  FabricRouting fabric_routing_ = FabricRouting::ecmp;
  bool rail_aligned_leaves_ = false;  ///< a leaf takes one rail's NICs of consecutive nodes
  int fabric_tiers_ = 0;
  std::vector<int> own_nic_;  ///< own_rail_nics(): local NIC of rail g, by local GPU g; else empty
  bool gpudirect_rdma_ = true;
  std::optional<PathType> p2p_level_ = PathType::sys;
  std::vector<int> gpu_numa_, nic_numa_, cpu_numa_;
  std::vector<std::string> cpu_affinity_;
  std::vector<int> gpu_mem_tv_;      ///< template vertex of the host memory of GPU g's NUMA node (-1: none)
  std::vector<char> t_host_bridge_;  ///< template vertex is a PCIe host bridge (`host_bridges`)
  std::vector<PathType> gpu_path_;   ///< G x G path types
  std::vector<char> staged_pair_;    ///< G x G: the pair copies through host memory (p2p_level)
  GpuSpec gpu_;
  int nodes_ = 1;
  int gpus_per_node_ = 1;

  ClusterGraph graph_;
  std::vector<Link> links_;
  std::vector<Cost> link_cost_;  ///< per link index

  // Per-node template: node n's vertices are [n*tv, (n+1)*tv), its links [n*te, (n+1)*te).
  int tv_ = 0, te_ = 0;
  std::vector<int> gpu_tv_;              ///< template vertex of local GPU i
  std::vector<int> nic_tv_;              ///< template vertex of local NIC k
  std::vector<char> t_transit_;          ///< template vertex may be passed through
  std::vector<std::vector<int>> t_out_;  ///< template vertex -> template link indices leaving it
  std::vector<Cost> t_dist_all_,
      t_dist_nvl_;  ///< tv x tv, all links / NVLink links only (kCostInf if none)

  // Fabric: switches s = 0..S-1; NIC (node, k) hangs off leaf_of_nic_[node*nics+k].
  std::vector<VertexId> fs_vertex_;
  std::vector<int> vertex_to_switch_;    ///< per vertex: switch id or -1
  std::vector<std::vector<int>> f_out_;  ///< switch -> fabric link indices to other switches
  /// Switch-to-switch costs inside one fabric plane (P x P, P switches per plane): the planes are
  /// built alike (rail planes) or there is one plane holding every switch.
  std::vector<Cost> f_dist_;
  std::vector<int> f_plane_, f_local_;  ///< per switch: its plane and its index in the plane
  std::size_t f_plane_size_ = 0;
  Cost fabric_cost(std::size_t u, std::size_t v) const {
    return f_plane_[u] != f_plane_[v] ? kRouteCostInf : f_dist_[static_cast<std::size_t>(f_local_[u]) * f_plane_size_ +
                                                                 static_cast<std::size_t>(f_local_[v])];
  }
  std::vector<int> nic_up_, nic_down_,
      leaf_of_nic_;  ///< per global NIC: uplink, downlink, its switch
};

/// Builds a cluster from a parsed document; `source` names it in errors (a file path or
/// "<builtin:x>").
Expected<Cluster> cluster_from_json(const Json& doc, std::string source,
                                    ClusterOptions options = {});
/// Reads and builds a cluster file.
Expected<Cluster> load_cluster(const std::filesystem::path& file, ClusterOptions options = {});
/// A path (contains '/', ends in ".json", or names an existing file) or a bare name such as
/// "hgx-h200-4", looked up as NAME.json in $SCALESCOPE_DATA_DIR/topologies/ and then in
/// SCALESCOPE_SOURCE_DIR/topologies/. An unknown name gives an input error listing the names.
Expected<Cluster> load_cluster_by_name_or_path(std::string_view name_or_path,
                                               ClusterOptions options = {});
/// Names (file stems, sorted, without duplicates) of the built-in cluster files in the folders
/// above.
std::vector<std::string> available_cluster_names();

}  // namespace scalescope
