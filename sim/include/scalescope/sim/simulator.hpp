// Executes a TaskGraph on a cluster (analytical or flow fidelity) and reports the step time,
// per-rank statistics and the time breakdown; observers (trace, statistics, GUI) watch the run.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/task_graph.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope {

class Cluster;
class CollectiveModel;

enum class Fidelity : std::uint8_t {
  /// Collectives take CollectiveModel::analytical(...).time (cached per (op, group, bytes)); a
  /// send/recv takes CollectiveModel::analytical(sendrecv, {src, dst}, bytes).time. Tasks do
  /// not contend with each other.
  analytical,
  /// Collectives run as flows (CollectiveModel::start) and a send/recv as p2p_channels flows on
  /// the real route, all on one shared FlowNetwork, so traffic of different tasks shares links by
  /// max-min fairness.
  flow,
};
const char* fidelity_name(Fidelity f);

/// When each task ran, in simulator clock ns; -1 where it never got there.
struct TaskTiming {
  SimTime ready =
      -1;  ///< its dependencies were done and it held its stream (communication: it arrived)
  SimTime start = -1;  ///< it began to run (communication: every present peer had arrived)
  SimTime end = -1;
};

/// Watches a simulation. Callbacks come in simulated-time order (ties in a deterministic order)
/// from the thread that runs simulate(). Observers must not throw.
class SimObserver {
 public:
  virtual ~SimObserver() = default;
  virtual void simulation_started(const TaskGraph& /*graph*/) {}
  /// A collective/send/recv task arrived and waits for peers (only called when it has to wait).
  virtual void task_waiting(int /*rank*/, int /*stream*/, TaskId, SimTime) {}
  virtual void task_started(int /*rank*/, int /*stream*/, TaskId, SimTime) {}
  virtual void task_finished(int /*rank*/, int /*stream*/, TaskId, SimTime) {}
  /// After the last task; `step_end` is the step time.
  virtual void simulation_finished(SimTime /*step_end*/) {}
};

/// Where a rank's time goes. At every instant of [0, step time) a rank is in exactly one part:
///  1. If compute-like tasks run on it (compute/delay tasks of category forward, backward,
///     recompute, optimizer; other -> other_compute), the instant belongs to their categories.
///  2. Else, if communication tasks move data on it (collective/send/recv between start and end;
///     the wait for peers before start does not count), it is EXPOSED communication of their
///     kinds (category tp/sp/dp/zero/pp/cp_comm; anything else -> other_comm).
///  3. Else, if the rank's host thread is still issuing kernels (host tasks, host_dispatch.hpp),
///     it is host_wait: the GPU idles because the framework cannot launch work fast enough.
///  4. Else it is bubble: nothing runs (pipeline bubble, waiting for peers, idle after the
///     rank's last task until the step ends).
/// When several categories are active at once in rule 1 or 2, the instant is split EQUALLY among
/// the distinct active categories (two dp all-reduces count once for dp; a tp and a dp transfer
/// split 1/2 each). So the parts always sum to `total`, the step time.
enum class BreakdownPart : std::uint8_t {
  forward,
  backward,
  recompute,
  optimizer,
  other_compute,
  tp_comm,
  sp_comm,
  dp_comm,
  zero_comm,
  pp_comm,
  cp_comm,
  ep_comm,
  other_comm,
  host_wait,
  bubble
};
inline constexpr int kNumBreakdownParts = 15;
const char* breakdown_part_name(BreakdownPart p);

struct Breakdown {
  std::array<Seconds, kNumBreakdownParts> parts{};
  Seconds total;  ///< the step time

  Seconds operator[](BreakdownPart p) const { return parts[static_cast<std::size_t>(p)]; }
  Seconds& operator[](BreakdownPart p) { return parts[static_cast<std::size_t>(p)]; }
  /// forward + backward + recompute (model compute).
  Seconds compute() const;
  /// All compute-like parts (compute() + optimizer + other_compute).
  Seconds all_compute() const;
  /// Sum of the exposed communication parts.
  Seconds exposed_comm() const;
  Seconds sum() const;  ///< of all parts; equals total up to rounding
};

