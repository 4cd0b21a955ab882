// Tests of the flow-fidelity collectives: agreement with the analytical model when nothing
// contends, and slowdowns under contention that a hand calculation predicts.
#include <cmath>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "collective_test_clusters.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope {
namespace {

using testing::make_cluster;
using testing::nvswitch_node;

constexpr double kGiB = 1073741824.0;

std::vector<int> iota_ranks(int n, int first = 0) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), first);
  return r;
}

Json rail_fabric() {
  return {{"kind", "rail_optimized"}, {"link_kind", "ib"}, {"nic_speed_Gbps", 200}, {"link_latency_us", 1.0},
          {"radix", 8}};
}

void expect_flow_matches_analytical(const CollectiveModel& m, const std::vector<int>& ranks, const char* what) {
  for (CollOp op : kAllCollOps) {
    for (double s = 1024; s <= kGiB; s *= 16) {
      const CollResult a = m.analytical(op, ranks, Bytes(s));
      const CollResult f = m.simulate_flow(op, ranks, Bytes(s));
      EXPECT_EQ(a.algorithm, f.algorithm);
      EXPECT_EQ(a.protocol, f.protocol);
      EXPECT_NEAR(f.time.value / a.time.value, 1.0, 0.02)
          << what << " " << to_string(op) << " " << s << " B: analytical " << a.time.value << " s, flow "
          << f.time.value << " s";
    }
  }
}

TEST(CollectiveFlow, AgreesWithAnalyticalWithin2PercentOnSeveralClusters) {
  // Where nothing else runs, every phase ends when its slowest unit flow does, at the max-min
  // share the analytical model uses, so both must give the same time (to ns rounding).
  const CollectiveParams p = datasheet_collective_params();
  {
    const Cluster c = make_cluster("nvs8", nvswitch_node(8, 450.0));
    const CollectiveModel m(c, p);
    expect_flow_matches_analytical(m, iota_ranks(8), "nvswitch 8");
    expect_flow_matches_analytical(m, {1, 4, 6}, "nvswitch subset");
  }
  {
    const Cluster c = make_cluster("pcie4", testing::pcie_node(4, 32.0));
    const CollectiveModel m(c, p);
    expect_flow_matches_analytical(m, iota_ranks(4), "pcie 4");
  }
  {
    const Cluster c = make_cluster("rail4x4", nvswitch_node(4, 200.0, 4, 64.0), 4, rail_fabric());
    const CollectiveModel m(c, p);
    expect_flow_matches_analytical(m, iota_ranks(16), "rail 4x4");  // 30 ring steps in 16 phases
    expect_flow_matches_analytical(m, {0, 4, 8, 12}, "one GPU per node");
  }
}

TEST(CollectiveFlow, AgreesWithAnalyticalOnShippedTopologies) {
  struct Case {
    const char* name;
    int nodes;
  };
  for (const Case& k : {Case{"dgx-h100-8", 1}, Case{"dgx-a100-8", 1}, Case{"pcie-gen5-8", 1},
                        Case{"h100-rail-ndr", 2}, Case{"superpod-a100", 3}}) {
    ClusterOptions o;
    o.nodes = k.nodes;
    auto c = load_cluster_by_name_or_path(k.name, o);
    ASSERT_TRUE(c.has_value()) << c.error().str();
    const CollectiveModel m(*c, datasheet_collective_params());
    expect_flow_matches_analytical(m, iota_ranks(c->num_gpus()), k.name);
  }
}

TEST(CollectiveFlow, ForcedAlgorithmsAgreeToo) {
  const Cluster c = make_cluster("rail2x4", nvswitch_node(4, 200.0, 4, 64.0), 2, rail_fabric());
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = iota_ranks(8);
  for (Algorithm a : {Algorithm::ring, Algorithm::tree})
    for (Protocol p : kAllProtocols) {
      FlowRunOptions o;
      o.algorithm = a;
      o.protocol = p;
      const double t_a = m.analytical(CollOp::all_reduce, ranks, Bytes(64 << 20), a, p).time.value;
      const double t_f = m.simulate_flow(CollOp::all_reduce, ranks, Bytes(64 << 20), o).time.value;
      EXPECT_NEAR(t_f / t_a, 1.0, 0.02) << to_string(a) << "/" << to_string(p);
    }
}

// The flow run keeps an integer-nanosecond clock: each phase's latency and completion round up
// to the next nanosecond, so a run of a few phases may end up to ~10 ns after the closed form.
constexpr double kClockSlack = 20e-9;

struct Finish {
  double a = -1, b = -1;
};

