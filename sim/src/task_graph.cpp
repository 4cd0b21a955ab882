// Task graph storage: adding tasks, interning names and rank groups, descriptions.
#include "scalescope/sim/task_graph.hpp"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "task_graph_compile.hpp"

namespace scalescope {

const char* task_kind_name(TaskKind k) {
  switch (k) {
    case TaskKind::compute:
      return "compute";
    case TaskKind::collective:
      return "collective";
    case TaskKind::send:
      return "send";
    case TaskKind::recv:
      return "recv";
    case TaskKind::delay:
      return "delay";
  }
  return "?";
}

const char* task_category_name(TaskCategory c) {
  switch (c) {
    case TaskCategory::forward:
      return "forward";
    case TaskCategory::backward:
      return "backward";
    case TaskCategory::recompute:
      return "recompute";
    case TaskCategory::optimizer:
      return "optimizer";
    case TaskCategory::tp_comm:
      return "tp_comm";
    case TaskCategory::sp_comm:
      return "sp_comm";
    case TaskCategory::dp_comm:
      return "dp_comm";
    case TaskCategory::zero_comm:
      return "zero_comm";
    case TaskCategory::pp_comm:
      return "pp_comm";
    case TaskCategory::cp_comm:
      return "cp_comm";
    case TaskCategory::ep_comm:
      return "ep_comm";
    case TaskCategory::other:
      return "other";
    case TaskCategory::host:
      return "host";
  }
  return "?";
}

std::uint32_t TaskGraph::intern_name(std::string_view name) {
  // Builders reuse a few names many times: look up without allocating when possible.
  if (!names_.empty() && names_.back() == name)
    return static_cast<std::uint32_t>(names_.size() - 1);
  auto it = name_index_.find(name);
  if (it != name_index_.end()) return it->second;
  const auto idx = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(name);
  name_index_.emplace(std::string(name), idx);
  return idx;
}

TaskId TaskGraph::push(Task t, std::string_view name) {
  assert(t.rank >= 0 && "TaskGraph: rank must be >= 0");
  assert(tasks_.size() < kNoTask && "TaskGraph: too many tasks");
  t.name = intern_name(name);
  rank_bound_ = std::max(rank_bound_, t.rank + 1);
  stream_bound_ = std::max(stream_bound_, static_cast<int>(t.stream) + 1);
  tasks_.push_back(t);
  return static_cast<TaskId>(tasks_.size() - 1);
}

namespace {
Task make_task(int rank, int stream, TaskCategory category, TaskKind kind, double amount,
               TaskLabels labels) {
  assert(stream >= 0 && stream < 256 && "TaskGraph: stream must be in 0..255");
  Task t;
  t.rank = rank;
  t.stream = static_cast<std::uint8_t>(stream);
  t.category = category;
  t.kind = kind;
  t.amount = amount;
  t.labels = labels;
  return t;
}
}  // namespace

TaskId TaskGraph::add_compute(int rank, int stream, TaskCategory category, std::string_view name,
                              Seconds duration, TaskLabels labels, Flops flops, Bytes mem_bytes) {
  assert(duration.value >= 0.0 && "TaskGraph: negative compute duration");
  Task t = make_task(rank, stream, category, TaskKind::compute, duration.value, labels);
  t.flops = flops.value;
  t.mem_bytes = mem_bytes.value;
  return push(t, name);
}

void TaskGraph::set_interference(TaskId t, double slowed, double slows) {
  assert(tasks_[t].kind == TaskKind::compute && "TaskGraph: interference factors are for compute tasks");
  assert(slowed > 0.0 && slows > 0.0 && "TaskGraph: interference factors must be positive");
  if (interference_.size() <= t) interference_.resize(static_cast<std::size_t>(t) + 1);
  interference_[t] = {static_cast<float>(slowed), static_cast<float>(slows)};
}

void TaskGraph::set_power(TaskId t, double energy_j, double tensor_s) {
  assert(tasks_[t].kind == TaskKind::compute && "TaskGraph: power is for compute tasks");
  assert(energy_j >= 0.0 && tensor_s >= 0.0 && "TaskGraph: energy and tensor time must be non-negative");
  if (power_.size() <= t) power_.resize(static_cast<std::size_t>(t) + 1);
  power_[t] = {energy_j, tensor_s};
}

void TaskGraph::set_compute_duration(TaskId t, Seconds duration) {
  assert(tasks_[t].kind == TaskKind::compute && "TaskGraph: only compute tasks are stretched");
  assert(duration.value >= 0.0 && "TaskGraph: negative duration");
  tasks_[t].amount = duration.value;
}

TaskId TaskGraph::add_delay(int rank, int stream, TaskCategory category, std::string_view name,
                            Seconds duration, TaskLabels labels) {
  assert(duration.value >= 0.0 && "TaskGraph: negative delay");
  return push(make_task(rank, stream, category, TaskKind::delay, duration.value, labels), name);
}

TaskId TaskGraph::add_collective(int rank, int stream, TaskCategory category, std::string_view name,
                                 CollOp op, GroupId group, Bytes bytes, std::uint64_t instance,
                                 TaskLabels labels) {
  assert(group < num_groups() && "TaskGraph: unknown GroupId");
  assert(bytes.value >= 0.0 && "TaskGraph: negative collective size");
  Task t = make_task(rank, stream, category, TaskKind::collective, bytes.value, labels);
  t.op = op;
  t.a = group;
  auto [it, inserted] =
      instance_slot_.try_emplace(instance, static_cast<std::uint32_t>(instance_keys_.size()));
  if (inserted) instance_keys_.push_back(instance);
  t.b = it->second;
  return push(t, name);
}

TaskId TaskGraph::add_collective(int rank, int stream, TaskCategory category, std::string_view name,
                                 CollOp op, std::span<const int> group, Bytes bytes,
                                 std::uint64_t instance, TaskLabels labels) {
  return add_collective(rank, stream, category, name, op, intern_group(group), bytes, instance,
                        labels);
}

TaskId TaskGraph::add_send(int rank, int stream, TaskCategory category, std::string_view name,
                           int peer, Bytes bytes, std::uint32_t tag, TaskLabels labels) {
  assert(peer >= 0 && "TaskGraph: peer rank must be >= 0");
  Task t = make_task(rank, stream, category, TaskKind::send, bytes.value, labels);
  t.a = static_cast<std::uint32_t>(peer);
  t.b = tag;
  rank_bound_ = std::max(rank_bound_, peer + 1);
  return push(t, name);
}

TaskId TaskGraph::add_recv(int rank, int stream, TaskCategory category, std::string_view name,
                           int peer, Bytes bytes, std::uint32_t tag, TaskLabels labels) {
  assert(peer >= 0 && "TaskGraph: peer rank must be >= 0");
  Task t = make_task(rank, stream, category, TaskKind::recv, bytes.value, labels);
  t.a = static_cast<std::uint32_t>(peer);
  t.b = tag;
  rank_bound_ = std::max(rank_bound_, peer + 1);
  return push(t, name);
}

void TaskGraph::precede(TaskId a, TaskId b) { edges_.push_back(Edge{a, b}); }

GroupId TaskGraph::intern_group(std::span<const int> ranks) {
  std::string key(ranks.size() * sizeof(int), '\0');
  if (!ranks.empty()) std::memcpy(key.data(), ranks.data(), key.size());
  auto it = group_index_.find(key);
  if (it != group_index_.end()) return it->second;
  const auto id = static_cast<GroupId>(num_groups());
  for (int r : ranks) {
    assert(r >= 0 && "TaskGraph: group ranks must be >= 0");
    rank_bound_ = std::max(rank_bound_, r + 1);
  }
  group_ranks_.insert(group_ranks_.end(), ranks.begin(), ranks.end());
  group_offsets_.push_back(static_cast<std::uint32_t>(group_ranks_.size()));
  group_index_.emplace(std::move(key), id);
  return id;
}

std::span<const int> TaskGraph::group(GroupId g) const {
  assert(g < num_groups() && "TaskGraph: unknown GroupId");
  return std::span<const int>(group_ranks_)
      .subspan(group_offsets_[g], group_offsets_[g + 1] - group_offsets_[g]);
}

void TaskGraph::mark_host_sync(TaskId t) {
  const auto at = std::lower_bound(host_syncs_.begin(), host_syncs_.end(), t);
  if (at == host_syncs_.end() || *at != t) host_syncs_.insert(at, t);
}

void TaskGraph::set_concurrent(GroupId g, std::vector<GroupId> siblings) {
  assert(g < num_groups() && "TaskGraph: unknown GroupId");
  for ([[maybe_unused]] GroupId s : siblings) assert(s < num_groups() && s != g && "TaskGraph: bad sibling group");
  if (concurrent_.size() <= g) concurrent_.resize(static_cast<std::size_t>(g) + 1);
  concurrent_[g] = std::move(siblings);
}

std::span<const GroupId> TaskGraph::concurrent(GroupId g) const {
  if (g >= concurrent_.size()) return {};
  return concurrent_[g];
}

void TaskGraph::set_stream_name(int stream, std::string name) {
  assert(stream >= 0 && stream < 256 && "TaskGraph: stream must be in 0..255");
  if (stream_names_.size() <= static_cast<std::size_t>(stream))
    stream_names_.resize(static_cast<std::size_t>(stream) + 1);
  stream_names_[static_cast<std::size_t>(stream)] = std::move(name);
}

std::string TaskGraph::stream_name(int stream) const {
  if (stream >= 0 && static_cast<std::size_t>(stream) < stream_names_.size() &&
      !stream_names_[static_cast<std::size_t>(stream)].empty()) {
    return stream_names_[static_cast<std::size_t>(stream)];
  }
  return "stream " + std::to_string(stream);
}

void TaskGraph::reserve(std::size_t tasks, std::size_t edges) {
  tasks_.reserve(tasks);
  edges_.reserve(edges);
}

std::vector<int> TaskGraph::present_ranks() const {
  std::vector<char> seen(static_cast<std::size_t>(rank_bound_), 0);
  for (const Task& t : tasks_) seen[static_cast<std::size_t>(t.rank)] = 1;
  std::vector<int> out;
  for (int r = 0; r < rank_bound_; ++r) {
    if (seen[static_cast<std::size_t>(r)]) out.push_back(r);
  }
  return out;
}

std::string TaskGraph::describe(TaskId id) const {
  if (id >= tasks_.size()) return "task " + std::to_string(id) + " (no such task)";
  const Task& t = tasks_[id];
  return "task " + std::to_string(id) + " (" + task_kind_name(t.kind) + " on rank " +
         std::to_string(t.rank) + ", stream " + std::to_string(t.stream) + ", '" + names_[t.name] +
         "')";
}

Expected<bool> TaskGraph::validate() const {
  for (TaskId t : host_syncs_) {
    if (t >= tasks_.size() || tasks_[t].kind != TaskKind::compute) {
      return input_error("task graph", "", "host synchronisation mark on " +
                                               (t >= tasks_.size() ? "task " + std::to_string(t) + " (no such task)"
                                                                   : describe(t) + ", which is not a compute task"));
    }
  }
  auto compiled = detail::compile(*this, /*check_instances=*/true);
  if (!compiled) return compiled.error();
  return detail::check_cycles(*this, *compiled);
}

}  // namespace scalescope
