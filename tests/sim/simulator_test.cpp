// Tests for the task-graph executor: stream overlap, a GPipe pipeline with its bubble, waiting for
// the slowest participant, symmetric vs full graphs, analytical vs flow, contention, the breakdown
// rule. Communication costs are the collective model's (tested in collective_*_test.cpp); what is
// derived by hand here is how the executor combines them with compute and dependencies.
#include "scalescope/sim/simulator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope {
namespace {

using TC = TaskCategory;
using BP = BreakdownPart;

struct Rig {
  Cluster cluster;
  CollectiveModel model;
  explicit Rig(Cluster c) : cluster(std::move(c)), model(cluster, datasheet_collective_params()) {}
};

Cluster load(const char* name, int nodes = 1) {
  auto c = load_cluster_by_name_or_path(name, ClusterOptions{nodes, {}});
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().str());
  return std::move(c).value();
}

SimResult run(const TaskGraph& g, const Rig& s, Fidelity f = Fidelity::analytical,
              bool record = false) {
  SimOptions o;
  o.fidelity = f;
  o.record_task_times = record;
  auto r = simulate(g, s.cluster, s.model, o);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().str());
  return r ? std::move(r).value() : SimResult{};
}

// Collective time as the executor uses it: the model's analytical time rounded up to whole ns.
SimTime coll_ns(const Rig& s, CollOp op, const std::vector<int>& ranks, Bytes b) {
  return to_sim_time(s.model.analytical(op, ranks, b).time);
}
SimTime p2p_ns(const Rig& s, int src, int dst, Bytes b) {
  return coll_ns(s, CollOp::sendrecv, {src, dst}, b);
}

constexpr SimTime kMs = 1'000'000;
double ns(Seconds s) { return s.value * 1e9; }

// Rank r: A (1 ms) then B (2 ms) on stream 0; an all_reduce on stream 1 that waits for A.
TaskGraph overlap_graph(Bytes ar_bytes) {
  TaskGraph g;
  const std::vector<int> grp{0, 1, 2, 3};
  for (int r = 0; r < 4; ++r) {
    const TaskId a = g.add_compute(r, 0, TC::backward, "A", milliseconds(1));
    g.add_compute(r, 0, TC::backward, "B", milliseconds(2));
    const TaskId ar =
        g.add_collective(r, 1, TC::dp_comm, "ar", CollOp::all_reduce, grp, ar_bytes, 1);
    g.precede(a, ar);
  }
  return g;
}

TEST(Simulator, SmallCollectiveHidesBehindComputeOnAnotherStream) {
  const Rig s(load("hgx-h200-4"));
  const Bytes size = MiB(1);
  const SimTime t_ar = coll_ns(s, CollOp::all_reduce, {0, 1, 2, 3}, size);
  ASSERT_LT(t_ar, 2 * kMs);  // precondition: shorter than B
  // The all_reduce runs in [1 ms, 1 ms + T] inside B's [1 ms, 3 ms]: step = A + B = 3 ms, nothing
  // exposed.
  const SimResult r = run(overlap_graph(size), s);
  EXPECT_EQ(r.step_ns, 3 * kMs);
  EXPECT_DOUBLE_EQ(ns(r.breakdown[BP::backward]), 3e6);
  EXPECT_DOUBLE_EQ(ns(r.breakdown[BP::dp_comm]), 0.0);
  EXPECT_DOUBLE_EQ(ns(r.breakdown[BP::bubble]), 0.0);
  // busy counts the all_reduce's own duration even though it is hidden.
  EXPECT_DOUBLE_EQ(ns(r.ranks[0].busy[static_cast<int>(TC::dp_comm)]), static_cast<double>(t_ar));
}

TEST(Simulator, LargeCollectiveIsExposedPastTheCompute) {
  const Rig s(load("hgx-h200-4"));
  const Bytes size = GiB(4);
  const SimTime t_ar = coll_ns(s, CollOp::all_reduce, {0, 1, 2, 3}, size);
  ASSERT_GT(t_ar, 2 * kMs);  // precondition: longer than B
  // step = A + T = 1 ms + T; B hides 2 ms of it, so exposed dp = T - 2 ms; compute = 3 ms; no
  // bubble.
  const SimResult r = run(overlap_graph(size), s);
  EXPECT_EQ(r.step_ns, 1 * kMs + t_ar);
  EXPECT_NEAR(ns(r.breakdown[BP::dp_comm]), static_cast<double>(t_ar - 2 * kMs), 1e-6);
  EXPECT_NEAR(ns(r.breakdown[BP::backward]), 3e6, 1e-6);
  EXPECT_NEAR(ns(r.breakdown[BP::bubble]), 0.0, 1e-6);
  EXPECT_NEAR(ns(r.breakdown.sum()), static_cast<double>(r.step_ns), 1e-3);
}

