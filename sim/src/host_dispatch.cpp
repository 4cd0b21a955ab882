// Host dispatch streams appended to a task graph (model in host_dispatch.hpp).
#include "scalescope/sim/host_dispatch.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstdint>
#include <map>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace scalescope {

namespace {

// Group key: rank, micro-batch (-1: the optimizer step), layer (-1: outside the layers).
using Key = std::tuple<int, std::int32_t, std::int16_t>;

/// The parts a layer group's host time is split over when HostCosts gives the shares: the forward up to and
/// including its synchronisation point, the forward after it, and the rest (backward, recompute).
enum Part : std::uint8_t { kForwardBeforeSync, kForwardAfterSync, kRest, kNumParts };

struct Group {
  std::array<double, kNumParts> gpu_s{};
  std::array<std::size_t, kNumParts> tasks{};
  double host_s = 0.0;
  bool seen_sync = false;  ///< a forward task of the group was marked (later forward tasks are after it)
};

Key group_key(const Task& t) {
  if (t.labels.layer >= 0 && t.labels.microbatch >= 0) return Key{t.rank, t.labels.microbatch, t.labels.layer};
  if (t.category == TaskCategory::optimizer) return Key{t.rank, -1, -1};
  return Key{t.rank, t.labels.microbatch, -1};
}

/// The budget of each part as a fraction of the group's host time: one pool (the GPU-duration split) without
/// shares; with them forward f (split s : 1 - s after : before the sync, or one forward pool without s) and the
/// rest 1 - f; a part without tasks gives its budget to the others.
std::array<double, kNumParts> budgets(const Group& g, const HostCosts& c) {
  std::array<double, kNumParts> b{};
  const double f = c.forward_fraction, s = c.after_sync_fraction;
  if (f >= 0.0) {
    b[kForwardBeforeSync] = s >= 0.0 ? f * (1.0 - s) : f;
    b[kForwardAfterSync] = s >= 0.0 ? f * s : 0.0;
    b[kRest] = 1.0 - f;
  } else {
    b[kRest] = 1.0;
  }
  double present = 0.0;
  for (int p = 0; p < kNumParts; ++p) {
    if (g.tasks[static_cast<std::size_t>(p)] == 0) b[static_cast<std::size_t>(p)] = 0.0;
    present += b[static_cast<std::size_t>(p)];
  }
  if (!(present > 0.0)) {  // shares that leave every present part empty: split the group by GPU time
    std::size_t tasks = 0;
    for (std::size_t n : g.tasks) tasks += n;
    for (int p = 0; p < kNumParts; ++p)
      b[static_cast<std::size_t>(p)] = static_cast<double>(g.tasks[static_cast<std::size_t>(p)]) / static_cast<double>(tasks);
    return b;
  }
  for (double& x : b) x /= present;
  return b;
}

}  // namespace

std::size_t add_host_dispatch(TaskGraph& graph, Seconds per_layer_microbatch, int host_stream) {
  return add_host_dispatch(graph, HostCosts{per_layer_microbatch, Seconds(0.0), Seconds(0.0)}, host_stream);
}

std::size_t add_host_dispatch(TaskGraph& graph, const HostCosts& costs, int host_stream) {
  assert(host_stream >= graph.stream_bound() && "add_host_dispatch: the host stream must be unused");
  const double H = costs.per_layer_microbatch.value, E = costs.per_edge_microbatch.value, O = costs.per_step.value;
  if (!(H > 0) && !(E > 0) && !(O > 0)) return 0;
  const std::span<const TaskId> marks = graph.host_syncs();
  const auto marked = [&](TaskId id) { return !marks.empty() && std::binary_search(marks.begin(), marks.end(), id); };
  const bool shares = costs.forward_fraction >= 0.0;
  std::map<Key, Group> groups;
  struct Issue {
    TaskId task;
    Part part;
  };
  std::vector<Issue> issued;  // compute tasks that get host time, insertion order (per rank order follows)
  const std::size_t n = graph.size();
  for (TaskId id = 0; id < n; ++id) {
    const Task& t = graph.task(id);
    if (t.kind != TaskKind::compute) continue;
    const bool layer = t.labels.layer >= 0 && t.labels.microbatch >= 0;
    const double host = layer ? H : t.category == TaskCategory::optimizer ? O : t.labels.microbatch >= 0 ? E : 0.0;
    if (!(host > 0)) continue;
    Group& g = groups[group_key(t)];
    Part part = kRest;
    if (shares && layer && t.category == TaskCategory::forward) {
      part = g.seen_sync ? kForwardAfterSync : kForwardBeforeSync;
      if (marked(id)) g.seen_sync = true;
    }
    g.gpu_s[part] += t.amount;
    ++g.tasks[part];
    g.host_s = host;
    issued.push_back({id, part});
  }
  graph.set_stream_name(host_stream, "host");
  // Once a rank's host has synchronised it has no lead over its GPU: from then on each task runs while it is
  // issued (it may start when the host task before its own has ended, and the task after it on its stream waits
  // for its host task: after_issue[task] = its host task).
  std::unordered_map<int, TaskId> last_host;  // each rank's last task on the host stream
  std::unordered_map<int, bool> synced;
  std::unordered_map<TaskId, TaskId> after_issue;
  std::map<Key, std::array<double, kNumParts>> budget_of;
  for (const Issue& is : issued) {
    const Task t = graph.task(is.task);  // copy: adding tasks may reallocate the task vector
    const Key key = group_key(t);
    const Group& g = groups.at(key);
    auto b = budget_of.find(key);
    if (b == budget_of.end()) b = budget_of.emplace(key, budgets(g, costs)).first;
    const double pool = g.gpu_s[is.part];
    const double share = pool > 0 ? t.amount / pool : 1.0 / static_cast<double>(g.tasks[is.part]);
    const TaskId host = graph.add_delay(t.rank, host_stream, TaskCategory::host, "host issue",
                                        Seconds(g.host_s * b->second[is.part] * share), t.labels);
    const auto before = last_host.find(t.rank);
    if (synced[t.rank] && before != last_host.end()) {
      graph.precede(before->second, is.task);
      after_issue.emplace(is.task, host);
    } else {
      graph.precede(host, is.task);
    }
    last_host[t.rank] = host;
    if (marked(is.task)) {
      const TaskId sync = graph.add_delay(t.rank, host_stream, TaskCategory::host, "host sync", costs.sync_latency,
                                          t.labels);
      graph.precede(is.task, sync);
      last_host[t.rank] = sync;
      synced[t.rank] = true;
    }
  }
  if (!after_issue.empty()) {
    // The next task on each such task's (rank, stream), in insertion order; a task last on its stream holds
    // nothing back (the host stream, also in the graph, ends the step no earlier than its last issue).
    std::unordered_map<std::uint64_t, TaskId> last_on_stream;
    const std::size_t total = graph.size();
    for (TaskId id = 0; id < total; ++id) {
      const Task& t = graph.task(id);
      const std::uint64_t key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(t.rank)) << 8) | t.stream;
      const auto prev = last_on_stream.find(key);
      if (prev != last_on_stream.end()) {
        const auto held = after_issue.find(prev->second);
        if (held != after_issue.end()) graph.precede(held->second, id);
      }
      last_on_stream[key] = id;
    }
  }
  return issued.size();
}

}  // namespace scalescope
