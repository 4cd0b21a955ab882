// Every file in topologies/ loads, has sources, has the expected GPU count, routes every GPU pair,
// uses NVLink inside a node where the node has it, and gives hand-derived bandwidths, latencies
// and bisection bandwidths.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "cluster_test_util.hpp"

namespace scalescope {
namespace {

using testing::check_route;
using testing::must_load;
using testing::topology_file;

// Expected GPU counts at each file's default size, from the node counts stated in the files'
// descriptions: single boxes have 4 or 8 GPUs; superpod-a100 is 140 DGX A100 x 8 = 1,120;
// h100-rail-ndr is 128 DGX H100 x 8 = 1,024.
// The large-cluster files (scripts/make_large_topologies.py) default to 128 nodes x 8 = 1,024 GPUs,
// except h200-spectrum-x* (256 x 8 = 2,048) and gb200-nvl72 (8 racks x 72 = 576).
const std::map<std::string, int> kExpectedGpus = {
    {"dgx-a100-8", 8},          {"dgx-h100-8", 8},
    {"hgx-h200-4", 4},          {"hgx-h200-8", 8},
    {"pcie-gen5-8", 8},         {"superpod-a100", 1120},
    {"h100-rail-ndr", 1024},    {"h100-ndr-multiplane", 1024},
    {"h200-ndr-multiplane", 1024}, {"h100-ndr-multiplane-2to1", 1024},
    {"dgx-b200-ndr", 1024},     {"gb200-nvl72", 576},
    {"h200-spectrum-x", 2048},  {"h200-spectrum-x-2to1", 2048},
    {"h800-ndr-multiplane", 2048},
};

std::vector<std::filesystem::path> topology_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(SCALESCOPE_SOURCE_DIR) + "/topologies"))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// Ranks whose pairs are checked: all of them for small clusters; for large ones all GPUs of the
/// first two nodes, of the last node, and GPU 0 of every node.
std::vector<int> sample_ranks(const Cluster& c) {
  std::set<int> r;
  if (c.num_gpus() <= 64) {
    for (int i = 0; i < c.num_gpus(); ++i) r.insert(i);
  } else {
    const int g = c.gpus_per_node();
    for (int i = 0; i < 2 * g; ++i) r.insert(i);
    for (int i = c.num_gpus() - g; i < c.num_gpus(); ++i) r.insert(i);
    for (int n = 0; n < c.num_nodes(); ++n) r.insert(n * g);
  }
  return {r.begin(), r.end()};
}

TEST(Topologies, EveryFileLoadsWithDescriptionSourcesAndExpectedGpuCount) {
  const auto files = topology_files();
  ASSERT_EQ(files.size(), kExpectedGpus.size())
      << "a file was added or removed: update kExpectedGpus";
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    auto c = load_cluster(f);
    ASSERT_TRUE(c.has_value()) << c.error().str();
    EXPECT_EQ(c->name(), f.stem().string());
    EXPECT_FALSE(c->description().empty());
    EXPECT_FALSE(c->sources().empty());
    ASSERT_TRUE(kExpectedGpus.count(c->name()));
    EXPECT_EQ(c->num_gpus(), kExpectedGpus.at(c->name()));
    EXPECT_TRUE(c->gpu_spec().peak.bf16.has_value());
  }
}

TEST(Topologies, EverySampledGpuPairHasAValidRoute) {
  for (const auto& f : topology_files()) {
    SCOPED_TRACE(f.string());
    const Cluster c = must_load(f.string());
    const auto ranks = sample_ranks(c);
    for (int a : ranks)
      for (int b : ranks) {
        const std::string problem = check_route(c, a, b, c.route(a, b));
        ASSERT_EQ(problem, "") << "rank " << a << " -> rank " << b;
      }
  }
}

TEST(Topologies, IntraNodeRoutesUseNvlinkWhenTheNodeHasIt) {
  for (const auto& f : topology_files()) {
    SCOPED_TRACE(f.string());
    const Cluster c = must_load(f.string(), ClusterOptions{1, std::nullopt});
    bool has_nvlink = false;
    for (int i = 0; i < c.num_links(); ++i)
      has_nvlink = has_nvlink || c.link(i).kind == LinkKind::nvlink;
    for (int a = 0; a < c.gpus_per_node(); ++a)
      for (int b = 0; b < c.gpus_per_node(); ++b) {
        if (a == b) continue;
        const auto r = c.route(a, b);
        for (int e : r) {
          EXPECT_EQ(c.link(e).kind == LinkKind::nvlink, has_nvlink) << c.link_name(e);
        }
        // With an NVSwitch the route is GPU -> NVSwitch -> GPU: exactly 2 links.
        if (has_nvlink) {
          EXPECT_EQ(r.size(), 2u);
        }
      }
  }
}

