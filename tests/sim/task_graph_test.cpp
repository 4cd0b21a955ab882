// Tests for the task graph: ids, interning, and validate() catching cycles, deadlocks, dangling
// ids, unmatched transfers and inconsistent collective instances with messages that name the task.
#include "scalescope/sim/task_graph.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace scalescope {
namespace {

using TC = TaskCategory;

std::string error_of(const TaskGraph& g) {
  auto r = g.validate();
  return r ? std::string("(valid)") : r.error().str();
}

TEST(TaskGraph, IdsAreDenseInInsertionOrderAndNamesAndGroupsAreInterned) {
  TaskGraph g;
  const std::vector<int> group{0, 1};
  const TaskId a = g.add_compute(0, 0, TC::forward, "fwd", milliseconds(1));
  const TaskId b = g.add_compute(1, 0, TC::forward, "fwd", milliseconds(1));
  const TaskId c = g.add_collective(0, 1, TC::tp_comm, "ar", CollOp::all_reduce, group, MiB(1), 7);
  const TaskId d = g.add_collective(1, 1, TC::tp_comm, "ar", CollOp::all_reduce, group, MiB(1), 7);
  EXPECT_EQ(a, 0u);
  EXPECT_EQ(b, 1u);
  EXPECT_EQ(c, 2u);
  EXPECT_EQ(d, 3u);
  // Two uses of "fwd" share one name; two uses of {0,1} one group; instance key 7 one slot.
  EXPECT_EQ(g.task(a).name, g.task(b).name);
  EXPECT_EQ(g.task_name(b), "fwd");
  EXPECT_EQ(g.num_groups(), 1u);
  EXPECT_EQ(g.task(c).a, g.task(d).a);
  EXPECT_EQ(g.num_collective_instances(), 1u);
  EXPECT_EQ(g.collective_instance_key(0), 7u);
  EXPECT_EQ(g.rank_bound(), 2);
  EXPECT_EQ(g.stream_bound(), 2);
  EXPECT_EQ(g.present_ranks(), (std::vector<int>{0, 1}));
  EXPECT_TRUE(g.validate().has_value());
}

TEST(TaskGraph, StreamNamesDefaultToStreamN) {
  TaskGraph g;
  g.set_stream_name(1, "tp-comm");
  EXPECT_EQ(g.stream_name(1), "tp-comm");
  EXPECT_EQ(g.stream_name(0), "stream 0");
  EXPECT_EQ(g.stream_name(3), "stream 3");
}

TEST(TaskGraph, ExplicitCycleIsReportedWithTheTasksOnIt) {
  TaskGraph g;
  const TaskId a = g.add_compute(0, 0, TC::forward, "a", milliseconds(1));
  const TaskId b = g.add_compute(0, 1, TC::forward, "b", milliseconds(1));
  const TaskId c = g.add_compute(1, 0, TC::forward, "c", milliseconds(1));
  g.precede(a, b);
  g.precede(b, c);
  g.precede(c, a);
  const std::string e = error_of(g);
  EXPECT_NE(e.find("dependency cycle"), std::string::npos) << e;
  EXPECT_NE(e.find("'a'"), std::string::npos) << e;
  EXPECT_NE(e.find("'b'"), std::string::npos) << e;
  EXPECT_NE(e.find("'c'"), std::string::npos) << e;
}

TEST(TaskGraph, CycleThroughStreamOrderIsFound) {
  // Stream order makes b wait for a (same rank and stream); the explicit edge b -> a closes a
  // cycle.
  TaskGraph g;
  const TaskId a = g.add_compute(0, 0, TC::forward, "a", milliseconds(1));
  const TaskId b = g.add_compute(0, 0, TC::forward, "b", milliseconds(1));
  g.precede(b, a);
  EXPECT_NE(error_of(g).find("dependency cycle"), std::string::npos);
}

TEST(TaskGraph, SendRecvOrderDeadlockIsACycle) {
  // Both ranks send first and then receive, on one stream each. NCCL send blocks until the peer's
  // recv runs: rank 0's send waits for rank 1's recv, which waits (stream order) for rank 1's send,
  // which waits for rank 0's recv, which waits for rank 0's send. A cycle through the rendezvous.
  TaskGraph g;
  g.add_send(0, 0, TC::pp_comm, "s01", 1, MiB(1));
  g.add_recv(0, 0, TC::pp_comm, "r10", 1, MiB(1));
  g.add_send(1, 0, TC::pp_comm, "s10", 0, MiB(1));
  g.add_recv(1, 0, TC::pp_comm, "r01", 0, MiB(1));
  EXPECT_NE(error_of(g).find("would deadlock"), std::string::npos) << error_of(g);
}

TEST(TaskGraph, CollectivesIssuedInDifferentOrdersDeadlock) {
  // Rank 0 runs instance 1 then 2 on one stream, rank 1 runs 2 then 1: each waits for the other.
  TaskGraph g;
  const std::vector<int> grp{0, 1};
  g.add_collective(0, 0, TC::dp_comm, "x", CollOp::all_reduce, grp, MiB(1), 1);
  g.add_collective(0, 0, TC::dp_comm, "y", CollOp::all_reduce, grp, MiB(1), 2);
  g.add_collective(1, 0, TC::dp_comm, "y", CollOp::all_reduce, grp, MiB(1), 2);
  g.add_collective(1, 0, TC::dp_comm, "x", CollOp::all_reduce, grp, MiB(1), 1);
  EXPECT_NE(error_of(g).find("would deadlock"), std::string::npos) << error_of(g);
}

TEST(TaskGraph, EdgeBetweenTwoPartsOfOneCollectiveIsADeadlock) {
  TaskGraph g;
  const std::vector<int> grp{0, 1};
  const TaskId a = g.add_collective(0, 0, TC::dp_comm, "x", CollOp::all_reduce, grp, MiB(1), 1);
  const TaskId b = g.add_collective(1, 0, TC::dp_comm, "x", CollOp::all_reduce, grp, MiB(1), 1);
  g.precede(a, b);
  EXPECT_NE(error_of(g).find("same collective or transfer"), std::string::npos) << error_of(g);
}

TEST(TaskGraph, DanglingAndSelfDependenciesAreRejected) {
  TaskGraph g;
  const TaskId a = g.add_compute(0, 0, TC::forward, "a", milliseconds(1));
  g.precede(a, 99);
  EXPECT_EQ(error_of(g),
            "task graph: dependency 0 -> 99 names a task that does not exist (1 tasks)");
  TaskGraph h;
  const TaskId x = h.add_compute(0, 0, TC::forward, "x", milliseconds(1));
  h.precede(x, x);
  EXPECT_EQ(error_of(h), "task graph: task 0 (compute on rank 0, stream 0, 'x') depends on itself");
}

TEST(TaskGraph, UnmatchedSendIsAnErrorOnlyWhenThePeerIsPresent) {
  TaskGraph g;
  g.add_send(0, 1, TC::pp_comm, "send act", 1, MiB(1), 5);
  // Rank 1 has no task at all: symmetric fast path, the send runs as if rank 1 were ready.
  EXPECT_TRUE(g.validate().has_value());
  // Now rank 1 is present but receives with another tag: the send has no partner.
  g.add_recv(1, 1, TC::pp_comm, "recv act", 0, MiB(1), 6);
  EXPECT_EQ(error_of(g),
            "task graph: task 0 (send on rank 0, stream 1, 'send act'): no matching recv on rank 1 "
            "(tag 5) "
            "although rank 1 is in the graph");
}

TEST(TaskGraph, MatchedTransferMustAgreeOnBytes) {
  TaskGraph g;
  g.add_send(0, 1, TC::pp_comm, "s", 1, bytes(100));
  g.add_recv(1, 1, TC::pp_comm, "r", 0, bytes(200));
  EXPECT_NE(error_of(g).find("sends 100.000000 bytes"), std::string::npos) << error_of(g);
}

TEST(TaskGraph, CollectiveParticipantsMustAgree) {
  const std::vector<int> grp{0, 1, 2, 3};
  {
    TaskGraph g;
    g.add_collective(0, 0, TC::dp_comm, "ar", CollOp::all_reduce, grp, MiB(1), 3);
    g.add_collective(1, 0, TC::dp_comm, "ar", CollOp::all_gather, grp, MiB(1), 3);
    EXPECT_NE(error_of(g).find("runs all_gather but"), std::string::npos) << error_of(g);
  }
  {
    TaskGraph g;
    g.add_collective(0, 0, TC::dp_comm, "ar", CollOp::all_reduce, grp, MiB(1), 3);
    g.add_collective(1, 0, TC::dp_comm, "ar", CollOp::all_reduce, grp, MiB(2), 3);
    EXPECT_NE(error_of(g).find("has 2097152.000000 bytes but"), std::string::npos) << error_of(g);
  }
  {
    TaskGraph g;
    const std::vector<int> other{0, 1};
    g.add_collective(0, 0, TC::dp_comm, "ar", CollOp::all_reduce, grp, MiB(1), 3);
    g.add_collective(1, 0, TC::dp_comm, "ar", CollOp::all_reduce, other, MiB(1), 3);
    EXPECT_NE(error_of(g).find("different rank group"), std::string::npos) << error_of(g);
  }
  {
    TaskGraph g;
    g.add_collective(5, 0, TC::dp_comm, "ar", CollOp::all_reduce, grp, MiB(1), 3);
    EXPECT_NE(error_of(g).find("outside its group"), std::string::npos) << error_of(g);
  }
  {
    TaskGraph g;
    g.add_collective(1, 0, TC::dp_comm, "ar", CollOp::all_reduce, grp, MiB(1), 3);
    g.add_collective(1, 1, TC::dp_comm, "ar", CollOp::all_reduce, grp, MiB(1), 3);
    EXPECT_NE(error_of(g).find("second task of its rank"), std::string::npos) << error_of(g);
  }
}

TEST(TaskGraph, SymmetricSubsetOfACollectiveIsValid) {
  // Only rank 0 of the group {0..7} is in the graph: allowed (the others are absent, not late).
  TaskGraph g;
  const std::vector<int> grp{0, 1, 2, 3, 4, 5, 6, 7};
  g.add_collective(0, 2, TC::dp_comm, "ar", CollOp::all_reduce, grp, MiB(1), 1);
  EXPECT_TRUE(g.validate().has_value()) << error_of(g);
}

}  // namespace
}  // namespace scalescope
