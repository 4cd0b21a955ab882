// Tests for the host-dispatch pass: host tasks issue labelled compute tasks in order, in time
// proportional to their GPU durations, and the GPU waits for the host (breakdown part host_wait).
#include "scalescope/sim/host_dispatch.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace scalescope
