// Concurrent collectives at analytical fidelity: sibling groups that run the same collective at the
// same time share the links their patterns meet on (CollectiveModel::analytical_concurrent,
// TaskGraph::set_concurrent), and the executor's symmetric analytical run then agrees with a flow run
// of every rank, where the contention is simulated flow by flow.
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "collective_test_clusters.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope {
namespace {

using testing::make_cluster;

constexpr double kGiB = 1073741824.0;

/// Two GPUs on one NVSwitch (200 GB/s) that reach the network through ONE NIC on a shared PCIe
/// switch (64 GB/s), as on machines with a NIC per two GPUs.
Json shared_nic_node() {
  Json links = Json::array();
  links.push_back({{"a", "gpu*"}, {"b", "nvswitch0"}, {"kind", "nvlink"}, {"bandwidth_GBps", 200}, {"latency_us", 0.5}});
  links.push_back({{"a", "gpu0-1"}, {"b", "pcie0"}, {"kind", "pcie"}, {"bandwidth_GBps", 64}, {"latency_us", 1.0}});
  links.push_back({{"a", "nic0"}, {"b", "pcie0"}, {"kind", "pcie"}, {"bandwidth_GBps", 64}, {"latency_us", 1.0}});
  return {{"gpu", testing::test_gpu()}, {"gpus", 2},  {"nvswitches", 1},
          {"pcie_switches", 1},         {"nics", 1}, {"links", links}};
}

Json ib_switch() {
  return {{"kind", "single_switch"}, {"link_kind", "ib"}, {"nic_speed_Gbps", 200}, {"link_latency_us", 1.0}};
}

// Two nodes; the data-parallel groups of "tensor-parallel ranks" 0 and 1 are {0, 2} and {1, 3}.
// Each group alone has node 0's NIC to itself; together every unit flow that crosses the NIC has a
// twin from the other group, so the NIC's usable 0.92 * 25 GB/s is split in two: the bandwidth
// term of the time (time - latency) doubles and the latency is unchanged.
TEST(CollectiveConcurrent, TwoGroupsThroughOneNicHalveTheRate) {
  const Cluster c = make_cluster("shared-nic", shared_nic_node(), 2, ib_switch());
  const CollectiveModel m(c, datasheet_collective_params());
  const std::vector<int> a{0, 2}, b{1, 3};
  const std::span<const int> siblings[] = {b};
  for (CollOp op : {CollOp::all_reduce, CollOp::all_gather, CollOp::reduce_scatter}) {
    const CollResult alone = m.analytical(op, a, Bytes(kGiB));
    const CollResult both = m.analytical_concurrent(op, a, siblings, Bytes(kGiB));
    EXPECT_EQ(both.algorithm, alone.algorithm);
    EXPECT_EQ(both.channels, alone.channels);
    EXPECT_NEAR(both.latency.value, alone.latency.value, 1e-15);
    EXPECT_NEAR((both.time - both.latency).value, 2.0 * (alone.time - alone.latency).value, 1e-9)
        << to_string(op);
    ASSERT_GE(both.bottleneck_link, 0);
    EXPECT_EQ(c.link(both.bottleneck_link).kind, LinkKind::ib) << both.bottleneck;
  }
}

// Siblings whose flows meet nowhere change nothing: two groups inside different nodes.
TEST(CollectiveConcurrent, DisjointSiblingsChangeNothing) {
  const Cluster c = make_cluster("shared-nic", shared_nic_node(), 2, ib_switch());
  const CollectiveModel m(c, datasheet_collective_params());
  const std::vector<int> a{0, 1}, b{2, 3};
  const std::span<const int> siblings[] = {b};
  const CollResult alone = m.analytical(CollOp::all_reduce, a, Bytes(kGiB));
  const CollResult both = m.analytical_concurrent(CollOp::all_reduce, a, siblings, Bytes(kGiB));
  EXPECT_DOUBLE_EQ(both.time.value, alone.time.value);
  const CollResult none = m.analytical_concurrent(CollOp::all_reduce, a, {}, Bytes(kGiB));
  EXPECT_DOUBLE_EQ(none.time.value, alone.time.value);
}

// The executor: a symmetric graph (rank 0 and 2 only, group {0, 2} with sibling {1, 3} declared)
// costs at analytical fidelity what the full graph (all four ranks, both groups) costs at flow
// fidelity, where the two all-reduces really share the NIC; without the declaration (or with
// SimOptions::concurrent_collectives off) the analytical run is faster by the bandwidth term.
TEST(CollectiveConcurrent, SymmetricAnalyticalMatchesFlowOfAllRanks) {
  const Cluster c = make_cluster("shared-nic", shared_nic_node(), 2, ib_switch());
  const CollectiveModel m(c, datasheet_collective_params());
  const Bytes size(kGiB / 4);
  auto graph = [&](bool all_ranks, bool declare) {
    TaskGraph g;
    const std::vector<int> a{0, 2}, b{1, 3};
    const GroupId ga = g.intern_group(a), gb = g.intern_group(b);
    if (declare) {
      g.set_concurrent(ga, {gb});
      g.set_concurrent(gb, {ga});
    }
    for (int r : all_ranks ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0, 2}) {
      const bool in_a = r % 2 == 0;
      const TaskId w = g.add_compute(r, 0, TaskCategory::backward, "bwd", milliseconds(1));
      const TaskId t = g.add_collective(r, 1, TaskCategory::dp_comm, "dp all-reduce", CollOp::all_reduce,
                                        in_a ? ga : gb, size, in_a ? 1 : 2);
      g.precede(w, t);
    }
    return g;
  };
  auto run = [&](const TaskGraph& g, Fidelity f, bool concurrent = true) {
    SimOptions o;
    o.fidelity = f;
    o.concurrent_collectives = concurrent;
    auto r = simulate(g, c, m, o);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().str());
    return r ? r->step_time.value : 0.0;
  };
  const double flow_all = run(graph(true, true), Fidelity::flow);
  const double sym = run(graph(false, true), Fidelity::analytical);
  const double all_analytical = run(graph(true, true), Fidelity::analytical);
  EXPECT_NEAR(sym, flow_all, 1e-3 * flow_all);
  EXPECT_NEAR(all_analytical, flow_all, 1e-3 * flow_all);

  // Alone on the network the all-reduce's bandwidth term is half of what the shared NIC gives.
  const CollResult alone = m.analytical(CollOp::all_reduce, std::vector<int>{0, 2}, size);
  const double uncontended = run(graph(false, false), Fidelity::analytical);
  EXPECT_NEAR(uncontended, 1e-3 + alone.time.value, 1e-8);
  EXPECT_NEAR(run(graph(false, true), Fidelity::analytical, false), uncontended, 1e-12);
  EXPECT_NEAR(sym - uncontended, (alone.time - alone.latency).value, 1e-3 * sym);
}

TEST(CollectiveConcurrent, SiblingOfAnotherSizeIsAnInputError) {
  const Cluster c = make_cluster("shared-nic", shared_nic_node(), 2, ib_switch());
  const CollectiveModel m(c, datasheet_collective_params());
  TaskGraph g;
  const GroupId ga = g.intern_group(std::vector<int>{0, 2}), gb = g.intern_group(std::vector<int>{1, 3, 2});
  g.set_concurrent(ga, {gb});
  g.add_collective(0, 0, TaskCategory::dp_comm, "ar", CollOp::all_reduce, ga, Bytes(1e6), 1);
  auto r = simulate(g, c, m);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("concurrent sibling group has 3 ranks"), std::string::npos) << r.error().str();
}

}  // namespace
}  // namespace scalescope