Finish run_pair(const CollectiveModel& m, const std::vector<int>& ra, const std::vector<int>& rb, double size) {
  Engine e;
  FlowNetwork net(e, m.effective_capacities());
  Finish f;
  FlowRunOptions o;
  o.algorithm = Algorithm::ring;
  o.protocol = Protocol::Simple;
  m.start(e, net, CollOp::all_reduce, ra, Bytes(size), [&](Seconds t) { f.a = t.value; }, o);
  m.start(e, net, CollOp::all_reduce, rb, Bytes(size), [&](Seconds t) { f.b = t.value; }, o);
  e.run();
  return f;
}

Json fat_tree(double oversubscription) {
  return {{"kind", "fat_tree"}, {"link_kind", "ib"}, {"nic_speed_Gbps", 100}, {"link_latency_us", 1.0},
          {"tiers", 2},         {"radix", 4},        {"oversubscription", {oversubscription}}};
}

TEST(CollectiveFlow, TwoJobsOnAnOversubscribedUplinkEachRunAtHalfSpeed) {
  // 4 nodes x 1 GPU, 100 Gb/s NICs (usable 12.5 * 0.92 = 11.5 GB/s), 2-tier fat tree of radix-4
  // switches at 2:1: each leaf has 2 NIC ports and 1 uplink of one port (11.5 GB/s usable);
  // nodes 0,1 hang off leaf 0 and nodes 2,3 off leaf 1. Job A = all_reduce on {0,2}, job B on
  // {1,3}, ring/Simple, S = 256 MiB, 16 channels, 2 ring steps (one phase each).
  // Alone: 16 flows per direction on A's NICs and on the uplinks: 11.5/16 GB/s each; a flow
  //   moves S/32 per step: t = 8.4 + 2 * 14 us + 2 * (S/32) / (11.5e9/16) = 36.4 us + S / 11.5e9.
  // Together: leaf0->spine carries A's 0->2 and B's 1->3, 32 flows: 11.5/32 GB/s each, so the
  //   bandwidth term doubles: t = 36.4 us + 2 S / 11.5e9 for both jobs.
  const Cluster c = make_cluster("fat2to1", testing::single_gpu_node(), 4, fat_tree(2.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const double S = 256.0 * 1024 * 1024;
  const double alone = 36.4e-6 + S / 11.5e9;
  const double shared = 36.4e-6 + 2.0 * S / 11.5e9;
  EXPECT_NEAR(m.analytical(CollOp::all_reduce, std::vector<int>{0, 2}, Bytes(S), Algorithm::ring, Protocol::Simple)
                  .time.value,
              alone, 1e-9);
  const Finish f = run_pair(m, {0, 2}, {1, 3}, S);
  EXPECT_NEAR(f.a, shared, kClockSlack);
  EXPECT_NEAR(f.b, shared, kClockSlack);
}

TEST(CollectiveFlow, TwoJobsOnAFullBisectionTreeDoNotSlowDown) {
  // Same cluster at 1:1: radix 4 gives each leaf 2 NIC ports and 2 uplink ports, bundled into
  // one leaf->spine link of 2 * 11.5 = 23 GB/s usable. The 32 flows of both jobs get 23/32 =
  // 11.5/16 GB/s there, the same as at their NICs: each job runs as fast as alone.
  const Cluster c = make_cluster("fat1to1", testing::single_gpu_node(), 4, fat_tree(1.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const double S = 256.0 * 1024 * 1024;
  const double alone = 36.4e-6 + S / 11.5e9;
  const Finish f = run_pair(m, {0, 2}, {1, 3}, S);
  EXPECT_NEAR(f.a, alone, kClockSlack);
  EXPECT_NEAR(f.b, alone, kClockSlack);
}

TEST(CollectiveFlow, DisjointGroupsInOneBoxDoNotInterfere) {
  // Two 4-GPU all_reduces on one NVSwitch use different GPU links: each takes its solo time.
  const Cluster c = make_cluster("nvs8", nvswitch_node(8, 450.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const double S = 64.0 * 1024 * 1024;
  const auto lo = iota_ranks(4), hi = iota_ranks(4, 4);
  const double solo = m.analytical(CollOp::all_reduce, lo, Bytes(S), Algorithm::ring, Protocol::Simple).time.value;
  const Finish f = run_pair(m, lo, hi, S);
  EXPECT_NEAR(f.a, solo, kClockSlack);
  EXPECT_NEAR(f.b, solo, kClockSlack);
}

}  // namespace
}  // namespace scalescope
