// Speed of the PyTorch trace import (`scalescope import torch-trace`, calibrate/src/torch_trace*.cpp) on a large
// trace. Issue 19's goal: a 100 MB trace imported in <= 10 s on the 2-core development machine.
//
// The input is built once at start-up from a real one-step profiler trace committed with the session-17 H200 check
// (hf-llama, transformers' LlamaForCausalLM 0.9B, 2x1536, 11.8 MB of JSON): the traced step repeated until the file
// passes 100 MB, each copy shifted in time by the step's span, its correlation ids and autograd sequence numbers
// offset so no two copies share one, and its `ProfilerStep#N` marker renumbered. That is the file a
// `torch.profiler.schedule(active=9)` run writes: nine steps, one marker each; the importer reads every event and
// imports the last step. Nothing large is committed.
#include <benchmark/benchmark.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "scalescope/calibrate/torch_trace.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const std::string kTrace =
    SCALESCOPE_SOURCE_DIR "/validation/session17/traces9-h200/traces/hf-llama-mbs2-seq1536.json.gz";
const std::string kModel = SCALESCOPE_SOURCE_DIR "/validation/programs/hf-llama-0.9b/config.json";
constexpr double kTargetBytes = 100e6;

std::string gunzip(const std::string& file) {
  gzFile f = gzopen(file.c_str(), "rb");
  if (f == nullptr) throw std::runtime_error(file + ": cannot open");
  std::string text;
  char buf[1 << 16];
  for (int n; (n = gzread(f, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
  gzclose(f);
  return text;
}

/// Writes `copies` copies of the trace's step into `out` and returns the file's size in bytes.
std::uintmax_t write_repeated(const Json& trace, int copies, const fs::path& out) {
  const Json& events = trace.at("traceEvents");
  double t0 = 1e300, t1 = -1e300;
  for (const Json& e : events) {
    if (!e.contains("ts") || !e.at("ts").is_number()) continue;
    const double ts = e.at("ts").get<double>();
    t0 = std::min(t0, ts);
    t1 = std::max(t1, ts + (e.contains("dur") && e.at("dur").is_number() ? e.at("dur").get<double>() : 0.0));
  }
  const double span = (t1 - t0) * 1.01;
  Json doc = trace;
  Json& all = doc["traceEvents"] = Json::array();
  for (int k = 0; k < copies; ++k) {
    for (Json e : events) {
      if (e.contains("ts") && e.at("ts").is_number()) e["ts"] = e.at("ts").get<double>() + k * span;
      if (auto a = e.find("args"); a != e.end() && a->is_object()) {
        for (const char* key : {"correlation", "External id", "Sequence number"}) {
          if (auto v = a->find(key); v != a->end() && v->is_number_integer()) *v = v->get<std::int64_t>() + k * 10'000'000LL;
        }
      }
      if (auto n = e.find("name"); n != e.end() && n->is_string() && n->get<std::string>().rfind("ProfilerStep#", 0) == 0) {
        *n = "ProfilerStep#" + std::to_string(2 + k);
      }
      all.push_back(std::move(e));
    }
  }
  std::ofstream(out, std::ios::binary) << doc.dump();
  return fs::file_size(out);
}

struct LargeTrace {
  fs::path file = fs::temp_directory_path() / ("scalescope_bench_trace_" + std::to_string(::getpid()) + ".json");
  std::uintmax_t bytes = 0;
  LargeTrace() {
    const Json trace = Json::parse(gunzip(kTrace));
    const double one = static_cast<double>(trace.dump().size());
    bytes = write_repeated(trace, static_cast<int>(std::ceil(kTargetBytes / one)), file);
  }
  ~LargeTrace() { fs::remove(file); }
};

void BM_ImportTorchTrace_100MB(benchmark::State& state) {
  static const LargeTrace trace;  // built once, removed at exit
  const auto model = scalescope::models::load_model_by_name_or_path(kModel);
  if (!model) {
    state.SkipWithError(model.error().str().c_str());
    return;
  }
  scalescope::calib::TraceImportOptions o;
  o.micro_batch = 2;
  o.seq = 1536;
  // The input is valid only if its last step imports as the one-step trace it was built from.
  const auto one = scalescope::calib::import_torch_trace(kTrace, *model, o);
  if (!one) {
    state.SkipWithError(one.error().str().c_str());
    return;
  }
  std::size_t events = 0;
  for (auto _ : state) {
    auto r = scalescope::calib::import_torch_trace(trace.file.string(), *model, o);
    if (!r) {
      state.SkipWithError(r.error().str().c_str());
      return;
    }
    events = r->summary.events;
    if (r->stack.at("phases") != one->stack.at("phases")) {
      state.SkipWithError("the repeated trace's last step did not import as the one-step trace");
      return;
    }
  }
  state.counters["MB"] = static_cast<double>(trace.bytes) / 1e6;
  state.counters["events"] = static_cast<double>(events);
  state.counters["MB/s"] = benchmark::Counter(static_cast<double>(trace.bytes) / 1e6, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_ImportTorchTrace_100MB)->Unit(benchmark::kSecond)->Iterations(3)->UseRealTime();

}  // namespace