// GPipe, 2 stages (ranks 0, 1), 2 microbatches; compute on stream 0, p2p on stream 1.
TaskGraph gpipe_2x2(Bytes act) {
  TaskGraph g;
  const Seconds f = milliseconds(1), b = milliseconds(2);
  TaskId F[2][2], B[2][2];
  for (int m = 0; m < 2; ++m) {
    F[0][m] = g.add_compute(0, 0, TC::forward, "F", f, {m, -1, 0});
    const TaskId s =
        g.add_send(0, 1, TC::pp_comm, "send act", 1, act, static_cast<std::uint32_t>(m));
    g.precede(F[0][m], s);
  }
  for (int m = 0; m < 2; ++m) {
    const TaskId rv =
        g.add_recv(1, 1, TC::pp_comm, "recv act", 0, act, static_cast<std::uint32_t>(m));
    F[1][m] = g.add_compute(1, 0, TC::forward, "F", f, {m, -1, 1});
    g.precede(rv, F[1][m]);
  }
  for (int m = 1; m >= 0; --m) {  // backward in reverse microbatch order
    B[1][m] = g.add_compute(1, 0, TC::backward, "B", b, {m, -1, 1});
    const TaskId s =
        g.add_send(1, 1, TC::pp_comm, "send grad", 0, act, static_cast<std::uint32_t>(10 + m));
    g.precede(B[1][m], s);
  }
  for (int m = 1; m >= 0; --m) {
    const TaskId rv =
        g.add_recv(0, 1, TC::pp_comm, "recv grad", 1, act, static_cast<std::uint32_t>(10 + m));
    B[0][m] = g.add_compute(0, 0, TC::backward, "B", b, {m, -1, 0});
    g.precede(rv, B[0][m]);
  }
  return g;
}

TEST(Simulator, GPipeTwoStagesTwoMicrobatchesHasTheBubbleDerivedByHand) {
  const Rig s(load("hgx-h200-4"));
  const Bytes act = MiB(16);
  const SimTime p = p2p_ns(s, 0, 1, act);
  const SimTime f = kMs, b = 2 * kMs;
  ASSERT_LT(p, f);  // precondition for the timeline below
  // Timeline (p = one transfer): stage 0 F0 [0,f], F1 [f,2f]; send0 [f,f+p] under F1, send1
  // [2f,2f+p] exposed. Stage 1: recv0 [f,f+p] exposed, F0 [f+p,2f+p], F1 [2f+p,3f+p], B1
  // [3f+p,3f+p+b], B0 [.., 3f+p+2b]; grad1 [3f+p+b, 3f+2p+b] under B0, grad0 [3f+p+2b, 3f+2p+2b]
  // exposed. Stage 0: B1 [3f+2p+b, 3f+2p+2b] (its recv grad1 exposed), B0 ends at 3f+2p+3b = step
  // time. Each stage: compute 2f+2b, exposed pp 2p, bubble f+b = (p_s-1)/(m+p_s-1) of
  // (m+p_s-1)(f+b) = 1/3.
  const SimResult r = run(gpipe_2x2(act), s);
  EXPECT_EQ(r.step_ns, 3 * f + 3 * b + 2 * p);
  EXPECT_EQ(r.critical_rank, 0);
  for (int rank : {0, 1}) {
    const Breakdown& bd = r.rank_stats(rank)->breakdown;
    EXPECT_NEAR(ns(bd[BP::forward]), static_cast<double>(2 * f), 1e-6) << rank;
    EXPECT_NEAR(ns(bd[BP::backward]), static_cast<double>(2 * b), 1e-6) << rank;
    EXPECT_NEAR(ns(bd[BP::pp_comm]), static_cast<double>(2 * p), 1e-6) << rank;
    EXPECT_NEAR(ns(bd[BP::bubble]), static_cast<double>(f + b), 1e-6) << rank;
    EXPECT_NEAR(ns(bd.sum()), static_cast<double>(r.step_ns), 1e-3) << rank;
  }
  EXPECT_EQ(r.rank_stats(1)->end, 3 * f + 2 * p + 2 * b);
}

