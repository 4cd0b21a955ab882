// Host dispatch streams appended to a task graph (model in host_dispatch.hpp).
#include "scalescope/sim/host_dispatch.hpp"

#include <cassert>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

namespace scalescope {

std::size_t add_host_dispatch(TaskGraph& graph, Seconds per_layer_microbatch, int host_stream) {
  assert(host_stream >= graph.stream_bound() && "add_host_dispatch: the host stream must be unused");
  if (!(per_layer_microbatch.value > 0)) return 0;
  using Key = std::tuple<int, std::int32_t, std::int16_t>;  // rank, micro-batch, layer
  struct Group {
    double gpu_s = 0.0;
    std::size_t tasks = 0;
  };
  std::map<Key, Group> groups;
  std::vector<TaskId> issued;  // labelled compute tasks, insertion order (per rank order follows)
  const std::size_t n = graph.size();
  for (TaskId id = 0; id < n; ++id) {
    const Task& t = graph.task(id);
    if (t.kind != TaskKind::compute || t.labels.layer < 0 || t.labels.microbatch < 0) continue;
    Group& g = groups[Key{t.rank, t.labels.microbatch, t.labels.layer}];
    g.gpu_s += t.amount;
    ++g.tasks;
    issued.push_back(id);
  }
  graph.set_stream_name(host_stream, "host");
  const double h = per_layer_microbatch.value;
  for (TaskId id : issued) {
    const Task t = graph.task(id);  // copy: adding tasks may reallocate the task vector
    const Group& g = groups.at(Key{t.rank, t.labels.microbatch, t.labels.layer});
    const double share = g.gpu_s > 0 ? t.amount / g.gpu_s : 1.0 / static_cast<double>(g.tasks);
    const TaskId host = graph.add_delay(t.rank, host_stream, TaskCategory::host, "host issue",
                                        Seconds(h * share), t.labels);
    graph.precede(host, id);
  }
  return issued.size();
}

}  // namespace scalescope
