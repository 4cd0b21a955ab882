// Perfetto / Chrome trace-event JSON of a simulated iteration: one process per rank, one thread per
// stream, one complete ("X") event per task; recorded by an observer and written atomically.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope {

class Cluster;

/// Records every task's ready/start/end times (24 bytes per task) during a run.
class TraceRecorder final : public SimObserver {
 public:
  void simulation_started(const TaskGraph& graph) override;
  void task_waiting(int rank, int stream, TaskId task, SimTime t) override;
  void task_started(int rank, int stream, TaskId task, SimTime t) override;
  void task_finished(int rank, int stream, TaskId task, SimTime t) override;

  /// By TaskId.
  std::span<const TaskTiming> timings() const { return timings_; }

 private:
  std::vector<TaskTiming> timings_;
};

/// The trace as a JSON document (Chrome trace-event format; Perfetto and chrome://tracing open it):
///  - per present rank a process: pid = rank, named "rank N (node n, gpu g)" ("rank N" without
///    a cluster), sorted by rank; per used stream a thread: tid = stream, named
///    TaskGraph::stream_name();
///  - per task that ran, a complete event "X": name = task name, cat = its category, ts = start
///    and dur = end - start in microseconds (ns precision), args {kind, category, bytes
///    (communication), flops (compute), microbatch, layer, stage (when set), wait_us
///    (communication that waited for peers), op and group_size (collectives), peer (send/recv)}.
/// Tasks that never ran (timings of -1) are left out.
std::string chrome_trace_json(const TaskGraph& graph, const Cluster* cluster,
                              std::span<const TaskTiming> timings);

/// Writes chrome_trace_json() to `path` atomically (write_file_atomic).
Expected<bool> write_chrome_trace(const TaskGraph& graph, const Cluster* cluster,
                                  std::span<const TaskTiming> timings,
                                  const std::filesystem::path& path);
/// Same, from a result simulated with SimOptions::record_task_times (an error otherwise).
Expected<bool> write_chrome_trace(const TaskGraph& graph, const Cluster* cluster,
                                  const SimResult& result, const std::filesystem::path& path);

}  // namespace scalescope