TEST(Simulator, CollectiveWaitsForItsSlowestParticipant) {
  const Rig s(load("hgx-h200-4"));
  const std::vector<int> grp{0, 1, 2, 3};
  const Bytes size = MiB(64);
  TaskGraph g;
  for (int r = 0; r < 4; ++r) {
    g.add_compute(r, 0, TC::forward, "work", milliseconds(r + 1));
    g.add_collective(r, 0, TC::dp_comm, "ar", CollOp::all_reduce, grp, size, 42);
  }
  const SimTime t = coll_ns(s, CollOp::all_reduce, grp, size);
  // Rank 3 arrives last at 4 ms: everyone starts then and ends at 4 ms + T. Rank 0 waited 3 ms,
  // which is bubble (waiting), not communication.
  const SimResult r = run(g, s, Fidelity::analytical, true);
  EXPECT_EQ(r.step_ns, 4 * kMs + t);
  EXPECT_EQ(r.task_times[1].ready, 1 * kMs);
  EXPECT_EQ(r.task_times[1].start, 4 * kMs);
  EXPECT_EQ(r.task_times[1].end, 4 * kMs + t);
  const Breakdown& r0 = r.rank_stats(0)->breakdown;
  EXPECT_NEAR(ns(r0[BP::forward]), 1e6, 1e-6);
  EXPECT_NEAR(ns(r0[BP::bubble]), 3e6, 1e-6);
  EXPECT_NEAR(ns(r0[BP::dp_comm]), static_cast<double>(t), 1e-6);
  const Breakdown& r3 = r.rank_stats(3)->breakdown;
  EXPECT_NEAR(ns(r3[BP::bubble]), 0.0, 1e-6);
}

// GPipe with pp = 2 (one stage per node of a 2-node dgx-h100-8), dp = 8 (ranks of a node), m = 3,
// then a DP all_reduce of the gradients on stream 2. Rank = stage * 8 + d. `dps` are the pipelines
// put in the graph.
TaskGraph dp_pp_graph(const std::vector<int>& dps) {
  TaskGraph g;
  const int m = 3;
  const Bytes act = MiB(8), grads = MiB(512);
  for (int d : dps) {
    const int r0 = d, r1 = 8 + d;
    std::vector<TaskId> f0, f1, b0, b1;
    for (int i = 0; i < m; ++i) {
      f0.push_back(g.add_compute(r0, 0, TC::forward, "F", milliseconds(1)));
      g.precede(f0.back(),
                g.add_send(r0, 1, TC::pp_comm, "send act", r1, act, static_cast<std::uint32_t>(i)));
    }
    for (int i = 0; i < m; ++i) {
      const TaskId rv =
          g.add_recv(r1, 1, TC::pp_comm, "recv act", r0, act, static_cast<std::uint32_t>(i));
      f1.push_back(g.add_compute(r1, 0, TC::forward, "F", milliseconds(1)));
      g.precede(rv, f1.back());
    }
    for (int i = m - 1; i >= 0; --i) {
      b1.push_back(g.add_compute(r1, 0, TC::backward, "B", milliseconds(2)));
      g.precede(b1.back(), g.add_send(r1, 1, TC::pp_comm, "send grad", r0, act,
                                      static_cast<std::uint32_t>(100 + i)));
    }
    for (int i = m - 1; i >= 0; --i) {
      const TaskId rv =
          g.add_recv(r0, 1, TC::pp_comm, "recv grad", r1, act, static_cast<std::uint32_t>(100 + i));
      b0.push_back(g.add_compute(r0, 0, TC::backward, "B", milliseconds(2)));
      g.precede(rv, b0.back());
    }
    for (int stage = 0; stage < 2; ++stage) {
      std::vector<int> grp;
      for (int k = 0; k < 8; ++k) grp.push_back(stage * 8 + k);
      const TaskId ar = g.add_collective(stage * 8 + d, 2, TC::dp_comm, "dp ar", CollOp::all_reduce,
                                         grp, grads, static_cast<std::uint64_t>(1000 + stage));
      g.precede(stage == 0 ? b0.back() : b1.back(), ar);
    }
  }
  return g;
}

