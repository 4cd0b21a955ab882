// Tests for compute-communication interference in the executor (SimOptions::interference, or a
// task's own factors): while an NVLink collective or transfer of a rank runs, that rank's compute
// progresses at 1/c; while a rank of the communication computes, the communication progresses at 1/m. Expected times are worked out by
// hand from those two rates; communication costs are the collective model's.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope {
namespace {

using TC = TaskCategory;
constexpr double kMs = 1e6;  // ns
constexpr double c = 1.25, m = 1.5;

struct Rig {
  Cluster cluster;
  CollectiveModel model;
  explicit Rig(const char* name, int nodes = 1)
      : cluster(load_cluster_by_name_or_path(name, ClusterOptions{nodes, {}}).value()),
        model(cluster, datasheet_collective_params()) {}
  double coll_ns(CollOp op, const std::vector<int>& ranks, Bytes b) const {
    return static_cast<double>(to_sim_time(model.analytical(op, ranks, b).time));
  }
};

Expected<SimResult> run(const TaskGraph& g, const Rig& s, Interference f) {
  SimOptions o;
  o.interference = f;
  return simulate(g, s.cluster, s.model, o);
}

double step_ns(const TaskGraph& g, const Rig& s, Interference f) {
  auto r = run(g, s, f);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().str());
  return r ? static_cast<double>(r->step_ns) : -1.0;
}

// Every rank of `group`: A (1 ms) then B (2 ms) on stream 0; an all_reduce on stream 1 after A.
TaskGraph overlap_graph(const std::vector<int>& group, Bytes bytes) {
  TaskGraph g;
  for (int r : group) {
    const TaskId a = g.add_compute(r, 0, TC::backward, "A", milliseconds(1));
    g.add_compute(r, 0, TC::backward, "B", milliseconds(2));
    const TaskId ar = g.add_collective(r, 1, TC::dp_comm, "ar", CollOp::all_reduce, group, bytes, 1);
    g.precede(a, ar);
  }
  return g;
}

TEST(Interference, ShortCollectiveSlowsTheComputeItOverlaps) {
  const Rig s("hgx-h200-4");
  const std::vector<int> group{0, 1, 2, 3};
  const double T = s.coll_ns(CollOp::all_reduce, group, MiB(16));
  ASSERT_LT(T * m / c, 2 * kMs);  // the all-reduce ends while B runs
  // From 1 ms both run slowed: the all-reduce ends at 1 ms + T m, when B has done T m / c of its
  // 2 ms; the rest runs at full speed. Step = 1 + T m + (2 ms - T m / c).
  const double expected = 1 * kMs + T * m + (2 * kMs - T * m / c);
  EXPECT_NEAR(step_ns(overlap_graph(group, MiB(16)), s, {c, m}), expected, 2.0);
  EXPECT_NEAR(step_ns(overlap_graph(group, MiB(16)), s, {}), 3 * kMs, 0.5);  // without: hidden
}

TEST(Interference, LongCollectiveIsSlowedOnlyWhileComputeRuns) {
  const Rig s("hgx-h200-4");
  const std::vector<int> group{0, 1, 2, 3};
  const double T = s.coll_ns(CollOp::all_reduce, group, GiB(4));
  ASSERT_GT(T, 2 * kMs * c / m);  // B ends first
  // B runs slowed for its whole 2 ms: it ends at 1 + 2c ms, when the all-reduce has done 2c/m ms of
  // its T; the rest at full speed. Step = 1 ms + 2c ms + (T - 2c/m ms).
  const double expected = 1 * kMs + 2 * c * kMs + (T - 2 * c / m * kMs);
  EXPECT_NEAR(step_ns(overlap_graph(group, GiB(4)), s, {c, m}), expected, 2.0);
}

TEST(Interference, InterNodeCommunicationIsLeftAlone) {
  const Rig s("dgx-h100-8", 2);
  const std::vector<int> group{0, 8};  // one GPU on each node: the NICs carry it
  const double T = s.coll_ns(CollOp::all_reduce, group, MiB(16));
  ASSERT_LT(T, 2 * kMs);
  EXPECT_NEAR(step_ns(overlap_graph(group, MiB(16)), s, {c, m}), 3 * kMs, 0.5);
}

