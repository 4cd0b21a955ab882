// Tests for the host-dispatch pass: host tasks issue labelled compute tasks in order, in time
// proportional to their GPU durations, and the GPU waits for the host (breakdown part host_wait).
#include "scalescope/sim/host_dispatch.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope {
namespace {

using TC = TaskCategory;
using BP = BreakdownPart;

SimResult run(const TaskGraph& g) {
  auto c = load_cluster_by_name_or_path("hgx-h200-4", ClusterOptions{1, {}});
  EXPECT_TRUE(c.has_value()) << (c ? "" : c.error().str());
  CollectiveModel model(*c, datasheet_collective_params());
  auto r = simulate(g, *c, model);
  EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().str());
  return std::move(r).value();
}

// One rank, micro-batch 0: layer 0 = tasks of 1 ms and 3 ms, layer 1 = one task of 2 ms, plus an
// unlabelled 1 ms head task at the end.
TaskGraph two_layers() {
  TaskGraph g;
  g.add_compute(0, 0, TC::forward, "L0 a", Seconds(1e-3), TaskLabels{0, 0, 0});
  g.add_compute(0, 0, TC::forward, "L0 b", Seconds(3e-3), TaskLabels{0, 0, 0});
  g.add_compute(0, 0, TC::forward, "L1", Seconds(2e-3), TaskLabels{0, 1, 0});
  g.add_compute(0, 0, TC::forward, "head", Seconds(1e-3));
  return g;
}

TEST(HostDispatch, SlowHostMakesTheGpuWaitAndTheWaitIsHostWait) {
  TaskGraph g = two_layers();
  // H = 10 ms per layer and micro-batch: layer 0 shares it 1:3 -> host tasks 2.5 ms and 7.5 ms,
  // layer 1 gets 10 ms; the head task has no layer label and no host task.
  EXPECT_EQ(add_host_dispatch(g, Seconds(10e-3), 1), 3u);
  ASSERT_TRUE(g.validate().has_value());
  const SimResult r = run(g);
  // Host issues at 2.5, 10, 20 ms. GPU: L0a [2.5, 3.5], L0b [10, 13], L1 [20, 22], head [22, 23].
  EXPECT_NEAR(r.step_time.value, 23e-3, 1e-9);
  // Compute 1 + 3 + 2 + 1 = 7 ms (head is forward too); the GPU idles 23 - 7 = 16 ms while the
  // host still issues (it finishes issuing at 20 ms, and the GPU is busy from 20 on).
  EXPECT_NEAR(r.breakdown[BP::forward].value, 7e-3, 1e-9);
  EXPECT_NEAR(r.breakdown[BP::host_wait].value, 16e-3, 1e-9);
  EXPECT_NEAR(r.breakdown[BP::bubble].value, 0.0, 1e-9);
}

TEST(HostDispatch, FastHostOnlyDelaysTheFirstKernel) {
  TaskGraph g = two_layers();
  // H = 0.1 ms: host tasks 0.025, 0.075, 0.1 ms; the host runs ahead, only the first kernel waits
  // 0.025 ms, then the GPU runs its 7 ms back to back: step 7.025 ms, host_wait 0.025 ms.
  add_host_dispatch(g, Seconds(1e-4), 1);
  const SimResult r = run(g);
  EXPECT_NEAR(r.step_time.value, 7.025e-3, 1e-9);
  EXPECT_NEAR(r.breakdown[BP::host_wait].value, 0.025e-3, 1e-9);
}

TEST(HostDispatch, ZeroHostTimeAddsNothing) {
  TaskGraph g = two_layers();
  EXPECT_EQ(add_host_dispatch(g, Seconds(0.0), 1), 0u);
  EXPECT_EQ(g.size(), 4u);
  EXPECT_NEAR(run(g).step_time.value, 7e-3, 1e-9);  // 1 + 3 + 2 + 1 ms, nothing else
}

TEST(HostDispatch, CommunicationOverlapsTheHostWaitAndCountsAsComm) {
  // Two ranks: each runs a 1 ms layer-0 task then an all-reduce after it. Rank 1's host is not
  // slower (same H), so both issue at H = 5 ms, compute [5, 6], then the all-reduce together: step
  // = 6 ms + all-reduce time; the first 5 ms are host_wait, none of it bubble.
  TaskGraph g;
  const int group[] = {0, 1};
  for (int r = 0; r < 2; ++r) {
    const TaskId c = g.add_compute(r, 0, TC::forward, "L0", Seconds(1e-3), TaskLabels{0, 0, 0});
    const TaskId a = g.add_collective(r, 1, TC::tp_comm, "ar", CollOp::all_reduce, group, Bytes(1 << 20), 7);
    g.precede(c, a);
  }
  add_host_dispatch(g, Seconds(5e-3), 2);
  const SimResult r = run(g);
  EXPECT_NEAR(r.breakdown[BP::host_wait].value, 5e-3, 1e-9);
  EXPECT_NEAR(r.breakdown[BP::forward].value, 1e-3, 1e-9);
  EXPECT_GT(r.breakdown[BP::tp_comm].value, 0.0);
  EXPECT_NEAR(r.step_time.value, 6e-3 + r.breakdown[BP::tp_comm].value, 1e-9);
}