TEST(Simulator, SymmetricRepresentativeEqualsFullGraphWhenPeersAreIdentical) {
  const Rig s(load("dgx-h100-8", 2));
  std::vector<int> all(8);
  for (int d = 0; d < 8; ++d) all[static_cast<std::size_t>(d)] = d;
  const TaskGraph full = dp_pp_graph(all), sym = dp_pp_graph({0});
  // Peers are identical and analytical costs do not depend on what else runs: every pipeline of the
  // full graph follows the representative's timeline exactly, and the DP all_reduce costs the same.
  const SimResult rf = run(full, s), rs = run(sym, s);
  EXPECT_EQ(rf.ranks.size(), 16u);
  EXPECT_EQ(rs.ranks.size(), 2u);
  EXPECT_EQ(rs.step_ns, rf.step_ns);
  EXPECT_NEAR(ns(rs.breakdown[BP::dp_comm]), ns(rf.breakdown[BP::dp_comm]), 1e-6);
  // At flow fidelity the pipelines' p2p transfers meet: GPUs 2k and 2k+1 share a PCIe switch with
  // NICs 2k and 2k+1, and ECMP spreads each transfer over both NICs, so alone (symmetric graph) a
  // transfer has two NICs and in the full graph two pipelines share them. Each transfer then gets
  // at least half of what it had alone, so the full graph is no faster and at most slower by the 12
  // transfers of a pipeline (6 per stage, all on the critical path in the worst case) each taking
  // once more their alone time p.
  const SimResult ff = run(full, s, Fidelity::flow), fs = run(sym, s, Fidelity::flow);
  const SimTime p = p2p_ns(s, 0, 8, MiB(8));
  EXPECT_GE(ff.step_ns, fs.step_ns);
  EXPECT_LE(ff.step_ns, fs.step_ns + 12 * p);
}

TEST(Simulator, AnalyticalAndFlowAgreeWhenNothingContends) {
  {  // intra-node all_reduce between two compute phases
    const Rig s(load("hgx-h200-4"));
    const SimResult a = run(overlap_graph(GiB(1)), s),
                    f = run(overlap_graph(GiB(1)), s, Fidelity::flow);
    EXPECT_NEAR(static_cast<double>(f.step_ns), static_cast<double>(a.step_ns),
                0.02 * static_cast<double>(a.step_ns));
  }
  {  // inter-node pipeline: p2p over the NICs
    const Rig s(load("dgx-h100-8", 2));
    const SimResult a = run(dp_pp_graph({0}), s), f = run(dp_pp_graph({0}), s, Fidelity::flow);
    EXPECT_NEAR(static_cast<double>(f.step_ns), static_cast<double>(a.step_ns),
                0.02 * static_cast<double>(a.step_ns));
  }
  {  // one large inter-node transfer alone
    const Rig s(load("dgx-h100-8", 2));
    TaskGraph g;
    g.add_send(0, 1, TC::pp_comm, "s", 8, MiB(256));
    g.add_recv(8, 1, TC::pp_comm, "r", 0, MiB(256));
    const SimResult a = run(g, s), f = run(g, s, Fidelity::flow);
    EXPECT_EQ(a.step_ns, p2p_ns(s, 0, 8, MiB(256)));
    EXPECT_NEAR(static_cast<double>(f.step_ns), static_cast<double>(a.step_ns),
                0.02 * static_cast<double>(a.step_ns));
  }
}

TEST(Simulator, ConcurrentTransfersShareTheLinkAtFlowFidelityOnly) {
  const Rig s(load("dgx-h100-8", 2));
  const Bytes size = MiB(256);
  TaskGraph g;
  for (int k = 0; k < 2; ++k) {  // two transfers 0 -> 8 at once, on streams 1 and 2
    g.add_send(0, 1 + k, TC::pp_comm, "s", 8, size, static_cast<std::uint32_t>(k));
    g.add_recv(8, 1 + k, TC::pp_comm, "r", 0, size, static_cast<std::uint32_t>(k));
  }
  const int pair[2] = {0, 8};
  const CollResult alone = s.model.analytical(CollOp::sendrecv, pair, size);
  ASSERT_GE(alone.bottleneck_link,
            0);  // precondition: a link's share (not a per-channel cap) limits it
  // Analytical: no contention, both take T. Flow: twice the flows on the same route, each at half
  // the share, so the bandwidth part doubles: T2 = L + 2 (T - L), L = the model's latency part.
  const double t = alone.time.value * 1e9, l = alone.latency.value * 1e9;
  const SimResult a = run(g, s), f = run(g, s, Fidelity::flow);
  EXPECT_EQ(a.step_ns, to_sim_time(alone.time));
  EXPECT_NEAR(static_cast<double>(f.step_ns), l + 2.0 * (t - l), 0.02 * (l + 2.0 * (t - l)));
}

