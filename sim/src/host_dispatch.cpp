// Host dispatch streams appended to a task graph (model in host_dispatch.hpp).
#include "scalescope/sim/host_dispatch.hpp"

#include <cassert>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace scalescope {

std::size_t add_host_dispatch(TaskGraph& graph, Seconds per_layer_microbatch, int host_stream) {
  return add_host_dispatch(graph, HostCosts{per_layer_microbatch, Seconds(0.0), Seconds(0.0)}, host_stream);
}

std::size_t add_host_dispatch(TaskGraph& graph, const HostCosts& costs, int host_stream) {
  assert(host_stream >= graph.stream_bound() && "add_host_dispatch: the host stream must be unused");
  const double H = costs.per_layer_microbatch.value, E = costs.per_edge_microbatch.value, O = costs.per_step.value;
  if (!(H > 0) && !(E > 0) && !(O > 0)) return 0;
  // Group key: rank, micro-batch (-1: the optimizer step), layer (-1: outside the layers).
  using Key = std::tuple<int, std::int32_t, std::int16_t>;
  struct Group {
    double gpu_s = 0.0;
    std::size_t tasks = 0;
    double host_s = 0.0;
  };
  std::map<Key, Group> groups;
  std::vector<TaskId> issued;  // compute tasks that get host time, insertion order (per rank order follows)
  const std::size_t n = graph.size();
  for (TaskId id = 0; id < n; ++id) {
    const Task& t = graph.task(id);
    if (t.kind != TaskKind::compute) continue;
    double host = 0.0;
    Key key{t.rank, t.labels.microbatch, t.labels.layer};
    if (t.labels.layer >= 0 && t.labels.microbatch >= 0) host = H;
    else if (t.category == TaskCategory::optimizer) host = O, key = Key{t.rank, -1, -1};
    else if (t.labels.microbatch >= 0) host = E, key = Key{t.rank, t.labels.microbatch, -1};
    if (!(host > 0)) continue;
    Group& g = groups[key];
    g.gpu_s += t.amount;
    ++g.tasks;
    g.host_s = host;
    issued.push_back(id);
  }
  graph.set_stream_name(host_stream, "host");
  for (TaskId id : issued) {
    const Task t = graph.task(id);  // copy: adding tasks may reallocate the task vector
    const Key key = t.labels.layer >= 0 && t.labels.microbatch >= 0 ? Key{t.rank, t.labels.microbatch, t.labels.layer}
                    : t.category == TaskCategory::optimizer ? Key{t.rank, -1, -1}
                                                            : Key{t.rank, t.labels.microbatch, -1};
    const Group& g = groups.at(key);
    const double share = g.gpu_s > 0 ? t.amount / g.gpu_s : 1.0 / static_cast<double>(g.tasks);
    const TaskId host = graph.add_delay(t.rank, host_stream, TaskCategory::host, "host issue",
                                        Seconds(g.host_s * share), t.labels);
    graph.precede(host, id);
  }
  return issued.size();
}

}  // namespace scalescope