// Host synchronisation (TaskGraph::mark_host_sync). One rank, micro-batch 0, one task per layer; `marked` layers
// are synchronisation points; an unlabelled 1 ms "head" task follows the layers.
TaskGraph layers(std::initializer_list<double> ms, std::initializer_list<int> marked) {
  TaskGraph g;
  std::vector<TaskId> ids;
  std::int16_t layer = 0;
  for (double d : ms) ids.push_back(g.add_compute(0, 0, TC::forward, "L", Seconds(d * 1e-3), TaskLabels{0, layer++, 0}));
  g.add_compute(0, 0, TC::forward, "head", Seconds(1e-3));
  for (int i : marked) g.mark_host_sync(ids[static_cast<std::size_t>(i)]);
  return g;
}

TEST(HostDispatchSync, AGpuBoundStepPaysOnlyTheLatencyOfEachSync) {
  // H = 0.5 ms per layer, layers of 1 ms, L0 and L1 marked, latency 0.1 ms. Without marks the host runs ahead:
  // 0.5 + 3 x 1 + 1 (head) = 4.5 ms. With them: h0 [0, 0.5], L0 [0.5, 1.5]; sync [1.5, 1.6]; L1 starts with its
  // issue [1.6, 2.6] (h1 [1.6, 2.1] ends first); sync [2.6, 2.7]; L2 [2.7, 3.7]; head [3.7, 4.7]: 4.5 + 2 x 0.1.
  TaskGraph plain = layers({1, 1, 1}, {});
  add_host_dispatch(plain, HostCosts{Seconds(0.5e-3), Seconds(0.0), Seconds(0.0), Seconds(0.1e-3)}, 1);
  EXPECT_NEAR(run(plain).step_time.value, 4.5e-3, 1e-9);
  TaskGraph g = layers({1, 1, 1}, {0, 1});
  add_host_dispatch(g, HostCosts{Seconds(0.5e-3), Seconds(0.0), Seconds(0.0), Seconds(0.1e-3)}, 1);
  ASSERT_TRUE(g.validate().has_value());
  EXPECT_NEAR(run(g).step_time.value, 4.7e-3, 1e-9);
}

TEST(HostDispatchSync, ASyncTakesAwayTheHostsLeadSoEachSegmentTakesTheLongerOfHostAndGpu) {
  // H = 1.5 ms, layers of 3, 1 and 1 ms. Without marks the host issues L1 and L2 while L0 runs and is never waited
  // for again: 1.5 + 3 + 1 + 1 + 1 (head) = 7.5 ms. With L0 and L1 marked (latency 0): L0 [1.5, 4.5]; the host
  // issues L1 from 4.5 to 6.0 while L1 runs [4.5, 5.5]; L2 cannot start before L1's issue has ended and the host
  // syncs on L1 at 6.0: h2 [6.0, 7.5], L2 [6.0, 7.0]; the head waits for L2's issue: [7.5, 8.5]. Each segment
  // after a sync takes max(1.5, 1) ms: 1.5 + 3 + 1.5 + 1.5 + 1 = 8.5 ms; the GPU waits 8.5 - 6 = 2.5 ms for the host.
  TaskGraph plain = layers({3, 1, 1}, {});
  add_host_dispatch(plain, Seconds(1.5e-3), 1);
  EXPECT_NEAR(run(plain).step_time.value, 7.5e-3, 1e-9);
  TaskGraph g = layers({3, 1, 1}, {0, 1});
  add_host_dispatch(g, Seconds(1.5e-3), 1);
  const SimResult r = run(g);
  EXPECT_NEAR(r.step_time.value, 8.5e-3, 1e-9);
  EXPECT_NEAR(r.breakdown[BP::host_wait].value, 2.5e-3, 1e-9);
}

TEST(HostDispatchSync, IssueAndExecutionOverlapAfterASyncInsteadOfAddingUp) {
  // H = d = 1 ms per layer, L0 and L1 marked, no latency: the issue of a layer after a sync overlaps its
  // execution, so the step is what it is without marks (1 + 3 x 1 + 1 = 5 ms), not 1 ms more per sync.
  TaskGraph g = layers({1, 1, 1}, {0, 1});
  add_host_dispatch(g, Seconds(1e-3), 1);
  EXPECT_NEAR(run(g).step_time.value, 5e-3, 1e-9);
}

TEST(HostDispatchSync, MarksWithoutHostCostsAddNothingAndAMarkedDelayIsRefused) {
  TaskGraph g = layers({1, 1}, {0});
  g.mark_host_sync(0);  // twice: once
  EXPECT_EQ(g.host_syncs().size(), 1u);
  EXPECT_EQ(add_host_dispatch(g, Seconds(0.0), 1), 0u);
  EXPECT_NEAR(run(g).step_time.value, 3e-3, 1e-9);
  const TaskId d = g.add_delay(0, 0, TC::other, "wait", Seconds(1e-3));
  g.mark_host_sync(d);
  const auto v = g.validate();
  ASSERT_FALSE(v.has_value());
  EXPECT_NE(v.error().message.find("not a compute task"), std::string::npos) << v.error().str();
}

}  // namespace
}  // namespace scalescope
