// Chrome / Perfetto trace-event JSON of a simulated iteration, written by hand (millions of events
// would be slow through a DOM) and saved atomically.
#include "scalescope/sim/trace.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope {

void TraceRecorder::simulation_started(const TaskGraph& graph) {
  timings_.assign(graph.size(), TaskTiming{});
}
void TraceRecorder::task_waiting(int, int, TaskId task, SimTime t) { timings_[task].ready = t; }
void TraceRecorder::task_started(int, int, TaskId task, SimTime t) {
  if (timings_[task].ready < 0) timings_[task].ready = t;
  timings_[task].start = t;
}
void TraceRecorder::task_finished(int, int, TaskId task, SimTime t) { timings_[task].end = t; }

namespace {

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, res.ptr);
}

// Nanoseconds as microseconds with three decimals ("12.345"), exact.
void append_us(std::string& out, SimTime ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  append_int(out, ns / 1000);
  const auto frac = static_cast<int>(ns % 1000);
  out += '.';
  out += static_cast<char>('0' + frac / 100);
  out += static_cast<char>('0' + frac / 10 % 10);
  out += static_cast<char>('0' + frac % 10);
}

void append_number(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  if (v == std::floor(v) && std::fabs(v) < 9e15) {
    append_int(out, static_cast<std::int64_t>(v));
    return;
  }
  char buf[32];
  const int len = std::snprintf(buf, sizeof buf, "%.17g", v);
  out.append(buf, static_cast<std::size_t>(len));
}

void append_string(std::string& out, std::string_view text) {
  const std::string s = to_valid_utf8(text);  // names may carry user bytes (model, cluster names)
  out += '"';
  for (char ch : s) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out += buf;
    } else {
      out += ch;
    }
  }
  out += '"';
}

std::string process_name(const Cluster* cluster, int rank) {
  std::string name = "rank " + std::to_string(rank);
  if (cluster != nullptr && cluster->gpus_per_node() > 0) {
    name += " (node " + std::to_string(cluster->node_of(rank)) + ", gpu " +
            std::to_string(rank % cluster->gpus_per_node()) + ")";
  }
  return name;
}

void append_metadata(std::string& out, const char* what, int pid, int tid, const std::string& name,
                     bool& first) {
  out += first ? "\n" : ",\n";
  first = false;
  out += "{\"name\":\"";
  out += what;
  out += "\",\"ph\":\"M\",\"pid\":";
  append_int(out, pid);
  if (tid >= 0) {
    out += ",\"tid\":";
    append_int(out, tid);
  }
  out += ",\"args\":{\"name\":";
  append_string(out, name);
  out += "}}";
}

}  // namespace

std::string chrome_trace_json(const TaskGraph& graph, const Cluster* cluster,
                              std::span<const TaskTiming> timings) {
  std::string out;
  out.reserve(256 + graph.size() * 200);
  out += "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;

  // Processes (ranks) and threads (streams) that appear, in ascending order.
  const auto streams = static_cast<std::size_t>(std::max(graph.stream_bound(), 1));
  std::vector<char> used(static_cast<std::size_t>(graph.rank_bound()) * streams, 0);
  for (const Task& t : graph.tasks())
    used[static_cast<std::size_t>(t.rank) * streams + t.stream] = 1;
  for (int r : graph.present_ranks()) {
    append_metadata(out, "process_name", r, -1, process_name(cluster, r), first);
    out += ",\n{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":";
    append_int(out, r);
    out += ",\"args\":{\"sort_index\":";
    append_int(out, r);
    out += "}}";
    for (std::size_t s = 0; s < streams; ++s) {
      if (used[static_cast<std::size_t>(r) * streams + s]) {
        append_metadata(out, "thread_name", r, static_cast<int>(s),
                        graph.stream_name(static_cast<int>(s)), first);
      }
    }
  }

  const std::size_t n = std::min(graph.size(), timings.size());
  for (TaskId id = 0; id < n; ++id) {
    const TaskTiming& tm = timings[id];
    if (tm.start < 0 || tm.end < 0) continue;
    const Task& t = graph.task(id);
    out += first ? "\n" : ",\n";
    first = false;
    out += "{\"name\":";
    append_string(out, graph.task_name(id));
    out += ",\"cat\":\"";
    out += task_category_name(t.category);
    out += "\",\"ph\":\"X\",\"pid\":";
    append_int(out, t.rank);
    out += ",\"tid\":";
    append_int(out, t.stream);
    out += ",\"ts\":";
    append_us(out, tm.start);
    out += ",\"dur\":";
    append_us(out, tm.end - tm.start);
    out += ",\"args\":{\"kind\":\"";
    out += task_kind_name(t.kind);
    out += "\",\"category\":\"";
    out += task_category_name(t.category);
    out += '"';
    if (t.is_comm()) {
      out += ",\"bytes\":";
      append_number(out, t.amount);
      if (tm.ready >= 0 && tm.start > tm.ready) {
        out += ",\"wait_us\":";
        append_us(out, tm.start - tm.ready);
      }
      if (t.kind == TaskKind::collective) {
        out += ",\"op\":\"";
        out += to_string(t.op);
        out += "\",\"group_size\":";
        append_int(out, static_cast<std::int64_t>(graph.group(t.a).size()));
      } else {
        out += ",\"peer\":";
        append_int(out, t.a);
      }
    } else if (t.flops > 0.0) {
      out += ",\"flops\":";
      append_number(out, t.flops);
    }
    if (t.labels.microbatch >= 0) {
      out += ",\"microbatch\":";
      append_int(out, t.labels.microbatch);
    }
    if (t.labels.layer >= 0) {
      out += ",\"layer\":";
      append_int(out, t.labels.layer);
    }
    if (t.labels.stage >= 0) {
      out += ",\"stage\":";
      append_int(out, t.labels.stage);
    }
    out += "}}";
  }
  out += "\n]}\n";
  return out;
}

Expected<bool> write_chrome_trace(const TaskGraph& graph, const Cluster* cluster,
                                  std::span<const TaskTiming> timings,
                                  const std::filesystem::path& path) {
  return write_file_atomic(path, chrome_trace_json(graph, cluster, timings));
}

Expected<bool> write_chrome_trace(const TaskGraph& graph, const Cluster* cluster,
                                  const SimResult& result, const std::filesystem::path& path) {
  if (result.task_times.size() != graph.size()) {
    return runtime_error(
        "write_chrome_trace: the result has no per-task times (simulate with "
        "SimOptions::record_task_times, or attach a TraceRecorder)");
  }
  return write_chrome_trace(graph, cluster, std::span<const TaskTiming>(result.task_times), path);
}

}  // namespace scalescope