TEST(Interference, TransferAndComputeOfTheSendingRankSlowEachOther) {
  const Rig s("hgx-h200-4");
  TaskGraph g;
  g.add_compute(0, 0, TC::forward, "C", milliseconds(2));
  g.add_send(0, 1, TC::pp_comm, "send", 1, MiB(64), 7);
  g.add_recv(1, 1, TC::pp_comm, "recv", 0, MiB(64), 7);
  const double p = s.coll_ns(CollOp::sendrecv, {0, 1}, MiB(64));
  ASSERT_LT(p * m / c, 2 * kMs);
  // Rank 0 computes from 0: the transfer runs at 1/m and ends at p m; C has done p m / c by then.
  const double expected = p * m + (2 * kMs - p * m / c);
  EXPECT_NEAR(step_ns(g, s, {c, m}), expected, 2.0);
  // The same transfer between two ranks that compute nothing takes its alone time.
  TaskGraph idle;
  idle.add_send(0, 1, TC::pp_comm, "send", 1, MiB(64), 7);
  idle.add_recv(1, 1, TC::pp_comm, "recv", 0, MiB(64), 7);
  EXPECT_NEAR(step_ns(idle, s, {c, m}), p, 0.5);
}

TEST(Interference, ComputeOnAnotherRankIsNotSlowed) {
  const Rig s("hgx-h200-4");
  TaskGraph g;
  g.add_compute(2, 0, TC::forward, "C", milliseconds(2));  // rank 2 takes no part in the transfer
  g.add_send(0, 1, TC::pp_comm, "send", 1, MiB(64), 7);
  g.add_recv(1, 1, TC::pp_comm, "recv", 0, MiB(64), 7);
  EXPECT_NEAR(step_ns(g, s, {c, m}), 2 * kMs, 0.5);
}

// A task's own factors (TaskGraph::set_interference) replace the simulation's, even when those are
// none; a communication beside two compute tasks (on two of its ranks) takes the larger `slows`.
TEST(Interference, TaskFactorsReplaceTheSimulationsAndTheLargestSlowsWins) {
  const Rig s("hgx-h200-4");
  const std::vector<int> group{0, 1};
  const double T = s.coll_ns(CollOp::all_reduce, group, MiB(16));
  constexpr double c0 = 1.5, m0 = 1.2, m1 = 1.8;  // rank 0's B: slowed 1.5, slows 1.2; rank 1's B: slows 1.8
  TaskGraph g;
  for (int r : group) {
    const TaskId a = g.add_compute(r, 0, TC::backward, "A", milliseconds(1));
    const TaskId b = g.add_compute(r, 0, TC::backward, "B", milliseconds(2));
    g.set_interference(b, r == 0 ? c0 : 1.0, r == 0 ? m0 : m1);
    const TaskId ar = g.add_collective(r, 1, TC::dp_comm, "ar", CollOp::all_reduce, group, MiB(16), 1);
    g.precede(a, ar);
  }
  ASSERT_TRUE(g.has_task_interference());
  ASSERT_LT(T * m1, 2 * kMs);  // the all-reduce ends while both B run
  // From 1 ms the all-reduce runs at 1/max(1.2, 1.8) and ends at 1 + T m1 ms. Rank 0's B has done
  // T m1 / c0 by then and finishes the rest at full speed; rank 1's B (slowed 1) ends at 3 ms.
  const double rank0 = 1 * kMs + T * m1 + (2 * kMs - T * m1 / c0);
  ASSERT_GT(rank0, 3 * kMs);
  EXPECT_NEAR(step_ns(g, s, {}), rank0, 2.0);
  // The simulation's factors do not override a task's own.
  EXPECT_NEAR(step_ns(g, s, {c, m}), rank0, 2.0);
}

TEST(Interference, FactorsMustBeFiniteAndPositive) {
  const Rig s("hgx-h200-4");
  const TaskGraph g = overlap_graph({0, 1}, MiB(1));
  for (Interference bad : {Interference{0.0, 1.0}, Interference{1.0, -2.0}, Interference{NAN, 1.0}}) {
    auto r = run(g, s, bad);
    ASSERT_FALSE(r.has_value());
    EXPECT_NE(r.error().str().find("interference."), std::string::npos) << r.error().str();
    EXPECT_NE(r.error().str().find("finite factor > 0"), std::string::npos) << r.error().str();
  }
}

}  // namespace
}  // namespace scalescope
