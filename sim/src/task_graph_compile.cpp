// Turns a TaskGraph into its execution form and checks it (ids, instances, transfers, cycles).
#include "task_graph_compile.hpp"

#include <algorithm>
#include <string>

namespace scalescope::detail {
namespace {

[[noreturn]] void fail(const std::string& message) {
  throw ErrorException(input_error("task graph", "", message));
}

std::string op_name(CollOp op) { return std::string(to_string(op)); }

// Sends and recvs keyed by (sender, receiver, tag); the i-th send of a key matches its i-th recv.
struct TransferEnd {
  std::uint32_t src, dst, tag;
  TaskId id;
  bool operator<(const TransferEnd& o) const {
    if (src != o.src) return src < o.src;
    if (dst != o.dst) return dst < o.dst;
    if (tag != o.tag) return tag < o.tag;
    return id < o.id;
  }
};
bool key_less(const TransferEnd& a, const TransferEnd& b) {
  if (a.src != b.src) return a.src < b.src;
  if (a.dst != b.dst) return a.dst < b.dst;
  return a.tag < b.tag;
}

void match_transfers(const TaskGraph& g, CompiledGraph& c) {
  std::vector<TransferEnd> sends, recvs;
  const auto tasks = g.tasks();
  for (TaskId i = 0; i < tasks.size(); ++i) {
    const Task& t = tasks[i];
    const auto r = static_cast<std::uint32_t>(t.rank);
    if (t.kind == TaskKind::send) sends.push_back({r, t.a, t.b, i});
    if (t.kind == TaskKind::recv) recvs.push_back({t.a, r, t.b, i});
  }
  std::sort(sends.begin(), sends.end());
  std::sort(recvs.begin(), recvs.end());
  auto unmatched = [&](const TransferEnd& e, bool is_send) {
    const std::uint32_t peer = is_send ? e.dst : e.src;
    if (peer < c.present.size() && c.present[peer]) {
      fail(g.describe(e.id) + ": no matching " + (is_send ? "recv" : "send") + " on rank " +
           std::to_string(peer) + " (tag " + std::to_string(e.tag) + ") although rank " +
           std::to_string(peer) + " is in the graph");
    }
  };
  std::size_t i = 0, j = 0;
  while (i < sends.size() || j < recvs.size()) {
    if (j == recvs.size() || (i < sends.size() && key_less(sends[i], recvs[j]))) {
      unmatched(sends[i++], true);
    } else if (i == sends.size() || key_less(recvs[j], sends[i])) {
      unmatched(recvs[j++], false);
    } else {
      const TaskId s = sends[i++].id, r = recvs[j++].id;
      if (g.task(s).amount != g.task(r).amount) {
        fail(g.describe(s) + " sends " + std::to_string(g.task(s).amount) +
             " bytes but its matching " + g.describe(r) + " expects " +
             std::to_string(g.task(r).amount) + " bytes");
      }
      c.partner[s] = r;
      c.partner[r] = s;
    }
  }
}

void check_instances(const TaskGraph& g, const CompiledGraph& c) {
  std::vector<std::uint32_t> member(static_cast<std::size_t>(g.rank_bound()), 0);
  std::vector<std::uint32_t> seen(static_cast<std::size_t>(g.rank_bound()), 0);
  const std::size_t n = g.num_collective_instances();
  for (std::uint32_t inst = 0; inst < n; ++inst) {
    const std::uint32_t stamp = inst + 1;
    const TaskId first = c.instance_tasks[c.instance_offset[inst]];
    const Task& f = g.task(first);
    for (int r : g.group(f.a)) {
      if (member[static_cast<std::size_t>(r)] == stamp) {
        fail(g.describe(first) + ": rank " + std::to_string(r) +
             " appears twice in the collective's group");
      }
      member[static_cast<std::size_t>(r)] = stamp;
    }
    for (std::uint32_t k = c.instance_offset[inst]; k < c.instance_offset[inst + 1]; ++k) {
      const TaskId id = c.instance_tasks[k];
      const Task& t = g.task(id);
      auto what = [&] {
        return g.describe(id) + " in collective instance " +
               std::to_string(g.collective_instance_key(inst)) + " ";
      };
      if (t.op != f.op)
        fail(what() + "runs " + op_name(t.op) + " but " + g.describe(first) + " runs " +
             op_name(f.op));
      if (t.amount != f.amount) {
        fail(what() + "has " + std::to_string(t.amount) + " bytes but " + g.describe(first) +
             " has " + std::to_string(f.amount));
      }
      if (t.a != f.a) fail(what() + "names a different rank group than " + g.describe(first));
      if (member[static_cast<std::size_t>(t.rank)] != stamp)
        fail(what() + "runs on a rank outside its group");
      if (seen[static_cast<std::size_t>(t.rank)] == stamp)
        fail(what() + "is the second task of its rank in the instance");
      seen[static_cast<std::size_t>(t.rank)] = stamp;
    }
  }
}

// Kahn's algorithm over tasks merged by rendezvous (a collective instance or a matched transfer is
// one node), so that a wait on a peer that waits on us shows up as a cycle.
void find_cycle(const TaskGraph& g, const CompiledGraph& c) {
  const std::size_t n = g.size();
  std::vector<TaskId> rep(n);
  for (TaskId i = 0; i < n; ++i) {
    const Task& t = g.task(i);
    if (t.kind == TaskKind::collective) {
      rep[i] = c.instance_tasks[c.instance_offset[t.b]];
    } else if (t.kind == TaskKind::recv && c.partner[i] != kNoTask) {
      rep[i] = c.partner[i];
    } else {
      rep[i] = i;
    }
  }
  std::vector<std::uint32_t> offset(n + 1, 0), indeg(n, 0);
  auto for_each_edge = [&](auto&& fn) {
    for (TaskId i = 0; i < n; ++i) {
      for (std::uint32_t k = c.succ_offset[i]; k < c.succ_offset[i + 1]; ++k) fn(i, c.succ[k]);
      if (c.stream_next[i] != kNoTask) fn(i, c.stream_next[i]);
    }
  };
  for_each_edge([&](TaskId a, TaskId b) {
    if (rep[a] == rep[b]) {
      fail(g.describe(a) + " must finish before " + g.describe(b) +
           " starts, but both belong to the same collective or transfer (deadlock)");
    }
    ++offset[rep[a] + 1];
    ++indeg[rep[b]];
  });
  for (std::size_t i = 0; i < n; ++i) offset[i + 1] += offset[i];
  std::vector<TaskId> adj(offset[n]);
  {
    std::vector<std::uint32_t> fill(offset.begin(), offset.end() - 1);
    for_each_edge([&](TaskId a, TaskId b) { adj[fill[rep[a]]++] = rep[b]; });
  }
  std::vector<TaskId> queue;
  std::size_t nodes = 0;
  for (TaskId i = 0; i < n; ++i) {
    if (rep[i] != i) continue;
    ++nodes;
    if (indeg[i] == 0) queue.push_back(i);
  }
  std::size_t done = 0;
  while (done < queue.size()) {
    const TaskId v = queue[done++];
    for (std::uint32_t k = offset[v]; k < offset[v + 1]; ++k) {
      if (--indeg[adj[k]] == 0) queue.push_back(adj[k]);
    }
  }
  if (done == nodes) return;
  // Walk backwards along unfinished predecessors until a node repeats: that stretch is a cycle.
  std::vector<TaskId> pred(n, kNoTask);
  for (TaskId v = 0; v < n; ++v) {
    if (rep[v] == v && indeg[v] != 0) {
      for (std::uint32_t k = offset[v]; k < offset[v + 1]; ++k) {
        if (indeg[adj[k]] != 0) pred[adj[k]] = v;
      }
    }
  }
  TaskId v = kNoTask;
  for (TaskId i = 0; i < n && v == kNoTask; ++i) {
    if (rep[i] == i && indeg[i] != 0) v = i;
  }
  std::vector<char> on_path(n, 0);
  while (!on_path[v]) {
    on_path[v] = 1;
    v = pred[v];
  }
  std::string cycle = g.describe(v);
  int shown = 1;
  for (TaskId u = pred[v]; u != v && shown < 6; u = pred[u], ++shown)
    cycle = g.describe(u) + " -> " + cycle;
  fail("dependency cycle (the graph would deadlock): " + cycle +
       (shown >= 6 ? " (cycle shortened)" : ""));
}

}  // namespace

Expected<CompiledGraph> compile(const TaskGraph& graph, bool check_instances_too) {
  return catch_errors([&] {
    CompiledGraph c;
    const std::size_t n = graph.size();
    const auto tasks = graph.tasks();
    c.present.assign(static_cast<std::size_t>(graph.rank_bound()), 0);
    for (const Task& t : tasks) c.present[static_cast<std::size_t>(t.rank)] = 1;

    // Explicit successors (CSR, edges in insertion order per source).
    c.succ_offset.assign(n + 1, 0);
    c.num_preds.assign(n, 0);
    for (const auto& e : graph.edges()) {
      if (e.from >= n || e.to >= n) {
        fail("dependency " + std::to_string(e.from) + " -> " + std::to_string(e.to) +
             " names a task that does not exist (" + std::to_string(n) + " tasks)");
      }
      if (e.from == e.to) fail(graph.describe(e.from) + " depends on itself");
      ++c.succ_offset[e.from + 1];
      ++c.num_preds[e.to];
    }
    for (std::size_t i = 0; i < n; ++i) c.succ_offset[i + 1] += c.succ_offset[i];
    c.succ.resize(c.succ_offset[n]);
    {
      std::vector<std::uint32_t> fill(c.succ_offset.begin(), c.succ_offset.end() - 1);
      for (const auto& e : graph.edges()) c.succ[fill[e.from]++] = e.to;
    }

    // Stream chains: each task waits for the previous task of its (rank, stream).
    c.stream_next.assign(n, kNoTask);
    const auto streams = static_cast<std::size_t>(std::max(graph.stream_bound(), 1));
    std::vector<TaskId> last(static_cast<std::size_t>(graph.rank_bound()) * streams, kNoTask);
    for (TaskId i = 0; i < n; ++i) {
      TaskId& prev = last[static_cast<std::size_t>(tasks[i].rank) * streams + tasks[i].stream];
      if (prev != kNoTask) {
        c.stream_next[prev] = i;
        ++c.num_preds[i];
      }
      prev = i;
    }

    // Collective participants per instance (in task order).
    const std::size_t ninst = graph.num_collective_instances();
    c.instance_offset.assign(ninst + 1, 0);
    for (const Task& t : tasks) {
      if (t.kind == TaskKind::collective) ++c.instance_offset[t.b + 1];
    }
    for (std::size_t i = 0; i < ninst; ++i) c.instance_offset[i + 1] += c.instance_offset[i];
    c.instance_tasks.resize(c.instance_offset[ninst]);
    {
      std::vector<std::uint32_t> fill(c.instance_offset.begin(), c.instance_offset.end() - 1);
      for (TaskId i = 0; i < n; ++i) {
        if (tasks[i].kind == TaskKind::collective) c.instance_tasks[fill[tasks[i].b]++] = i;
      }
    }

    c.partner.assign(n, kNoTask);
    match_transfers(graph, c);
    if (check_instances_too) check_instances(graph, c);
    return c;
  });
}

Expected<bool> check_cycles(const TaskGraph& graph, const CompiledGraph& compiled) {
  return catch_errors([&] {
    find_cycle(graph, compiled);
    return true;
  });
}

}  // namespace scalescope::detail