TEST(Simulator, OverlappingCommunicationKindsSplitTheExposedTimeEqually) {
  const Rig s(load("hgx-h200-4"));
  const std::vector<int> grp{0, 1, 2, 3};
  // Only rank 0 is in the graph (symmetric fast path): both collectives start at 0.
  TaskGraph g;
  g.add_collective(0, 1, TC::tp_comm, "tp ar", CollOp::all_reduce, grp, MiB(64), 1);
  g.add_collective(0, 2, TC::dp_comm, "dp ar", CollOp::all_reduce, grp, MiB(256), 2);
  const SimTime t1 = coll_ns(s, CollOp::all_reduce, grp, MiB(64));
  const SimTime t2 = coll_ns(s, CollOp::all_reduce, grp, MiB(256));
  ASSERT_LT(t1, t2);
  // [0, t1): both kinds active, half each; [t1, t2): dp alone. tp = t1/2, dp = t1/2 + t2 - t1; sum
  // = t2.
  const SimResult r = run(g, s);
  EXPECT_EQ(r.step_ns, t2);
  EXPECT_NEAR(ns(r.breakdown[BP::tp_comm]), t1 / 2.0, 1e-6);
  EXPECT_NEAR(ns(r.breakdown[BP::dp_comm]), t1 / 2.0 + static_cast<double>(t2 - t1), 1e-6);
  EXPECT_NEAR(ns(r.breakdown.sum()), static_cast<double>(t2), 1e-6);
}

TEST(Simulator, BreakdownSumsToStepTimeForEveryRankAndTheMean) {
  const Rig s(load("dgx-h100-8", 2));
  for (Fidelity fid : {Fidelity::analytical, Fidelity::flow}) {
    const SimResult r = run(dp_pp_graph({0, 1, 2, 3, 4, 5, 6, 7}), s, fid);
    for (const RankStats& rs : r.ranks) {
      EXPECT_NEAR(ns(rs.breakdown.sum()), static_cast<double>(r.step_ns), 1e-3) << rs.rank;
      EXPECT_EQ(rs.breakdown.total.value, r.step_time.value);
    }
    EXPECT_NEAR(ns(r.mean_breakdown.sum()), static_cast<double>(r.step_ns), 1e-3);
    // 3 forwards of 1 ms and 3 backwards of 2 ms on every rank.
    EXPECT_NEAR(ns(r.mean_breakdown.compute()), 9e6, 1e-3);
  }
}

TEST(Simulator, DeadlockAtRunTimeNamesTheStuckTask) {
  const Rig s(load("hgx-h200-4"));
  TaskGraph g;  // both ranks send first, then receive: NCCL would hang
  g.add_send(0, 0, TC::pp_comm, "s01", 1, MiB(1));
  g.add_recv(0, 0, TC::pp_comm, "r10", 1, MiB(1));
  g.add_send(1, 0, TC::pp_comm, "s10", 0, MiB(1));
  g.add_recv(1, 0, TC::pp_comm, "r01", 0, MiB(1));
  SimOptions o;
  o.validate = false;
  auto r = simulate(g, s.cluster, s.model, o);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().kind, Error::Kind::runtime);
  EXPECT_EQ(r.error().message,
            "simulation deadlocked: task 0 (send on rank 0, stream 0, 's01') waits for task 3 "
            "(recv on rank 1, "
            "stream 0, 'r01')");
  // With validation (the default) the same graph is rejected before running.
  auto v = simulate(g, s.cluster, s.model);
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().message.find("would deadlock"), std::string::npos);
}

TEST(Simulator, RankOutsideTheClusterIsAnInputError) {
  const Rig s(load("hgx-h200-4"));
  TaskGraph g;
  g.add_compute(4, 0, TC::forward, "x", milliseconds(1));
  auto r = simulate(g, s.cluster, s.model);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().str(),
            "task graph: rank 4 is outside cluster 'hgx-h200-4' (4 GPUs, ranks 0..3)");
}

