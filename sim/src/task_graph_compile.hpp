// Private: the execution form of a TaskGraph (CSR successors, stream chains, matched transfers,
// collective participants), shared by TaskGraph::validate() and simulate().
#pragma once

#include <cstdint>
#include <vector>

#include "scalescope/sim/task_graph.hpp"

namespace scalescope::detail {

struct CompiledGraph {
  // Explicit successors in CSR form: succ[succ_offset[t] .. succ_offset[t+1]).
  std::vector<std::uint32_t> succ_offset;
  std::vector<TaskId> succ;
  // Number of tasks each task waits for: explicit predecessors + 1 if it has a stream predecessor.
  std::vector<std::uint32_t> num_preds;
  // Next task on the same (rank, stream), or kNoTask.
  std::vector<TaskId> stream_next;
  // send <-> recv partner of a matched transfer, kNoTask for a solo transfer (peer absent) and
  // non-transfers.
  std::vector<TaskId> partner;
  // Participants of collective instance i: instance_tasks[instance_offset[i] ..
  // instance_offset[i+1]), by rank.
  std::vector<std::uint32_t> instance_offset;
  std::vector<TaskId> instance_tasks;
  // present[r] != 0 when rank r runs at least one task (size: graph.rank_bound()).
  std::vector<char> present;
};

/// Builds the execution form: checks dependency ids and matches transfers; with
/// check_instances, also that every collective instance is consistent (op, bytes, group, ranks).
Expected<CompiledGraph> compile(const TaskGraph& graph, bool check_instances);

/// Finds a cycle through dependencies, stream order and rendezvous (a collective instance or a
/// matched transfer counts as one node), which would deadlock; the error lists tasks on it.
Expected<bool> check_cycles(const TaskGraph& graph, const CompiledGraph& compiled);

}  // namespace scalescope::detail
