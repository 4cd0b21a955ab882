// `scalescope plan --mpi`: one plan search whose candidate plans are simulated across the ranks of an MPI job
// (work_split.hpp). Every rank loads the same inputs and enumerates the same candidates; rank 0 runs the
// search (bound, ranking, flow confirmation) and hands out each chunk's candidates by index; the others
// simulate the ones they are given. The result equals the one-process search's.
#pragma once

#include "scalescope/planner/plan_run.hpp"
#include "scalescope/planner/work_split.hpp"

namespace scalescope::planner {

/// On rank 0: the search's result (as run_plan). On other ranks: a PlanRun whose `result` is empty, after
/// serving rank 0 until it finishes. `transport` of one rank: run_plan.
Expected<PlanRun> run_plan_distributed(const PlanRequest& request, SearchOptions options, const StackApply& stack,
                                       Transport& transport);

/// A ranked plan as exact bytes and back (doubles round-trip), for moving it between ranks.
std::string encode_ranked(const RankedPlan& r);
std::optional<RankedPlan> decode_ranked(const std::string& bytes);

}  // namespace scalescope::planner
