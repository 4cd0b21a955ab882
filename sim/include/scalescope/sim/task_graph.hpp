// Per-rank task graph of one training iteration: compute, collective, send/recv and delay tasks
// on per-rank streams with explicit dependencies (described here, executed by simulator.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "scalescope/sim/collective_types.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope {

/// Dense task index, in insertion order (0, 1, 2, ...).
using TaskId = std::uint32_t;
inline constexpr TaskId kNoTask = std::numeric_limits<TaskId>::max();
/// Dense index of an interned rank group (see TaskGraph::intern_group).
using GroupId = std::uint32_t;

enum class TaskKind : std::uint8_t { compute, collective, send, recv, delay };
inline constexpr int kNumTaskKinds = 5;

/// What a task counts as in the breakdown. forward..optimizer and `other` on compute/delay tasks
/// are compute-like; tp_comm..ep_comm and `other` on collective/send/recv tasks are communication;
/// `host` marks the framework's host thread issuing kernels (host_dispatch.hpp), not GPU work.
enum class TaskCategory : std::uint8_t {
  forward,
  backward,
  recompute,
  optimizer,
  tp_comm,
  sp_comm,
  dp_comm,
  zero_comm,
  pp_comm,
  cp_comm,  ///< context-parallel attention exchanges (K/V ring, all-gather, Ulysses all-to-all)
  ep_comm,  ///< expert-parallel token dispatch and combine (MoE all-to-all / all-gather, expert-TP)
  other,
  host
};
inline constexpr int kNumTaskCategories = 13;

const char* task_kind_name(TaskKind k);
const char* task_category_name(TaskCategory c);

/// Optional indices a builder attaches to a task (for traces and statistics); -1 = not set.
struct TaskLabels {
  std::int32_t microbatch = -1;
  std::int16_t layer = -1;
  std::int16_t stage = -1;
};

/// One task, stored by value in one vector (no per-task heap allocation). 56 bytes.
struct Task {
  double amount = 0.0;     ///< compute/delay: duration in seconds; collective/send/recv: bytes
  double flops = 0.0;      ///< compute: floating-point operations (statistics only)
  double mem_bytes = 0.0;  ///< compute: HBM bytes moved (statistics only)
  std::int32_t rank = 0;   ///< global rank that runs the task
  std::uint32_t name = 0;  ///< index into TaskGraph::name(); names are interned
  std::uint32_t a = 0;     ///< collective: GroupId; send/recv: peer rank
  std::uint32_t b = 0;     ///< collective: instance slot (dense); send/recv: tag
  TaskLabels labels;
  TaskKind kind = TaskKind::compute;
  TaskCategory category = TaskCategory::other;
  std::uint8_t stream = 0;  ///< per-rank stream; tasks on one (rank, stream) run in insertion order
  CollOp op = CollOp::all_reduce;  ///< collective only

  Seconds duration() const { return Seconds(amount); }
  Bytes bytes() const { return Bytes(amount); }
  bool is_comm() const {
    return kind == TaskKind::collective || kind == TaskKind::send || kind == TaskKind::recv;
  }
};