struct RankStats {
  int rank = 0;
  SimTime end = 0;  ///< when its last task finished
  /// Per TaskCategory, the sum of the durations (start to end) of its tasks; overlapping tasks
  /// both count.
  std::array<Seconds, kNumTaskCategories> busy{};
  double flops = 0.0;       ///< sum over its compute tasks
  double comm_bytes = 0.0;  ///< sum of the bytes of its collective and send tasks
  Breakdown breakdown;
};

struct SimResult {
  Fidelity fidelity = Fidelity::analytical;
  SimTime step_ns = 0;  ///< max end over ranks
  Seconds step_time;    ///< the same, in seconds
  /// The rank that finishes last (lowest rank on ties); -1 for an empty graph.
  int critical_rank = -1;
  std::vector<RankStats> ranks;  ///< one per present rank, ascending rank
  Breakdown breakdown;           ///< of the critical rank
  Breakdown mean_breakdown;      ///< mean over present ranks (each rank's total is the step time)
  std::vector<TaskTiming> task_times;  ///< by TaskId when SimOptions::record_task_times, else empty
  std::uint64_t events = 0;            ///< engine events fired

  const RankStats* rank_stats(int rank) const;
};

/// Compute-communication interference, as measured on one GPU type (calibration profile section
/// `interference`, docs/profile-format.md). NCCL's kernels take SMs and HBM bandwidth from the
/// compute beside them, and the other way round. Applied to communication whose ranks all sit in
/// one node (NVLink) and that is costed analytically: while such a collective or transfer runs on a
/// rank, that rank's compute tasks progress at 1/compute_slowdown of their speed; while any of its
/// ranks runs a compute task, the communication progresses at 1/comm_slowdown. A compute task with
/// its own factors (TaskGraph::set_interference; the model builders set them from per-kernel
/// measurements) uses those instead, also when these are 1 (a communication beside several compute
/// tasks takes the largest). Inter-node (NIC) communication is left alone: nothing measured says
/// how much it takes. 1.0 = no interference.
struct Interference {
  double compute_slowdown = 1.0;
  double comm_slowdown = 1.0;
  bool active() const { return compute_slowdown != 1.0 || comm_slowdown != 1.0; }
};

struct SimOptions {
  Fidelity fidelity = Fidelity::analytical;
  /// Not owned; called in order. The statistics are always collected (SimResult).
  std::vector<SimObserver*> observers;
  /// Keep per-task ready/start/end times in SimResult::task_times (24 bytes per task).
  bool record_task_times = false;
  /// TaskGraph::validate()-level checks: collective instances checked before the run, and a run
  /// that deadlocks reports the dependency cycle (a cycle always deadlocks the run, so it is
  /// searched only then). Without it, the run still matches sends to recvs and reports a deadlock
  /// naming one stuck task. Costs ~15% of a symmetric analytical run.
  bool validate = true;
  /// Flow fidelity only: collectives and send/recv whose ranks all sit in one node use analytical
  /// times and do not contend with other traffic. An approximation (intra-node NVLink traffic
  /// still meets PXN-routed inter-node traffic in reality) that makes TP-heavy graphs of all ranks
  /// tractable: TP all-reduces as flows cost ~100 flow events each. Off by default.
  bool analytical_intra_node = false;
  /// Collectives costed analytically share links with the sibling groups the graph declares
  /// (TaskGraph::set_concurrent), so that e.g. the data-parallel all-reduces of all tensor-parallel
  /// ranks split the node's NICs as they do when all ranks run. Off: every collective has the
  /// network to itself (the model before 2026-11; kept for comparison).
  bool concurrent_collectives = true;
  /// Default: none. Factors must be finite and positive (simulate() rejects others).
  Interference interference;
};

/// Runs one iteration. Deterministic: the same inputs give the same result. Thread-safe for
/// different calls (all state is local; graph, cluster and model are only read). Errors: an invalid
/// graph (input; a dependency cycle is found when the run deadlocks, so observers may have seen
/// part of the run) or a run that deadlocks or stalls (runtime), naming a stuck task.
Expected<SimResult> simulate(const TaskGraph& graph, const Cluster& cluster,
                             const CollectiveModel& model, const SimOptions& options = {});

}  // namespace scalescope
