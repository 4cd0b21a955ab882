// Tests for the Chrome/Perfetto trace writer: valid JSON, one complete event per task with times in
// microseconds, named processes (ranks) and threads (streams), atomic writing, and the recorder
// observer.
#include "scalescope/sim/trace.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/json_reader.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope {
namespace {

using TC = TaskCategory;

struct Rig {
  Cluster cluster;
  CollectiveModel model;
  explicit Rig(Cluster c) : cluster(std::move(c)), model(cluster, datasheet_collective_params()) {}
};

Rig make_rig() {
  auto c = load_cluster_by_name_or_path("dgx-h100-8", ClusterOptions{2, {}});
  EXPECT_TRUE(c.has_value());
  return Rig(std::move(c).value());
}

// Ranks 0 and 9 (node 1, gpu 1): a forward of 1.5 ms on rank 0, then a send to rank 9 (stream 3),
// and on rank 9 the recv (stream 3) and a 2-rank all_reduce with rank 0 (stream 1). 5 tasks in all.
TaskGraph small_graph() {
  TaskGraph g;
  g.set_stream_name(0, "compute");
  g.set_stream_name(1, "tp-comm");
  g.set_stream_name(3, "pp-comm");
  const TaskId f =
      g.add_compute(0, 0, TC::forward, "fwd \"L0\"", microseconds(1500), {2, 0, 0}, Flops(3e12));
  const TaskId s = g.add_send(0, 3, TC::pp_comm, "send act", 9, MiB(4), 0, {2, -1, 0});
  g.precede(f, s);
  g.add_recv(9, 3, TC::pp_comm, "recv act", 0, MiB(4), 0, {2, -1, 1});
  const std::vector<int> grp{0, 9};
  g.add_collective(0, 1, TC::tp_comm, "ar", CollOp::all_reduce, grp, MiB(1), 7);
  g.add_collective(9, 1, TC::tp_comm, "ar", CollOp::all_reduce, grp, MiB(1), 7);
  return g;
}

TEST(Trace, IsValidJsonWithOneCompleteEventPerTaskAndNamedRanksAndStreams) {
  const Rig rig = make_rig();
  const TaskGraph g = small_graph();
  SimOptions o;
  o.record_task_times = true;
  auto r = simulate(g, rig.cluster, rig.model, o);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  const std::string text = chrome_trace_json(g, &rig.cluster, r->task_times);
  auto doc = parse_json_text(text, "trace");
  ASSERT_TRUE(doc.has_value()) << doc.error().str();
  const Json& events = (*doc)["traceEvents"];
  int complete = 0, process_names = 0, thread_names = 0;
  for (const Json& e : events) {
    const std::string ph = e["ph"];
    if (ph == "X") ++complete;
    if (ph == "M" && e["name"] == "process_name") ++process_names;
    if (ph == "M" && e["name"] == "thread_name") ++thread_names;
  }
  // 5 tasks -> 5 "X" events; 2 ranks -> 2 process names; rank 0 uses streams 0, 1, 3 and rank 9
  // uses 1, 3.
  EXPECT_EQ(complete, 5);
  EXPECT_EQ(process_names, 2);
  EXPECT_EQ(thread_names, 5);
  // Rank 9 is node 1 (8 GPUs per node), local GPU 1.
  bool found_rank9 = false, found_stream = false;
  for (const Json& e : events) {
    if (e["ph"] == "M" && e["name"] == "process_name" && e["pid"] == 9) {
      found_rank9 = e["args"]["name"] == "rank 9 (node 1, gpu 1)";
    }
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0 && e["tid"] == 3) {
      found_stream = e["args"]["name"] == "pp-comm";
    }
  }
  EXPECT_TRUE(found_rank9);
  EXPECT_TRUE(found_stream);
  // The forward starts at 0 and lasts 1,500 us; its name keeps the escaped quotes; args carry the
  // labels.
  const Json& fwd = events[events.size() - 5];
  EXPECT_EQ(fwd["name"], "fwd \"L0\"");
  EXPECT_EQ(fwd["cat"], "forward");
  EXPECT_DOUBLE_EQ(fwd["ts"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(fwd["dur"].get<double>(), 1500.0);
  EXPECT_EQ(fwd["args"]["microbatch"], 2);
  EXPECT_EQ(fwd["args"]["layer"], 0);
  EXPECT_EQ(fwd["args"]["flops"], 3e12);
  // The send starts when the forward ends (1,500 us) and carries its bytes and peer; the recv on
  // rank 9 was ready at 0 and waited 1,500 us for it.
  const Json& send = events[events.size() - 4];
  EXPECT_DOUBLE_EQ(send["ts"].get<double>(), 1500.0);
  EXPECT_EQ(send["args"]["bytes"], 4194304);
  EXPECT_EQ(send["args"]["peer"], 9);
  const Json& recv = events[events.size() - 3];
  EXPECT_DOUBLE_EQ(recv["args"]["wait_us"].get<double>(), 1500.0);
  EXPECT_EQ(events[events.size() - 1]["args"]["op"], "all_reduce");
  EXPECT_EQ(events[events.size() - 1]["args"]["group_size"], 2);
}

TEST(Trace, TimesKeepNanosecondPrecisionInMicroseconds) {
  const Rig rig = make_rig();
  TaskGraph g;
  g.add_compute(0, 0, TC::forward, "a", Seconds(1234e-9));  // 1,234 ns
  g.add_compute(0, 0, TC::forward, "b", Seconds(1e-9));     // starts at 1,234 ns, lasts 1 ns
  const std::vector<TaskTiming> t{{0, 0, 1234}, {1234, 1234, 1235}};
  const std::string text = chrome_trace_json(g, &rig.cluster, t);
  EXPECT_NE(text.find("\"ts\":0.000,\"dur\":1.234"), std::string::npos) << text;
  EXPECT_NE(text.find("\"ts\":1.234,\"dur\":0.001"), std::string::npos) << text;
}

TEST(Trace, RecorderObserverMatchesRecordedTaskTimesAndFileIsWrittenAtomically) {
  const Rig rig = make_rig();
  const TaskGraph g = small_graph();
  TraceRecorder rec;
  SimOptions o;
  o.fidelity = Fidelity::flow;
  o.record_task_times = true;
  o.observers.push_back(&rec);
  auto r = simulate(g, rig.cluster, rig.model, o);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(rec.timings().size(), g.size());
  for (TaskId i = 0; i < g.size(); ++i) {
    EXPECT_EQ(rec.timings()[i].ready, r->task_times[i].ready);
    EXPECT_EQ(rec.timings()[i].start, r->task_times[i].start);
    EXPECT_EQ(rec.timings()[i].end, r->task_times[i].end);
  }
  const auto dir = std::filesystem::temp_directory_path() /
                   ("scalescope_trace_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto path = dir / "trace.json";
  ASSERT_TRUE(write_chrome_trace(g, &rig.cluster, rec.timings(), path).has_value());
  auto doc = read_json_file(path);
  ASSERT_TRUE(doc.has_value()) << doc.error().str();
  // Only the trace is left in the folder (the temporary file was renamed into place).
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  std::filesystem::remove_all(dir);
}

TEST(Trace, ResultWithoutTaskTimesIsAnError) {
  const Rig rig = make_rig();
  const TaskGraph g = small_graph();
  auto r = simulate(g, rig.cluster, rig.model);
  ASSERT_TRUE(r.has_value());
  auto w = write_chrome_trace(g, &rig.cluster, *r, "unused.json");
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("record_task_times"), std::string::npos);
}

TEST(Trace, WithoutAClusterRanksAreNamedByNumberOnly) {
  TaskGraph g;
  g.add_compute(3, 0, TC::optimizer, "adam", milliseconds(1));
  const std::vector<TaskTiming> t{{0, 0, 1'000'000}};
  auto doc = parse_json_text(chrome_trace_json(g, nullptr, t), "trace");
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ((*doc)["traceEvents"][0]["args"]["name"], "rank 3");
}

}  // namespace
}  // namespace scalescope
