// The large-cluster files: tiers chosen by size (SuperPOD scalable units), rail planes to 131,072 GPUs,
// route lengths derived from the fabric's construction, rail symmetry (disjoint, alike rails), the
// NVL72 NVLink domain, and oversubscribed leaves.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "cluster_test_util.hpp"

namespace scalescope {
namespace {

using testing::check_route;
using testing::must_load;
using testing::must_load_routed;
using testing::topology_file;

Cluster multiplane(int gpus) { return must_load(topology_file("h100-ndr-multiplane"), ClusterOptions{{}, gpus}); }

TEST(LargeTopologies, MultiplaneUsesTwoTiersUpTo16kGpusAndThreeAbove) {
  // A plane's leaf takes rail k of 32 nodes (radix 64, 1:1: 32 down, 32 up); 2 tiers need
  // L * (32 / S) <= 64 for a divisor S of 32: L <= 64 leaves = 2,048 nodes = 16,384 GPUs.
  EXPECT_EQ(multiplane(1024).fabric_tiers(), 2);
  EXPECT_EQ(multiplane(16384).fabric_tiers(), 2);
  EXPECT_EQ(multiplane(16392).fabric_tiers(), 3);  // 2,049 nodes: 65 leaves per plane
}

TEST(LargeTopologies, MultiplaneReaches131072GpusWithHandDerivedRouteLengths) {
  const Cluster c = multiplane(131072);
  ASSERT_EQ(c.num_gpus(), 131072);
  EXPECT_EQ(c.fabric_tiers(), 3);
  EXPECT_TRUE(c.rail_symmetric());
  // GPU 3 of node 0 to GPU 3 of: node 1 (same leaf), node 40 (same pod: pods of 32 leaves x 32
  // nodes = 1,024 nodes), node 16,383 (another pod). GPU->PCIe->NIC (2) + NIC->leaf (1), the fabric
  // (0, 2 or 4 switch-to-switch links), leaf->NIC (1) + NIC->PCIe->GPU (2).
  const int g = 8;
  for (auto [node, links] : {std::pair{1, 6}, std::pair{40, 8}, std::pair{16383, 10}}) {
    const auto r = c.route(3, node * g + 3, 5);
    EXPECT_EQ(check_route(c, 3, node * g + 3, r), "");
    EXPECT_EQ(static_cast<int>(r.size()), links) << "to node " << node;
    for (int e : r) {  // rail 3's plane only
      const VertexProps& v = c.vertex(c.link(e).dst);
      if (v.kind == VertexKind::fabric_switch) {
        EXPECT_EQ(v.rail, 3) << v.name;
      }
    }
  }
}

TEST(LargeTopologies, RailsOfASymmetricClusterAreDisjointAndTakeTheSameChoices) {
  // Rail symmetry (cluster.hpp): GPU t's routes between two nodes use rail t's links only and
  // the same spine as GPU 0's route between the same nodes with the same key.
  for (const char* name : {"h100-ndr-multiplane", "h200-ndr-multiplane", "h100-ndr-multiplane-2to1", "h100-rail-ndr"}) {
    SCOPED_TRACE(name);
    const Cluster c = must_load(topology_file(name), ClusterOptions{{}, 1024});
    ASSERT_TRUE(c.rail_symmetric());
    const int g = c.gpus_per_node();
    for (std::uint64_t key = 0; key < 4; ++key) {
      const auto r0 = c.route(0, 100 * g, key);
      std::set<int> rail0(r0.begin(), r0.end());
      auto spine_of = [&](const std::vector<int>& r) {
        for (int e : r)
          if (c.vertex(c.link(e).dst).tier == 2) return c.vertex(c.link(e).dst).local;
        return -1;
      };
      for (int t = 1; t < g; ++t) {
        const auto rt = c.route(t, 100 * g + t, key);
        EXPECT_EQ(rt.size(), r0.size());
        EXPECT_EQ(spine_of(rt), spine_of(r0));
        for (int e : rt) EXPECT_EQ(rail0.count(e), 0u) << c.link_name(e);
      }
    }
  }
}

TEST(LargeTopologies, RailSymmetricFabricsAreThoseWhoseRailsShareNoLink) {
  // Rail planes, and one plane of leaf + spine (each leaf-spine link touches one rail's leaf), whatever the
  // switches' routing; not a third tier of one plane (its aggregation-core links carry every rail), not
  // superpod-a100 (a fat tree: hashed NICs, and core links of every rail), not GB200 NVL72 (one NIC per tray GPU
  // on leaves that are not rail-aligned), and not with nic_selection hashed.
  EXPECT_TRUE(must_load(topology_file("h100-ndr-multiplane")).rail_symmetric());
  EXPECT_TRUE(must_load(topology_file("h100-rail-ndr")).rail_symmetric());
  EXPECT_TRUE(must_load_routed(topology_file("h100-rail-ndr"), "ecmp").rail_symmetric());
  const Cluster hashed = testing::must_load_with_fabric(topology_file("h100-rail-ndr"), "nic_selection", "hashed");
  EXPECT_FALSE(hashed.own_rail_nics());
  EXPECT_FALSE(hashed.rail_symmetric());
  // h200-spectrum-x: leaves of 64 nodes and 64 up-ports (radix 128): 2 tiers up to 128 leaves = 1,024 nodes.
  const Cluster two = must_load(topology_file("h200-spectrum-x"), ClusterOptions{1024, {}});
  ASSERT_EQ(two.fabric_tiers(), 2);
  EXPECT_TRUE(two.rail_symmetric());
  const Cluster three = must_load(topology_file("h200-spectrum-x"), ClusterOptions{1025, {}});
  ASSERT_EQ(three.fabric_tiers(), 3);
  EXPECT_TRUE(three.own_rail_nics());
  EXPECT_FALSE(three.rail_symmetric());
  EXPECT_FALSE(must_load(topology_file("superpod-a100")).own_rail_nics());
  EXPECT_FALSE(must_load(topology_file("superpod-a100")).rail_symmetric());
  EXPECT_FALSE(must_load(topology_file("gb200-nvl72")).rail_symmetric());
}

TEST(LargeTopologies, Nvl72RackIsOneNvlinkDomainOf72Gpus) {
  // 72 GPUs per node; GPU 0 to GPU 71 (different trays) through the NVLink switch: 2 links of
  // 18 x 50 GB/s = 900 GB/s per direction (1.8 TB/s bidirectional).
  const Cluster c = must_load(topology_file("gb200-nvl72"));
  EXPECT_EQ(c.gpus_per_node(), 72);
  const auto r = c.route(0, 71);
  ASSERT_EQ(r.size(), 2u);
  for (int e : r) EXPECT_EQ(c.link(e).kind, LinkKind::nvlink);
  EXPECT_DOUBLE_EQ(c.path_bandwidth(r).value, 900e9);
  // Between racks: GPU -> C2C -> Grace -> PCIe -> NIC, the fabric, and back; the NIC at 50 GB/s.
  const auto x = c.route(0, 72);
  EXPECT_EQ(check_route(c, 0, 72, x), "");
  EXPECT_DOUBLE_EQ(c.path_bandwidth(x).value, 50e9);
}

TEST(LargeTopologies, B200NodeHasNvlink5At900GBpsPerDirection) {
  const Cluster c = must_load(topology_file("dgx-b200-ndr"), ClusterOptions{1, {}});
  EXPECT_DOUBLE_EQ(c.path_bandwidth(c.route(0, 5)).value, 18 * 50e9);
  EXPECT_EQ(c.gpu_spec().peak.bf16->value, 2250e12);
}

TEST(LargeTopologies, OversubscribedLeavesHalveTheBisection) {
  // h100-ndr-multiplane-2to1: a leaf has 42 NIC ports and 21 up. 1,344 GPUs = 168 nodes = 4
  // leaves per plane; the bisection between ranks [0, 672) and [672, 1344) (nodes 0-83 | 84-167)
  // is limited by the uplinks of the leaves on each side: leaves 0, 1 hold nodes 0-83 entirely
  // (42 each), so each plane carries 2 leaves x 21 ports x 50 GB/s = 2.1 TB/s, 8 planes 16.8 TB/s,
  // against 84 nodes x 8 NICs x 50 GB/s = 33.6 TB/s for the non-blocking file.
  const Cluster c = must_load(topology_file("h100-ndr-multiplane-2to1"), ClusterOptions{{}, 1344});
  EXPECT_NEAR(c.bisection_bandwidth().value, 8 * 2 * 21 * 50e9, 1e6);
  const Cluster full = multiplane(1344);
  EXPECT_NEAR(full.bisection_bandwidth().value, 84 * 8 * 50e9, 1e6);
}

}  // namespace
}  // namespace scalescope