TEST(Topologies, NvlinkPairBandwidthIsLinkCountTimesPerLinkRate) {
  // DGX H100 / HGX H200: 18 NVLink4 links x 26.562 GB/s = 478.116 GB/s per direction;
  // DGX A100: 12 NVLink3 links x 25 GB/s = 300 GB/s. Latency: 2 hops x 0.1 us.
  const std::vector<std::pair<std::string, double>> cases = {{"dgx-h100-8", 478.116},
                                                             {"hgx-h200-8", 478.116},
                                                             {"hgx-h200-4", 478.116},
                                                             {"dgx-a100-8", 300.0}};
  for (const auto& [name, gbps] : cases) {
    const Cluster c = must_load(topology_file(name));
    const auto r = c.route(0, 1);
    EXPECT_NEAR(to_GBps(c.path_bandwidth(r)), gbps, 1e-9) << name;
    EXPECT_NEAR(to_us(c.path_latency(r)), 0.2, 1e-12) << name;
  }
}

TEST(Topologies, PcieServerRoutesFollowSwitchSocketAndUpi) {
  const Cluster c = must_load(topology_file("pcie-gen5-8"));
  // gpu0 and gpu1 share pcie0: gpu0->pcie0->gpu1, 2 links of 63 GB/s, 2 x 0.2 us.
  auto r = c.route(0, 1);
  EXPECT_EQ(r.size(), 2u);
  EXPECT_NEAR(to_GBps(c.path_bandwidth(r)), 63.0, 1e-9);
  EXPECT_NEAR(to_us(c.path_latency(r)), 0.4, 1e-12);
  // gpu0 -> gpu2 (pcie1, same socket): gpu0->pcie0->cpu0->pcie1->gpu2, 4 links, 0.8 us.
  r = c.route(0, 2);
  EXPECT_EQ(r.size(), 4u);
  EXPECT_NEAR(to_us(c.path_latency(r)), 0.8, 1e-12);
  // gpu0 -> gpu4 (other socket): ...->cpu0->cpu1->..., 5 links: 4 PCIe x 0.2 + UPI 0.15 = 0.95 us;
  // bottleneck min(63 PCIe, 4 x 32 = 128 UPI) = 63 GB/s.
  r = c.route(0, 4);
  ASSERT_EQ(r.size(), 5u);
  EXPECT_EQ(c.link(r[2]).kind, LinkKind::upi);
  EXPECT_NEAR(to_us(c.path_latency(r)), 0.95, 1e-12);
  EXPECT_NEAR(to_GBps(c.path_bandwidth(r)), 63.0, 1e-9);
}

TEST(Topologies, RailOptimizedInterNodeRoutesHaveHandDerivedLengthAndBandwidth) {
  const Cluster c = must_load(topology_file("h100-rail-ndr"));
  // Leaves take 32 nodes per rail (64-port switch, 32 down). Node 0 -> node 1, same local GPU:
  // gpu->pcie->nic->leaf->nic->pcie->gpu = 6 links; bottleneck 400 Gb/s = 50 GB/s (< 63 PCIe).
  auto r = c.route(0, 8);
  EXPECT_EQ(r.size(), 6u);
  EXPECT_NEAR(to_GBps(c.path_bandwidth(r)), 50.0, 1e-9);
  // Node 0 -> node 32 (next block of 32 nodes): via a spine, 8 links:
  // 4 PCIe x 0.2 us + 4 fabric x 0.15 us = 1.4 us.
  r = c.route(0, 32 * 8);
  EXPECT_EQ(r.size(), 8u);
  EXPECT_NEAR(to_us(c.path_latency(r)), 1.4, 1e-12);
  EXPECT_NEAR(to_GBps(c.path_bandwidth(r)), 50.0, 1e-9);
}