/// A per-rank task graph. Semantics (like CUDA streams + events, NCCL blocking collectives):
///  - Tasks on the same (rank, stream) run one at a time in insertion order.
///  - precede(a, b): b starts only after a has finished (any ranks, any streams).
///  - A collective instance (builder-chosen 64-bit key, shared by the participating ranks'
///    tasks) starts when ALL of its participating tasks PRESENT in the graph are ready; all of
///    them end together.
///  - A send (rank r -> peer p, tag t) and a recv (rank p <- peer r, tag t) form one transfer;
///    several sends with the same (r, p, t) match recvs in insertion order. The transfer starts
///    when both are ready.
///  - Symmetric fast path: a builder may put only a representative subset of ranks into the
///    graph. A collective whose other participants are absent starts as soon as the present ones
///    are ready and costs what the full group costs; a send/recv whose peer rank has no task at
///    all in the graph runs as if the peer were ready. A rank is "present" when at least one
///    task runs on it.
class TaskGraph {
 public:
  /// Compute task: a fixed duration, plus optional FLOPs / HBM bytes for statistics.
  TaskId add_compute(int rank, int stream, TaskCategory category, std::string_view name,
                     Seconds duration, TaskLabels labels = {}, Flops flops = Flops(0),
                     Bytes mem_bytes = Bytes(0));
  /// A compute task's own interference factors, for SimOptions::interference: its time multiplier
  /// while communication runs on its rank (`slowed`), and the multiplier it puts on that
  /// communication (`slows`). 0 = the simulation's factors.
  struct TaskInterference {
    float slowed = 0.0f;
    float slows = 0.0f;
  };
  /// Gives compute task `t` its own factors (both > 0), which replace SimOptions::interference's
  /// for it when the simulation applies interference. Kept beside the tasks (graphs without them
  /// store nothing).
  void set_interference(TaskId t, double slowed, double slows);
  /// Task `t`'s own factors ({0, 0} when it has none).
  TaskInterference interference(TaskId t) const {
    return t < interference_.size() ? interference_[t] : TaskInterference{};
  }
  /// True when some task has its own interference factors.
  bool has_task_interference() const { return !interference_.empty(); }
  /// What a compute task's kernels draw (models/compute_model.hpp, PowerModel): their energy beyond the GPU's idle
  /// draw (J) and the device time of the tensor-core kernels among them, which a power-capped clock stretches.
  struct TaskPower {
    double energy_j = 0.0;
    double tensor_s = 0.0;
  };
  /// Gives compute task `t` its energy and tensor time (both >= 0). Kept beside the tasks (graphs without them
  /// store nothing).
  void set_power(TaskId t, double energy_j, double tensor_s);
  TaskPower power(TaskId t) const { return t < power_.size() ? power_[t] : TaskPower{}; }
  bool has_task_power() const { return !power_.empty(); }
  /// Sets compute task `t`'s duration (>= 0): the power cap's second pass (models/predict.cpp) stretches tasks.
  void set_compute_duration(TaskId t, Seconds duration);
  /// A stream-occupying wait of fixed duration (launch overhead, straggler, host work).
  TaskId add_delay(int rank, int stream, TaskCategory category, std::string_view name,
                   Seconds duration, TaskLabels labels = {});
  /// One rank's part of collective instance `instance`: `group` is the GLOBAL rank group (every
  /// participant, also those absent from the graph) and must contain `rank`; `bytes` follows
  /// nccl-tests size semantics (whole buffer for all_gather / reduce_scatter / alltoall).
  TaskId add_collective(int rank, int stream, TaskCategory category, std::string_view name,
                        CollOp op, GroupId group, Bytes bytes, std::uint64_t instance,
                        TaskLabels labels = {});
  TaskId add_collective(int rank, int stream, TaskCategory category, std::string_view name,
                        CollOp op, std::span<const int> group, Bytes bytes, std::uint64_t instance,
                        TaskLabels labels = {});
  TaskId add_send(int rank, int stream, TaskCategory category, std::string_view name, int peer,
                  Bytes bytes, std::uint32_t tag = 0, TaskLabels labels = {});
  TaskId add_recv(int rank, int stream, TaskCategory category, std::string_view name, int peer,
                  Bytes bytes, std::uint32_t tag = 0, TaskLabels labels = {});
  /// b waits for a. Ids are checked by validate(), not here.
  void precede(TaskId a, TaskId b);

  /// Interns a rank group (order matters: it is the ring order a collective model may use).
  GroupId intern_group(std::span<const int> ranks);
  std::span<const int> group(GroupId g) const;
  std::size_t num_groups() const { return group_offsets_.size() - 1; }
  /// Declares that every collective on `g` runs at the same time as the same collective (op, size)
  /// on each of `siblings`: groups of other ranks doing the same work in lockstep, such as the
  /// data-parallel groups of the other tensor-parallel ranks of a pipeline stage. Siblings need not
  /// be present in the graph. Analytical costs then share links with them (see
  /// CollectiveModel::analytical_concurrent); flow fidelity runs what is present and ignores this.
  /// Replaces an earlier declaration for `g`.
  void set_concurrent(GroupId g, std::vector<GroupId> siblings);
  /// The siblings declared for `g` (empty if none).
  std::span<const GroupId> concurrent(GroupId g) const;

