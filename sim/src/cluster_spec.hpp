// Internal: the parsed form of a cluster file (before expansion into the graph) and the builder.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/sim/cluster.hpp"

namespace scalescope {

/// Route costs: hops * kHopCost + latency in picoseconds, so one hop outweighs any latency < 1 s.
inline constexpr std::int64_t kCostInf = kRouteCostInf;
inline constexpr std::int64_t kHopCost = 1'000'000'000'000;

/// One physical link of the node template between template vertices a and b.
struct TemplateLinkSpec {
  int a = -1, b = -1;
  LinkKind kind = LinkKind::pcie;
  BytesPerSecond bandwidth;  ///< per direction, all lanes together
  Seconds latency;
  int lanes = 1;
  std::string path;  ///< JSON path of the link entry, for errors
};

/// Node template. Template vertices are numbered gpus, nvswitches, pcie switches, cpus, nics, then the host
/// memories (one per NUMA node, only when the node stages through host memory).
struct NodeSpec {
  GpuSpec gpu;
  int gpus = 0, nvswitches = 0, pcie_switches = 0, cpus = 0, nics = 0;
  std::vector<int> nic_rails;  ///< per NIC
  std::vector<TemplateLinkSpec> links;
  bool gpudirect_rdma = true;                          ///< `gpudirect_rdma`
  std::optional<PathType> p2p_level = PathType::sys;   ///< `p2p_level`; nullopt: LOC
  BytesPerSecond host_memory_bandwidth = GBps(307.2);  ///< `host_memory_GBps`, per NUMA node (read + write)
  std::vector<char> host_bridge;                       ///< per PCIe switch: listed in `host_bridges`
  std::vector<int> cpu_numa;                           ///< per CPU: `cpu_numa_nodes` (default its index)
  std::vector<std::string> cpu_affinity;               ///< per CPU: `cpu_affinity` (empty: not given)
  std::vector<int> host_memory_numa;                   ///< per host-memory vertex: its NUMA node

  /// Whether routes may pass through host memory (then host-memory vertices are built).
  bool stages() const { return !gpudirect_rdma || p2p_level != PathType::sys; }
  int host_memories() const { return static_cast<int>(host_memory_numa.size()); }
  int num_vertices() const { return gpus + nvswitches + pcie_switches + cpus + nics + host_memories(); }
  int first_nvswitch() const { return gpus; }
  int first_pcie() const { return gpus + nvswitches; }
  int first_cpu() const { return gpus + nvswitches + pcie_switches; }
  int first_nic() const { return gpus + nvswitches + pcie_switches + cpus; }
  int first_host_memory() const { return first_nic() + nics; }
  VertexKind kind_of(int tv) const;
  int local_of(int tv) const;
  /// "gpu3", "nvswitch0", "pcie1", "cpu0", "nic7", "hostmem0" (host memory of NUMA node 0).
  std::string name_of(int tv) const;
};

struct FabricSpec {
  FabricKind kind = FabricKind::none;
  LinkKind link_kind = LinkKind::ib;
  BytesPerSecond port_bandwidth;  ///< NIC speed = every switch port's speed, per direction
  Seconds link_latency;           ///< per hop (cable + the switch entered)
  int tiers = 2;      ///< fat_tree: the tiers; rail_optimized: the most tiers (the fewest that fit are used)
  bool rail_planes = false;  ///< rail_optimized: each rail its own fabric plane
  bool own_rail_nics = true;  ///< rail_optimized `nic_selection`: own_rail (true) or hashed
  int radix = 0;
  std::vector<double> oversubscription;  ///< per tier below the top (leaf, aggregation); each >= 1
  bool rail_aligned = false;
  /// `routing`; default destination on InfiniBand, ecmp on RoCE / Ethernet.
  FabricRouting routing = FabricRouting::destination;
};

struct ClusterSpec {
  std::string source;
  std::string name, description;
  std::vector<std::string> sources;
  int default_nodes = 1;
  NodeSpec node;
  FabricSpec fabric;
};

/// Parses the document (throws ErrorException with file, JSON path and expectation).
ClusterSpec parse_cluster_spec(const Json& doc, const std::string& source);

/// Expands a spec into the graph and routing tables (throws ErrorException on topology errors,
/// e.g. a GPU with no route to another GPU, or a fabric too small for the node count).
class ClusterBuilder {
 public:
  static Cluster build(const ClusterSpec& spec, int nodes);

 private:
  static std::vector<int> own_rail_nics(const Cluster& c, const NodeSpec& n);
  static bool rails_share_no_link(const Cluster& c);
  /// GPUDirect RDMA, P2P level, NUMA nodes, host-memory vertices of the GPUs and the path types.
  static void host_paths(Cluster& c, const NodeSpec& n, const std::string& source);
};

}  // namespace scalescope
