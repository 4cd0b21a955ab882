// Host paths of a node: nvidia-smi path types (PIX/PXB/PHB/NODE/SYS), NUMA nodes, GPUDirect RDMA
// off (staging through host memory between nodes) and NCCL's P2P level (staging inside a node),
// with hand-derived routes and bandwidths; the defaults leave every graph as it was.
#include <gtest/gtest.h>

#include <string>

#include "cluster_test_util.hpp"
#include "collective_test_clusters.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope {
namespace {

using testing::check_route;
using testing::make_cluster;
using testing::must_load;
using testing::topology_file;

std::string names(const Cluster& c, const std::vector<int>& route) {
  std::string out;
  for (int l : route) out += (out.empty() ? "" : " ") + c.link_name(l);
  return out;
}

/// The topology file as JSON, to modify.
Json topology_json(const std::string& name) {
  auto doc = read_json_file(topology_file(name));
  EXPECT_TRUE(doc.has_value());
  return std::move(doc).take_or_throw();
}

Cluster from(const Json& doc, int nodes = 1) {
  ClusterOptions o;
  o.nodes = nodes;
  auto c = cluster_from_json(doc, "<test>", o);
  if (!c) ADD_FAILURE() << c.error().str();
  return std::move(c).take_or_throw();
}

std::string error_of(const Json& doc) {
  auto c = cluster_from_json(doc, "<test>");
  return c ? std::string("no error") : c.error().str();
}

TEST(HostPaths, PcieServerPathTypesFollowSwitchSocketAndUpi) {
  const Cluster c = must_load(topology_file("pcie-gen5-8"));
  // gpu0/gpu1 share pcie0 (PIX); gpu2 is under pcie1 of the same socket (through cpu0: NODE); gpu4
  // is under cpu1 (across UPI: SYS). As the file's description says nvidia-smi shows.
  EXPECT_EQ(c.gpu_path_type(0, 1), PathType::pix);
  EXPECT_EQ(c.gpu_path_type(0, 2), PathType::node);
  EXPECT_EQ(c.gpu_path_type(0, 4), PathType::sys);
  EXPECT_EQ(c.gpu_path_type(7, 6), PathType::pix);
  // NIC k sits on pcie k with GPUs 2k, 2k+1.
  EXPECT_EQ(c.gpu_nic_path_type(0, 0), PathType::pix);
  EXPECT_EQ(c.gpu_nic_path_type(0, 1), PathType::node);
  EXPECT_EQ(c.gpu_nic_path_type(0, 3), PathType::sys);
  // NUMA: pcie0-1 hang off cpu0, pcie2-3 off cpu1 (default NUMA ids = CPU index).
  EXPECT_EQ(c.gpu_numa_node(0), 0);
  EXPECT_EQ(c.gpu_numa_node(5), 1);
  EXPECT_EQ(c.nic_numa_node(1), 0);
  EXPECT_EQ(c.nic_numa_node(2), 1);
  // Cross-socket P2P goes through the root complexes and UPI: gpu0->pcie0->cpu0->cpu1->pcie2->gpu4.
  EXPECT_EQ(
      names(c, c.route(0, 4)),
      "n0.gpu0->n0.pcie0 n0.pcie0->n0.cpu0 n0.cpu0->n0.cpu1 n0.cpu1->n0.pcie2 n0.pcie2->n0.gpu4");
  EXPECT_FALSE(c.staged(0, 4));
}

TEST(HostPaths, NvswitchNodeIsNvlinkBetweenGpusAndPcieToNics) {
  const Cluster c = must_load(topology_file("dgx-h100-8"));
  for (int b = 1; b < 8; ++b) EXPECT_EQ(c.gpu_path_type(0, b), PathType::nvlink);
  EXPECT_EQ(c.gpu_nic_path_type(3, 3), PathType::pix);
  EXPECT_EQ(c.gpu_nic_path_type(3, 0), PathType::node);
  EXPECT_EQ(c.gpu_nic_path_type(3, 7), PathType::sys);
}

TEST(HostPaths, CascadedSwitchesArePxbAndDeclaredHostBridgesPhb) {
  // gpu0, gpu1 under leaf switch pcie0, gpu2 under pcie1; pcie0 and pcie1 under pcie2 (a parent
  // switch): gpu0 - gpu2 crosses three switches without a CPU (PXB). gpu3 and gpu4 hang off pcie3,
  // a host bridge under cpu0: PHB.
  Json node = {{"gpu", testing::test_gpu()},
               {"gpus", 5},
               {"pcie_switches", 4},
               {"cpus", 1},
               {"host_bridges", {"pcie3"}}};
  node["links"] = Json::array({{{"a", {"gpu0", "gpu1", "gpu2"}},
                                {"b", {"pcie0", "pcie0", "pcie1"}},
                                {"kind", "pcie"},
                                {"bandwidth_GBps", 63},
                                {"latency_us", 0.2}},
                               {{"a", "pcie0-1"},
                                {"b", "pcie2"},
                                {"kind", "pcie"},
                                {"bandwidth_GBps", 63},
                                {"latency_us", 0.2}},
                               {{"a", {"pcie2", "pcie3"}},
                                {"b", "cpu0"},
                                {"kind", "pcie"},
                                {"bandwidth_GBps", 63},
                                {"latency_us", 0.2}},
                               {{"a", "gpu3-4"},
                                {"b", "pcie3"},
                                {"kind", "pcie"},
                                {"bandwidth_GBps", 63},
                                {"latency_us", 0.2}}});
  const Cluster c = make_cluster("pxb", node);
  EXPECT_EQ(c.gpu_path_type(0, 1), PathType::pix);
  EXPECT_EQ(c.gpu_path_type(0, 2), PathType::pxb);
  EXPECT_EQ(c.gpu_path_type(3, 4), PathType::phb);
  EXPECT_EQ(c.gpu_path_type(0, 3), PathType::node);
}

TEST(HostPaths, DefaultsBuildTheSameGraphAsGpudirectRdmaTrue) {
  // No key and `gpudirect_rdma: true, p2p_level: SYS` are the same cluster: same vertices, links
  // and routes, and no host-memory vertex.
  Json doc = topology_json("dgx-h100-8");
  const Cluster a = from(doc, 2);
  doc["node"]["gpudirect_rdma"] = true;
  doc["node"]["p2p_level"] = "SYS";
  const Cluster b = from(doc, 2);
  ASSERT_EQ(a.num_vertices(), b.num_vertices());
  ASSERT_EQ(a.num_links(), b.num_links());
  for (int v = 0; v < a.num_vertices(); ++v)
    EXPECT_NE(a.vertex(static_cast<VertexId>(v)).kind, VertexKind::host_memory);
  for (int s = 0; s < 16; s += 3)
    for (int d = 0; d < 16; d += 5) EXPECT_EQ(a.route(s, d), b.route(s, d)) << s << "->" << d;
  EXPECT_TRUE(a.gpudirect_rdma());
  EXPECT_FALSE(a.staged(0, 8));
}

TEST(HostPaths, WithoutGpudirectRdmaInterNodeRoutesStageThroughHostMemory) {
  Json doc = topology_json("dgx-h100-8");
  doc["node"]["gpudirect_rdma"] = false;
  const Cluster c = from(doc, 2);
  EXPECT_FALSE(c.gpudirect_rdma());
  EXPECT_TRUE(c.staged(0, 8));
  EXPECT_FALSE(c.staged(0, 1));  // inside a node NVLink P2P is unaffected
  // n0.gpu0 -> n1.gpu0: up to host memory of gpu0's NUMA node (cpu0) and back down to NIC 0 (rail
  // 0), the rail-0 leaf, then NIC 0 of node 1 into host memory and down to gpu0: 14 links.
  const auto r = c.route(0, 8);
  EXPECT_EQ(check_route(c, 0, 8, r), "");
  EXPECT_EQ(names(c, r),
            "n0.gpu0->n0.pcie0 n0.pcie0->n0.cpu0 n0.cpu0->n0.hostmem0 n0.hostmem0->n0.cpu0 "
            "n0.cpu0->n0.pcie0 "
            "n0.pcie0->n0.nic0 n0.nic0->leaf0 leaf0->n1.nic0 n1.nic0->n1.pcie0 n1.pcie0->n1.cpu0 "
            "n1.cpu0->n1.hostmem0 n1.hostmem0->n1.cpu0 n1.cpu0->n1.pcie0 n1.pcie0->n1.gpu0");
  // Host memory: 307.2 GB/s per NUMA node (default), half per direction = 153.6; the NIC (50) stays
  // the narrowest.
  EXPECT_NEAR(to_GBps(c.link(r[2]).bandwidth), 153.6, 1e-9);
  EXPECT_EQ(c.link(r[2]).kind, LinkKind::memory);
  EXPECT_NEAR(to_GBps(c.path_bandwidth(r)), 50.0, 1e-9);
  // gpu4's NUMA node is 1: its staging memory is hostmem1.
  EXPECT_NE(names(c, c.route(4, 12)).find("n0.cpu1->n0.hostmem1"), std::string::npos);
}

/// Two nodes of one GPU and one NIC on PCIe switch pcie0 (64 GB/s), pcie0 under cpu0 (64 GB/s),
/// host memory 100 GB/s, joined by one 400 Gb/s switch.
Json one_gpu_node(bool gdr) {
  Json node = {{"gpu", testing::test_gpu()},
               {"gpus", 1},
               {"pcie_switches", 1},
               {"cpus", 1},
               {"nics", 1},
               {"host_memory_GBps", 100},
               {"gpudirect_rdma", gdr}};
  node["links"] = Json::array({{{"a", {"gpu0", "nic0", "cpu0"}},
                                {"b", "pcie0"},
                                {"kind", "pcie"},
                                {"bandwidth_GBps", 64},
                                {"latency_us", 1}}});
  return node;
}

TEST(HostPaths, StagedAllReduceIsLimitedByHostMemoryByHand) {
  const Json fabric = {{"kind", "single_switch"},
                       {"link_kind", "ib"},
                       {"nic_speed_Gbps", 400},
                       {"link_latency_us", 1}};
  const Cluster on = make_cluster("gdr", one_gpu_node(true), 2, fabric);
  const Cluster off = make_cluster("nogdr", one_gpu_node(false), 2, fabric);
  const CollectiveParams p = datasheet_collective_params();
  const CollectiveModel mon(on, p), moff(off, p);
  const int ranks[] = {0, 1};
  const double S = 1024.0 * 1024 * 1024;
  // Ring all_reduce of 2 ranks, c channels, Simple (protocol and bus efficiency 1): every channel
  // sends one unit flow each way. GDR on: a flow crosses gpu->pcie0->nic->switch->nic->pcie0->gpu;
  // each directed link carries c flows; usable NIC 50 x 0.92 = 46 GB/s < PCIe 64 x 0.76 = 48.64:
  // rate 46/c per flow. GDR off: on each node the pcie0->cpu0 direction carries the sent data (GPU
  // to host) and the received data (NIC to host), and cpu0->hostmem0 both writes: 2c flows on a 50
  // GB/s direction (100 / 2) x 0.76 = 38 GB/s usable: 19/c per flow (< 48.64 / 2c on PCIe, < 46/c
  // on the NIC). All-reduce moves unit_data = 2(n-1) S / (n c) = S/c per flow, so the bandwidth
  // part is S / 46e9 and S / 19e9.
  const CollResult a =
      mon.analytical(CollOp::all_reduce, ranks, Bytes(S), Algorithm::ring, Protocol::Simple);
  const CollResult b =
      moff.analytical(CollOp::all_reduce, ranks, Bytes(S), Algorithm::ring, Protocol::Simple);
  EXPECT_NEAR((a.time - a.latency).value, S / 46e9, 1e-9 * S / 46e9);
  EXPECT_NEAR((b.time - b.latency).value, S / 19e9, 1e-9 * S / 19e9);
  EXPECT_EQ(off.link(b.bottleneck_link).kind, LinkKind::memory) << b.bottleneck;
  // Latency: the staged ring adds, per net hop (2 here: steps = 2 = inter), the fill of two 512 KiB
  // copies at the unit flow's rate 19e9 / c.
  const int c = b.channels;
  const double fill = 2 * 2 * 524288.0 / (19e9 / c);
  EXPECT_NEAR((b.latency - a.latency).value, fill, 1e-12);
  // Flow fidelity runs the same staged routes: alone on the network it agrees with the analytical
  // time.
  FlowRunOptions fo;
  fo.algorithm = Algorithm::ring;
  fo.protocol = Protocol::Simple;
  const CollResult f = moff.simulate_flow(CollOp::all_reduce, ranks, Bytes(S), fo);
  EXPECT_NEAR(f.time.value, b.time.value, 1e-6 * b.time.value);
}

TEST(HostPaths, P2pLevelStagesPairsFartherThanTheLevelThroughHostMemory) {
  Json doc = topology_json("pcie-gen5-8");
  doc["node"]["p2p_level"] =
      "PXB";  // NCCL's default on Intel CPUs: no P2P through the root complex
  const Cluster c = from(doc);
  EXPECT_FALSE(c.staged(0, 1));  // PIX
  EXPECT_TRUE(c.staged(0, 2));   // NODE counts as PHB > PXB
  EXPECT_TRUE(c.staged(0, 4));   // SYS
  EXPECT_EQ(names(c, c.route(0, 2)),
            "n0.gpu0->n0.pcie0 n0.pcie0->n0.cpu0 n0.cpu0->n0.hostmem0 n0.hostmem0->n0.cpu0 "
            "n0.cpu0->n0.pcie1 "
            "n0.pcie1->n0.gpu2");
  // gpu0 -> gpu4 stages in gpu0's memory (NUMA 0) and crosses UPI to gpu4.
  EXPECT_EQ(names(c, c.route(0, 4)),
            "n0.gpu0->n0.pcie0 n0.pcie0->n0.cpu0 n0.cpu0->n0.hostmem0 n0.hostmem0->n0.cpu0 "
            "n0.cpu0->n0.cpu1 "
            "n0.cpu1->n0.pcie2 n0.pcie2->n0.gpu4");
  // PHB allows NODE (NCCL counts it as PHB) but not SYS.
  doc["node"]["p2p_level"] = "PHB";
  const Cluster phb = from(doc);
  EXPECT_FALSE(phb.staged(0, 2));
  EXPECT_TRUE(phb.staged(0, 4));
  // LOC (NCCL_P2P_DISABLE=1) stages even NVLink pairs.
  Json dgx = topology_json("dgx-h100-8");
  dgx["node"]["p2p_level"] = "LOC";
  const Cluster loc = from(dgx);
  EXPECT_TRUE(loc.staged(0, 1));
  EXPECT_EQ(loc.gpu_path_type(0, 1), PathType::nvlink);  // the path type is the direct route's
}

TEST(HostPaths, CpuNumaNodesNameTheHostMemories) {
  Json doc = topology_json("pcie-gen5-8");
  doc["node"]["cpu_numa_nodes"] = {2, 5};
  doc["node"]["cpu_affinity"] = {"0-55", "56-111"};
  doc["node"]["gpudirect_rdma"] = false;
  const Cluster c = from(doc);
  EXPECT_EQ(c.gpu_numa_node(0), 2);
  EXPECT_EQ(c.gpu_numa_node(7), 5);
  EXPECT_EQ(c.cpu_affinity()[1], "56-111");
  bool found = false;
  for (int v = 0; v < c.num_vertices(); ++v)
    found = found || c.vertex(static_cast<VertexId>(v)).name == "n0.hostmem5";
  EXPECT_TRUE(found);
}

TEST(HostPaths, BadHostKeysNameThePathAndTheExpectation) {
  Json doc = topology_json("pcie-gen5-8");
  doc["node"]["p2p_level"] = "NODE";
  EXPECT_NE(
      error_of(doc).find("$.node.p2p_level: expected one of LOC | NVL | PIX | PXB | PHB | SYS"),
      std::string::npos)
      << error_of(doc);
  doc = topology_json("pcie-gen5-8");
  doc["node"]["cpu_numa_nodes"] = {0};
  EXPECT_NE(error_of(doc).find("$.node.cpu_numa_nodes: expected an array of 2 NUMA node ids"),
            std::string::npos)
      << error_of(doc);
  doc = topology_json("pcie-gen5-8");
  doc["node"]["host_bridges"] = {"gpu0"};
  EXPECT_NE(error_of(doc).find("$.node.host_bridges[0]: expected PCIe switches"), std::string::npos)
      << error_of(doc);
  doc = topology_json("pcie-gen5-8");
  doc["node"]["gpudirect_rdma"] = "no";
  EXPECT_NE(error_of(doc).find("$.node.gpudirect_rdma"), std::string::npos) << error_of(doc);
  Json node = testing::pcie_node(2, 64);
  node["gpudirect_rdma"] = false;
  const Json d = {{"name", "x"}, {"node", node}};
  EXPECT_NE(error_of(d).find("$.node.gpudirect_rdma: staging through host memory needs a CPU"),
            std::string::npos)
      << error_of(d);
}

}  // namespace
}  // namespace scalescope