  /// Marks compute task `t` as a host synchronisation point: the host thread that issues its rank's kernels reads a
  /// result of `t` back (a device-to-host copy of sizes, such as an MoE token dispatcher's split sizes) and issues
  /// nothing more until `t` has finished. Only host dispatch (host_dispatch.hpp) reads the marks; a graph without
  /// host dispatch runs as if the host were always ahead. Marking a task twice marks it once.
  void mark_host_sync(TaskId t);
  /// The marked tasks, ascending.
  std::span<const TaskId> host_syncs() const { return host_syncs_; }

  /// Names a stream for traces ("compute", "tp-comm", ...); unnamed streams print as "stream N".
  void set_stream_name(int stream, std::string name);
  std::string stream_name(int stream) const;

  /// Reserves storage when the builder knows the sizes (optional).
  void reserve(std::size_t tasks, std::size_t edges);

  std::size_t size() const { return tasks_.size(); }
  const Task& task(TaskId id) const { return tasks_[id]; }
  std::span<const Task> tasks() const { return tasks_; }
  const std::string& name(std::uint32_t name_index) const { return names_[name_index]; }
  const std::string& task_name(TaskId id) const { return names_[tasks_[id].name]; }
  /// Explicit dependency edges (from, to) in insertion order.
  struct Edge {
    TaskId from;
    TaskId to;
  };
  std::span<const Edge> edges() const { return edges_; }
  /// Number of distinct collective instances (dense slots 0..n-1, in order of first appearance).
  std::size_t num_collective_instances() const { return instance_keys_.size(); }
  std::uint64_t collective_instance_key(std::uint32_t slot) const { return instance_keys_[slot]; }
  /// Ranks that run at least one task, ascending.
  std::vector<int> present_ranks() const;
  /// 1 + the highest rank referenced by any task, peer or group (0 for an empty graph).
  int rank_bound() const { return rank_bound_; }
  /// 1 + the highest stream used (0 for an empty graph).
  int stream_bound() const { return stream_bound_; }

  /// Checks the graph: dependency ids in range, no self edge, a collective's rank inside its group,
  /// every participant of an instance agreeing on op / bytes / group, at most one task per rank per
  /// instance, sends and recvs matched when both ranks are present (same bytes), and no cycle,
  /// counting stream order and the rendezvous of collectives and transfers (which would deadlock).
  /// Errors name the task.
  Expected<bool> validate() const;

  /// "task 17 (rank 3, stream 1, 'fwd L3')" for messages.
  std::string describe(TaskId id) const;

 private:
  TaskId push(Task t, std::string_view name);
  std::uint32_t intern_name(std::string_view name);

  std::vector<Task> tasks_;
  std::vector<Edge> edges_;
  std::vector<TaskInterference> interference_;  ///< by TaskId, up to the last task that has factors
  std::vector<TaskPower> power_;                ///< by TaskId, up to the last task that has them
  std::vector<TaskId> host_syncs_;  ///< mark_host_sync, ascending
  std::vector<std::string> names_;
  struct NameHash {  // transparent: look names up by string_view without building a std::string
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> name_index_;
  std::vector<int> group_ranks_;
  std::vector<std::uint32_t> group_offsets_{0};
  std::unordered_map<std::string, GroupId> group_index_;  // key: the ranks' bytes
  std::vector<std::vector<GroupId>> concurrent_;          // by GroupId; shorter when none declared
  std::vector<std::uint64_t> instance_keys_;
  std::unordered_map<std::uint64_t, std::uint32_t> instance_slot_;
  std::vector<std::string> stream_names_;
  int rank_bound_ = 0;
  int stream_bound_ = 0;
};

}  // namespace scalescope
