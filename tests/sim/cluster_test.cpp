// Cluster graph API on small hand-made clusters: vertex and link layout, ranks, routes with
// hand-derived lengths / bandwidths / latencies, deterministic ECMP and its spread, fat-tree
// bisection bandwidths (full and oversubscribed), name lookup, and thread-safe routing.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "cluster_test_util.hpp"

namespace scalescope {
namespace {

using testing::check_route;
using testing::cluster_data;
using testing::must_load;
using testing::must_load_routed;

Json read(const std::string& path) { return std::move(read_json_file(path)).take_or_throw(); }

TEST(Cluster, TinyFatTreeHasTheHandCountedVerticesAndLinks) {
  // 16 nodes x (gpu, pcie switch, nic) = 48 vertices; radix 8 at 1:1 gives 4 down / 4 up ports, so
  // 16 NICs need 4 leaves; each spine takes 4 leaves x (4 / S) ports <= 8 -> S = 2 spines with 2
  // ports to every leaf. 48 + 4 + 2 = 54 vertices.
  // Physical links: 16 x 2 in the nodes + 16 NIC-leaf + 4 x 2 leaf-spine = 56 -> 112 directed.
  const Cluster c = must_load(cluster_data("tiny-fat-tree.json"));
  EXPECT_EQ(c.num_nodes(), 16);
  EXPECT_EQ(c.gpus_per_node(), 1);
  EXPECT_EQ(c.num_vertices(), 54);
  EXPECT_EQ(c.num_links(), 112);
  EXPECT_EQ(c.fabric_kind(), FabricKind::fat_tree);
  int leaves = 0, spines = 0;
  for (int v = 0; v < c.num_vertices(); ++v) {
    const auto& p = c.vertex(static_cast<VertexId>(v));
    if (p.kind == VertexKind::fabric_switch) (p.tier == 1 ? leaves : spines)++;
  }
  EXPECT_EQ(leaves, 4);
  EXPECT_EQ(spines, 2);
}

TEST(Cluster, LinksComeInFullDuplexPairsWithDenseIndices) {
  const Cluster c = must_load(cluster_data("two-gpu-base.json"));
  const auto caps = c.link_capacities();
  ASSERT_EQ(caps.size(), static_cast<std::size_t>(c.num_links()));
  for (int i = 0; i < c.num_links(); ++i) {
    const Link& l = c.link(i);
    EXPECT_EQ(l.index, i);
    const Link& r = c.link(l.reverse);
    EXPECT_EQ(r.reverse, i);
    EXPECT_EQ(r.src, l.dst);
    EXPECT_EQ(r.dst, l.src);
    EXPECT_EQ(r.bandwidth, l.bandwidth);
    EXPECT_EQ(caps[static_cast<std::size_t>(i)], l.bandwidth);
  }
  // Every graph edge carries its own index.
  for (auto [it, end] = boost::edges(c.graph()); it != end; ++it) {
    const EdgeProps& e = c.graph()[*it];
    EXPECT_EQ(boost::source(*it, c.graph()), c.link(e.index).src);
  }
}

TEST(Cluster, RanksMapToNamedGpuVertices) {
  const Cluster c = must_load(cluster_data("two-gpu-base.json"), ClusterOptions{4, std::nullopt});
  // rank = node * gpus_per_node + local: rank 7 = node 3, gpu 1.
  EXPECT_EQ(c.num_gpus(), 8);
  EXPECT_EQ(c.vertex(c.gpu_vertex(7)).name, "n3.gpu1");
  EXPECT_EQ(c.vertex(c.gpu_vertex(7)).node, 3);
  EXPECT_EQ(c.vertex(c.gpu_vertex(7)).local, 1);
  EXPECT_EQ(c.node_of(7), 3);
  EXPECT_TRUE(c.same_node(6, 7));
  EXPECT_FALSE(c.same_node(5, 6));
  EXPECT_EQ(c.vertex(c.nic_vertex(2, 0)).name, "n2.nic0");
  EXPECT_EQ(c.vertex(c.nic_vertex(2, 0)).rail, 0);
  EXPECT_EQ(c.gpu_spec().model, "test");
  EXPECT_DOUBLE_EQ(c.gpu_spec().memory.value, 16.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(c.gpu_spec().peak.get("bf16")->value, 100e12);
  EXPECT_FALSE(c.gpu_spec().peak.get("fp8").has_value());
}

TEST(Cluster, IntraNodeRoutePrefersNvlinkOverSharedPcieSwitch) {
  // gpu0 and gpu1 share both an NVSwitch (2 x 25 GB/s, 0.1 us) and a PCIe switch (32 GB/s, 0.2 us):
  // both paths are 2 hops; NVLink wins by rule, so bandwidth 50 GB/s and latency 0.2 us.
  const Cluster c = must_load(cluster_data("two-gpu-base.json"));
  const auto r = c.route(0, 1);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(c.link(r[0]).kind, LinkKind::nvlink);
  EXPECT_EQ(c.link_name(r[0]), "n0.gpu0->n0.nvswitch0");
  EXPECT_DOUBLE_EQ(to_GBps(c.path_bandwidth(r)), 50.0);
  EXPECT_NEAR(to_us(c.path_latency(r)), 0.2, 1e-12);
  EXPECT_TRUE(c.route(1, 1).empty());
  EXPECT_TRUE(std::isinf(c.path_bandwidth({}).value));
  EXPECT_EQ(c.path_latency({}).value, 0.0);
}

TEST(Cluster, InterNodeRouteOnSingleSwitchGoesThroughTheNic) {
  // n0.gpu1 -> pcie0 -> nic0 -> switch0 -> n1.nic0 -> pcie0 -> n1.gpu0: 6 links.
  // Bandwidth min(32 PCIe, 100 Gb/s = 12.5 GB/s) = 12.5; latency 4 x 0.2 + 2 x 0.5 = 1.8 us.
  const Cluster c = must_load(cluster_data("two-gpu-base.json"));
  const auto r = c.route(1, 2);
  EXPECT_EQ(check_route(c, 1, 2, r), "");
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(c.link(r[2]).kind, LinkKind::roce);
  EXPECT_DOUBLE_EQ(to_GBps(c.path_bandwidth(r)), 12.5);
  EXPECT_NEAR(to_us(c.path_latency(r)), 1.8, 1e-12);
}

TEST(Cluster, FatTreeRoutesHaveHandDerivedHopsAndLatency) {
  const Cluster c = must_load(cluster_data("tiny-fat-tree.json"));
  // Same leaf (nodes 0-3 on leaf 0): gpu->pcie->nic->leaf->nic->pcie->gpu: 6 links,
  // 4 x 0.5 us PCIe + 2 x 1 us fabric = 4 us.
  auto r = c.route(0, 3);
  EXPECT_EQ(r.size(), 6u);
  EXPECT_NEAR(to_us(c.path_latency(r)), 4.0, 1e-12);
  // Different leaves (node 0 on leaf 0, node 15 on leaf 3): + leaf->spine->leaf: 8 links, 6 us;
  // bottleneck the 100 Gb/s NIC port = 12.5 GB/s (leaf-spine bundles are 2 x 12.5 = 25).
  r = c.route(0, 15);
  EXPECT_EQ(r.size(), 8u);
  EXPECT_NEAR(to_us(c.path_latency(r)), 6.0, 1e-12);
  EXPECT_DOUBLE_EQ(to_GBps(c.path_bandwidth(r)), 12.5);
  EXPECT_EQ(c.link(r[3]).lanes, 2);
  EXPECT_DOUBLE_EQ(to_GBps(c.link(r[3]).bandwidth), 25.0);
}

/// Names of the fabric switches of `tier` that the routes of flows 0..keys-1 from a to b visit.
std::set<std::string> switches_used(const Cluster& c, int a, int b, int keys, int tier) {
  std::set<std::string> used;
  for (int k = 0; k < keys; ++k)
    for (int e : c.route(a, b, static_cast<std::uint64_t>(k))) {
      const auto& v = c.vertex(c.link(e).dst);
      if (v.kind == VertexKind::fabric_switch && v.tier == tier) used.insert(v.name);
    }
  return used;
}

TEST(Cluster, EcmpIsDeterministicAcrossCallsAndLoads) {
  const Cluster c1 = must_load(cluster_data("tiny-fat-tree.json"));
  const Cluster c2 = must_load(cluster_data("tiny-fat-tree.json"));
  for (int k = 0; k < 64; ++k) {
    const auto key = static_cast<std::uint64_t>(k);
    EXPECT_EQ(c1.route(0, 15, key), c1.route(0, 15, key));
    EXPECT_EQ(c1.route(0, 15, key), c2.route(0, 15, key));
  }
}

TEST(Cluster, EcmpSpreadsFlowsOverEverySpine) {
  // tiny-fat-tree: 2 spines; k=4 fat tree: (k/2)^2 = 4 cores, each an equal-cost path between pods.
  // 64 flow keys hashed uniformly miss a given one of 4 choices with probability (3/4)^64 ~ 1e-8.
  const Cluster tiny = must_load_routed(cluster_data("tiny-fat-tree.json"), "ecmp");
  EXPECT_EQ(tiny.fabric_routing(), FabricRouting::ecmp);
  EXPECT_EQ(switches_used(tiny, 0, 15, 64, 2).size(), 2u);
  const Cluster k4 = must_load_routed(cluster_data("k4-fat-tree.json"), "ecmp");
  EXPECT_EQ(switches_used(k4, 0, 15, 64, 3).size(), 4u);
  // Different rank pairs with the default flow key also spread: pairs (i, 15 - i) for i < 8
  // all cross the spine layer (leaves 0,1 -> leaves 3,2).
  std::set<std::string> by_pair;
  for (int i = 0; i < 8; ++i)
    for (int e : tiny.route(i, 15 - i)) {
      const auto& v = tiny.vertex(tiny.link(e).dst);
      if (v.kind == VertexKind::fabric_switch && v.tier == 2) by_pair.insert(v.name);
    }
  EXPECT_EQ(by_pair.size(), 2u);
}

/// The largest number of routes of the shift permutation i -> (i + shift) mod n (one GPU per node) on one link.
int most_routes_on_a_link(const Cluster& c, int shift) {
  const int n = c.num_gpus();
  std::vector<int> uses(static_cast<std::size_t>(c.num_links()), 0);
  int most = 0;
  for (int i = 0; i < n; ++i)
    for (int e : c.route(i, (i + shift) % n)) most = std::max(most, ++uses[static_cast<std::size_t>(e)]);
  return most;
}

TEST(Cluster, DestinationRoutingTakesOnePathPerDestinationAndNoSharedLinkInShifts) {
  // InfiniBand's default (link_kind ib): a switch forwards by destination (D-mod-k). k=4 fat tree, host d: the
  // leaf sends it up to aggregation d mod 2, the aggregation to core (d / 2) mod 2 of its group. Every flow key
  // from host 0 to host 15 then takes one core (ECMP above: all 4), and a shift permutation i -> i + s (mod 16)
  // never puts two routes on one link: two hosts of a leaf send to destinations of different parity (different
  // aggregations), two destinations of equal parity reached through one aggregation differ in (d / 2) mod 2
  // (different cores), and a core reaches one destination per pod. ECMP hashing puts two routes of some shift on
  // one link.
  const Cluster k4 = must_load(cluster_data("k4-fat-tree.json"));
  EXPECT_EQ(k4.fabric_routing(), FabricRouting::destination);
  EXPECT_EQ(switches_used(k4, 0, 15, 64, 3).size(), 1u);
  const Cluster hashed = must_load_routed(cluster_data("k4-fat-tree.json"), "ecmp");
  int hashed_worst = 0;
  for (int s = 1; s < 16; ++s) {
    SCOPED_TRACE("shift " + std::to_string(s));
    EXPECT_EQ(most_routes_on_a_link(k4, s), 1);
    hashed_worst = std::max(hashed_worst, most_routes_on_a_link(hashed, s));
  }
  EXPECT_GE(hashed_worst, 2);
}

TEST(Cluster, K4FatTreeMatchesAlFaresCounts) {
  // k = 4: k^3/4 = 16 hosts, k^2/2 = 8 edge, 8 aggregation, (k/2)^2 = 4 core switches.
  // Hosts in different pods: host->edge->agg->core->agg->edge->host = 6 fabric links + 4 PCIe.
  const Cluster c = must_load(cluster_data("k4-fat-tree.json"));
  std::map<int, int> per_tier;
  for (int v = 0; v < c.num_vertices(); ++v)
    if (c.vertex(static_cast<VertexId>(v)).kind == VertexKind::fabric_switch)
      per_tier[c.vertex(static_cast<VertexId>(v)).tier]++;
  EXPECT_EQ(per_tier[1], 8);
  EXPECT_EQ(per_tier[2], 8);
  EXPECT_EQ(per_tier[3], 4);
  EXPECT_EQ(c.route(0, 15).size(), 10u);
  // Same pod, different edge switch (hosts 0 and 2): host->edge->agg->edge->host: 4 + 4 = 8.
  EXPECT_EQ(c.route(0, 2).size(), 8u);
}

TEST(Cluster, FatTreeBisectionIsHalfTheHostsAtFullRate) {
  // tiny-fat-tree: ranks 0-7 on leaves 0,1. Cut = min(8 NICs x 12.5, 2 leaves x 2 spines x 25,
  // 8 x 50 PCIe) = 100 GB/s. k=4 fat tree is non-blocking: 8 hosts x 12.5 = 100 GB/s.
  EXPECT_DOUBLE_EQ(to_GBps(must_load(cluster_data("tiny-fat-tree.json")).bisection_bandwidth()),
                   100.0);
  EXPECT_DOUBLE_EQ(to_GBps(must_load(cluster_data("k4-fat-tree.json")).bisection_bandwidth()),
                   100.0);
}

TEST(Cluster, OversubscribedFatTreeBisectionIsFullDividedByRatio) {
  // Radix 6 at 2:1 -> 4 down, 2 up per leaf; 16 NICs -> 4 leaves, spines S = 2 with 1 port each.
  // Cut: leaves 0,1 x 2 uplinks x 12.5 GB/s = 50 GB/s = (full 100 GB/s) / 2.
  Json doc = read(cluster_data("tiny-fat-tree.json"));
  doc["fabric"]["radix"] = 6;
  doc["fabric"]["oversubscription"] = Json::array({2});
  auto c = cluster_from_json(doc, "oversubscribed", {});
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_DOUBLE_EQ(to_GBps(c->bisection_bandwidth()), 100.0 / 2);
  EXPECT_EQ(check_route(*c, 0, 15, c->route(0, 15)), "");
}

TEST(Cluster, BuiltinNamesResolveAndUnknownNamesListThem) {
  const auto names = available_cluster_names();
  for (const char* n : {"hgx-h200-4", "hgx-h200-8", "dgx-h100-8", "dgx-a100-8", "superpod-a100",
                        "h100-rail-ndr", "pcie-gen5-8"})
    EXPECT_TRUE(std::find(names.begin(), names.end(), n) != names.end()) << n;
  auto c = load_cluster_by_name_or_path("hgx-h200-4");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_EQ(c->num_gpus(), 4);
  auto bad = load_cluster_by_name_or_path("hgx-h900-4");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().exit_code(), 2);
  EXPECT_NE(bad.error().str().find("unknown cluster 'hgx-h900-4' (available: "), std::string::npos);
  EXPECT_NE(bad.error().str().find("hgx-h200-4"), std::string::npos);
  // A path works too.
  EXPECT_TRUE(load_cluster_by_name_or_path(cluster_data("tiny-fat-tree.json")).has_value());
}

TEST(Cluster, RoutesFromManyThreadsEqualSingleThreadedRoutes) {
  const Cluster c = must_load(cluster_data("k4-fat-tree.json"));
  std::vector<std::vector<int>> expected;
  for (int a = 0; a < 16; ++a)
    for (int b = 0; b < 16; ++b) expected.push_back(c.route(a, b, 7));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep)
        for (int a = 0; a < 16; ++a)
          for (int b = 0; b < 16; ++b)
            if (c.route(a, b, 7) != expected[static_cast<std::size_t>(a * 16 + b)])
              ++mismatches[static_cast<std::size_t>(t)];
    });
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace scalescope