TEST(Simulator, RunsAreDeterministic) {
  const Rig s(load("dgx-h100-8", 2));
  const TaskGraph g = dp_pp_graph({0, 1, 2, 3, 4, 5, 6, 7});
  const SimResult a = run(g, s, Fidelity::flow, true), b = run(g, s, Fidelity::flow, true);
  ASSERT_EQ(a.task_times.size(), g.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    EXPECT_EQ(a.task_times[i].start, b.task_times[i].start);
    EXPECT_EQ(a.task_times[i].end, b.task_times[i].end);
  }
  EXPECT_EQ(a.events, b.events);
}

// Checks that callbacks come in time order and pair up.
class OrderObserver final : public SimObserver {
 public:
  void task_started(int, int, TaskId, SimTime t) override {
    see(t);
    ++started;
  }
  void task_finished(int, int, TaskId, SimTime t) override {
    see(t);
    ++finished;
  }
  void simulation_finished(SimTime end) override {
    see(end);
    step = end;
  }
  void see(SimTime t) {
    if (t < last) in_order = false;
    last = t;
  }
  SimTime last = 0, step = -1;
  std::size_t started = 0, finished = 0;
  bool in_order = true;
};

TEST(Simulator, ObserversSeeEveryTaskInTimeOrder) {
  const Rig s(load("dgx-h100-8", 2));
  const TaskGraph g = dp_pp_graph({0, 1});
  OrderObserver obs;
  SimOptions o;
  o.fidelity = Fidelity::flow;
  o.observers.push_back(&obs);
  auto r = simulate(g, s.cluster, s.model, o);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(obs.in_order);
  EXPECT_EQ(obs.started, g.size());
  EXPECT_EQ(obs.finished, g.size());
  EXPECT_EQ(obs.step, r->step_ns);
}

TEST(Simulator, SendToAnAbsentPeerCostsTheTransferAsIfThePeerWereReady) {
  const Rig s(load("hgx-h200-4"));
  TaskGraph g;  // rank 1 has no task: the send starts as soon as the compute is done
  const TaskId c = g.add_compute(0, 0, TC::forward, "F", milliseconds(1));
  const TaskId d = g.add_delay(0, 0, TC::other, "launch", microseconds(10));
  const TaskId snd = g.add_send(0, 1, TC::pp_comm, "send", 1, MiB(32));
  g.precede(c, snd);
  // Stream 0: F [0, 1 ms], delay [1 ms, 1.01 ms]; stream 1: send [1 ms, 1 ms + p]. Step = 1 ms + p
  // (p > 10 us); the delay counts as other_compute, the send is exposed only after the delay.
  const SimTime p = p2p_ns(s, 0, 1, MiB(32));
  ASSERT_GT(p, 10'000);
  (void)d;
  const SimResult r = run(g, s);
  EXPECT_EQ(r.step_ns, kMs + p);
  EXPECT_NEAR(ns(r.breakdown[BP::other_compute]), 10'000.0, 1e-6);
  EXPECT_NEAR(ns(r.breakdown[BP::pp_comm]), static_cast<double>(p - 10'000), 1e-6);
}

TEST(Simulator, ConcurrentSimulationsOnSharedInputsGiveIdenticalResults) {
  const Rig s(load("dgx-h100-8", 2));
  const TaskGraph g = dp_pp_graph({0, 1, 2, 3});
  const SimResult ref = run(g, s, Fidelity::flow);
  std::vector<SimTime> steps(4, -1);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    threads.emplace_back([&, i] {
      SimOptions o;
      o.fidelity = i % 2 == 0 ? Fidelity::flow : Fidelity::analytical;
      auto r = simulate(g, s.cluster, s.model, o);
      steps[i] = r ? r->step_ns : -2;
    });
  }
  for (auto& t : threads) t.join();
  const SimResult ana = run(g, s);
  EXPECT_EQ(steps[0], ref.step_ns);
  EXPECT_EQ(steps[2], ref.step_ns);
  EXPECT_EQ(steps[1], ana.step_ns);
  EXPECT_EQ(steps[3], ana.step_ns);
}

TEST(Simulator, EmptyGraphTakesNoTime) {
  const Rig s(load("hgx-h200-4"));
  const SimResult r = run(TaskGraph{}, s);
  EXPECT_EQ(r.step_ns, 0);
  EXPECT_EQ(r.critical_rank, -1);
  EXPECT_TRUE(r.ranks.empty());
}

}  // namespace
}  // namespace scalescope
