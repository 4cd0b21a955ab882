// The torch-trace reader's bounds (torch_trace_read.cpp): special files refused without blocking, tokens and
// nesting bounded, ids beyond 64 bits read as absent (not converted: undefined behaviour), a gzip trace read as
// its plain text, and the import options held to the model loader's ranges.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scalescope/calibrate/torch_trace.hpp"

namespace scalescope::calib {
namespace {

namespace fs = std::filesystem;

// A real trace trimmed to 2 layers (fuzz/seeds/torch_trace/trim_trace.py from validation/session9's gpt-ln trace).
const std::string kSeed = SCALESCOPE_SOURCE_DIR "/fuzz/seeds/torch_trace/gpt-ln-2layers.json";

models::ModelSpec gpt_ln() {
  return models::load_model(SCALESCOPE_SOURCE_DIR "/validation/programs/gpt-ln-0.5b.json").value();
}

TraceImportOptions options() {
  TraceImportOptions o;
  o.micro_batch = 4;
  o.seq = 768;
  o.layers = 2;
  return o;
}

struct Dir {
  fs::path path = fs::temp_directory_path() / ("scalescope_trace_read_" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
};

std::string seed_text() {
  std::ifstream in(kSeed);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string error_of(const std::string& file, const TraceImportOptions& o = options()) {
  auto r = import_torch_trace(file, gpt_ln(), o);
  EXPECT_FALSE(r.has_value()) << file;
  if (r) return "";
  EXPECT_EQ(r.error().kind, Error::Kind::input) << r.error().str();
  return r.error().str();
}

TEST(TorchTraceRead, TheTrimmedSeedImportsAndItsGzipIsReadAsThePlainText) {
  Dir d;
  auto plain = import_torch_trace(kSeed, gpt_ln(), options());
  ASSERT_TRUE(plain.has_value()) << plain.error().str();
  EXPECT_EQ(plain->summary.layer_period, 13);  // gpt_ln.py's 13 forward kernels per layer (torch_trace_test.cpp)
  const std::string gz = (d.path / "seed.json.gz").string();
  gzFile f = gzopen(gz.c_str(), "wb");
  const std::string text = seed_text();
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  gzclose(f);
  auto packed = import_torch_trace(gz, gpt_ln(), options());
  ASSERT_TRUE(packed.has_value()) << packed.error().str();
  EXPECT_EQ(packed->stack["phases"], plain->stack["phases"]);
  EXPECT_EQ(packed->summary.events, plain->summary.events);
}

TEST(TorchTraceRead, SpecialFilesAreRefusedWithoutBlocking) {
  Dir d;
  const std::string fifo = (d.path / "trace.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(error_of(fifo).find("is a FIFO (named pipe), expected a regular trace file"), std::string::npos);
  EXPECT_NE(error_of("/dev/zero").find("is a character device"), std::string::npos);
  EXPECT_NE(error_of(d.path.string()).find("is a folder"), std::string::npos);
  EXPECT_NE(error_of((d.path / "missing.json").string()).find("file does not exist"), std::string::npos);
}

TEST(TorchTraceRead, LongTokensAndDeepNestingAreRefusedByName) {
  Dir d;
  // 2 MiB in one string: refused at 1 MiB, before nlohmann's lexer holds it whole.
  EXPECT_NE(error_of(d.write("token.json", "{\"traceEvents\": [{\"name\": \"" + std::string(2 << 20, 'k') + "\"}]}"))
                .find("string or number longer than 1 MiB"),
            std::string::npos);
  EXPECT_NE(error_of(d.write("digits.json", "{\"traceEvents\": [{\"ts\": " + std::string(2 << 20, '7') + "}]}"))
                .find("longer than 1 MiB"),
            std::string::npos);
  // 100,000 levels: refused at 128, so the reader's stack of frames stays small.
  EXPECT_NE(error_of(d.write("deep.json", "{\"traceEvents\": " + std::string(100000, '[') + std::string(100000, ']') + "}"))
                .find("nested deeper than 128 levels"),
            std::string::npos);
}

TEST(TorchTraceRead, IdsBeyondSixtyFourBitsAreAbsentNotConverted) {
  Dir d;
  std::string text = seed_text();
  // Every correlation id 1e300: no launch is tied to a kernel any more (with UBSan, converting one would abort).
  for (std::size_t at = 0; (at = text.find("\"correlation\":", at)) != std::string::npos; at += 14)
    text.replace(at, 14, "\"correlation\":1e300,\"c\":");
  EXPECT_NE(error_of(d.write("ids.json", text)).find("no GPU kernels launched inside the step"), std::string::npos);
}

TEST(TorchTraceRead, AnInputDimsObjectNeverReachesThePreviousEventsInputs) {
  // Session 16's fuzz crash (fuzz/regressions/torch_trace/crash-input-dims-object-after-open-event.json): an event
  // that is not a complete CPU op ("ph": "B") keeps its inputs until the next event starts and frees them; the
  // reader kept a pointer to the input whose dims it was reading, and an "Input Dims" entry that is an object
  // holding an array made it read and write that freed input (AddressSanitizer: heap-use-after-free, so this test
  // fails under the asan preset without the fix). The trace has no kernels: the import must end with that error.
  Dir d;
  const std::string text = R"({"traceEvents": [
    {"ph": "B", "cat": "cpu_op", "name": "aten::mm", "tid": 1, "ts": 1, "dur": 2,
     "args": {"Input Dims": [[2, 3], [3, 4]]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "tid": 1, "ts": 4, "dur": 2,
     "args": {"Input Dims": [{"a": [[5]]}, [7, 8]]}}]})";
  EXPECT_NE(error_of(d.write("dims-object.json", text)).find("no GPU kernels"), std::string::npos);
}

TEST(TorchTraceRead, ImportOptionsAreHeldToTheModelLoadersRanges) {
  TraceImportOptions o = options();
  o.layers = 99999999;
  EXPECT_NE(error_of(kSeed, o).find("--layers: expected 0 (the model's) to 16384"), std::string::npos);
  o = options();
  o.seq = (1 << 24) + 1;
  EXPECT_NE(error_of(kSeed, o).find("--seq: expected"), std::string::npos);
  o = options();
  o.micro_batch = 0;
  EXPECT_NE(error_of(kSeed, o).find("--micro-batch: expected"), std::string::npos);
  o = options();
  o.host_step_time_s = 1e308;
  EXPECT_NE(error_of(kSeed, o).find("--host-step-time: expected seconds in (0, 3600)"), std::string::npos);
}

}  // namespace
}  // namespace scalescope::calib