TEST(Topologies, SuperpodRoutesClimbToLeafAggregationAndCoreTiers) {
  const Cluster c = must_load(topology_file("superpod-a100"));
  // 20 nodes per rail leaf; pods of 20 leaves = 2.5 blocks of 8 rail leaves.
  // node 0 -> node 1: same leaf, 6 links; bottleneck HDR 200 Gb/s = 25 GB/s (< 31.5 PCIe Gen4).
  auto r = c.route(0, 8);
  EXPECT_EQ(r.size(), 6u);
  EXPECT_NEAR(to_GBps(c.path_bandwidth(r)), 25.0, 1e-9);
  // node 0 (leaf 0, pod 0) -> node 20 (leaf 8, pod 0): up to an aggregation switch, 8 links.
  EXPECT_EQ(c.route(0, 20 * 8).size(), 8u);
  // node 0 -> node 139 (block 6, leaf 48, pod 2): through a core switch, 10 links.
  r = c.route(0, 139 * 8);
  EXPECT_EQ(r.size(), 10u);
  int top_tier = 0;
  for (int e : r) top_tier = std::max(top_tier, c.vertex(c.link(e).dst).tier);
  EXPECT_EQ(top_tier, 3);
}

TEST(Topologies, SingleNodeBisectionIsNvswitchPlusHostPath) {
  // DGX H100, GPUs 0-3 vs 4-7. NVSwitch: 4 GPUs x 478.116 GB/s = 1912.464 GB/s. Host path:
  // pcie0,pcie1 -> cpu0 is 2 x 63 = 126 GB/s (the UPI is 128): +126. A single node has no fabric.
  const Cluster c = must_load(topology_file("dgx-h100-8"));
  EXPECT_NEAR(to_GBps(c.bisection_bandwidth()), 1912.464 + 126.0, 1e-6);
}

TEST(Topologies, RailOptimizedBisectionIsHalfTheNics) {
  // 128 nodes; nodes 0-63 (blocks 0-1) vs 64-127. Non-blocking leaves: the cut is the 512 NICs of
  // the first half (equal to the 16 leaves' 32 uplinks each) at 50 GB/s = 25,600 GB/s.
  const Cluster c = must_load(topology_file("h100-rail-ndr"));
  EXPECT_NEAR(to_GBps(c.bisection_bandwidth()), 25600.0, 1e-6);
}

TEST(Topologies, ReusedRouteMemoGivesEachKeysRouteAndNamesItsNicPair) {
  // nic_selection hashed: flows hash over equally near NICs instead of leaving through the GPU's own rail's.
  const Cluster c = testing::must_load_with_fabric(topology_file("h100-rail-ndr"), "nic_selection", "hashed");
  ASSERT_FALSE(c.own_rail_nics());
  // GPU 0 shares its PCIe switch with NICs 0 and 1 (node file). Node 0 -> node 1 (one block of 32 nodes): the
  // rail-0 and rail-1 pairs each meet on their rail's leaf (6 links); a cross-rail pair climbs to a spine, so 2
  // pairs tie. Node 0 -> node 32 (the next block): every one of the 2 x 2 pairs goes via a spine (8 links): 4 tie.
  for (const auto& [dst, ties] : {std::pair{8, 2u}, std::pair{32 * 8, 4u}}) {
    Cluster::RouteMemo memo;
    std::set<int> taken;
    for (std::uint64_t key = 0; key < 64; ++key) {
      bool keyed = false, keyed_fresh = false;
      const std::vector<int> r = c.route(0, dst, key, &keyed, memo);
      EXPECT_EQ(r, c.route(0, dst, key, &keyed_fresh)) << "dst " << dst << " key " << key;
      EXPECT_TRUE(keyed);  // the NIC pair went by the key
      EXPECT_EQ(keyed, keyed_fresh);
      EXPECT_EQ(memo.tie_pairs(), ties);
      EXPECT_TRUE(memo.only_pair_keyed);  // one GPU-NIC path per NIC, destination-routed fabric
      ASSERT_GE(memo.tie_index, 0);
      taken.insert(memo.tie_index);
    }
    EXPECT_EQ(taken.size(), ties) << "64 keys take every tied pair";
  }
  // Inside a node no NIC pair is chosen.
  Cluster::RouteMemo memo;
  bool keyed = false;
  EXPECT_FALSE(c.route(0, 1, 0, &keyed, memo).empty());
  EXPECT_EQ(memo.tie_index, -1);
}

TEST(Topologies, GpusOptionRoundsUpToWholeNodes) {
  // 100 GPUs of 8 per node: ceil(100 / 8) = 13 nodes = 104 GPUs.
  const Cluster c = must_load(topology_file("dgx-h100-8"), ClusterOptions{std::nullopt, 100});
  EXPECT_EQ(c.num_nodes(), 13);
  EXPECT_EQ(c.num_gpus(), 104);
  EXPECT_EQ(check_route(c, 0, 103, c.route(0, 103)), "");
}

}  // namespace
}  // namespace scalescope
