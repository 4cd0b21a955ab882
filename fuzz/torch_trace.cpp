// Fuzz target: PyTorch profiler (Kineto) traces -> import_torch_trace (what `scalescope import torch-trace` does:
// the streaming reader, the step analysis, the rows and the stack document, which must load). The bytes are
// written to an in-memory file (memfd) the importer opens by its /proc path, as it opens a user's trace.
#include <sys/mman.h>
#include <unistd.h>

#include <string>

#include "fuzz_common.hpp"
#include "scalescope/calibrate/torch_trace.hpp"
#include "scalescope/models/model_spec.hpp"

namespace {

using namespace scalescope;

/// validation/programs/gpt-ln-0.5b.json, the program of the seed (fuzz/seeds/torch_trace/, trimmed from its
/// session-9 H100 trace to 2 layers).
const models::ModelSpec& gpt_ln() {
  static const models::ModelSpec m = [] {
    auto j = parse_json_text(R"({"name": "gpt-ln-0.5b", "layers": 12, "hidden": 1600, "heads": 25, "kv_heads": 25,
        "ffn_hidden": 6400, "ffn": "gelu", "norm": "layernorm", "bias": true, "vocab": 50304,
        "tied_embeddings": false, "seq_len": 4096, "positional": "none"})", "gpt-ln-0.5b.json");
    return models::model_from_json(j.value(), "gpt-ln-0.5b.json").value();
  }();
  return m;
}

struct MemFile {
  int fd = ::memfd_create("fuzz-trace", MFD_CLOEXEC);
  std::string path = "/proc/self/fd/" + std::to_string(fd);
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const MemFile file;
  if (file.fd < 0) __builtin_trap();
  if (::ftruncate(file.fd, 0) != 0 || ::pwrite(file.fd, data, size, 0) != static_cast<ssize_t>(size)) __builtin_trap();
  calib::TraceImportOptions o;
  o.micro_batch = 4;
  o.seq = 768;
  o.layers = 2;
  if (size % 2 == 1) {  // half the inputs also solve for the profiler's dilation (torch_trace.hpp, step 5)
    o.host_step_time_s = 0.02;
    o.host_seq = 32;
  }
  fuzz::check(calib::import_torch_trace(file.path, gpt_ln(), o), [](const calib::TraceImport& t) {
    (void)dump_json(t.stack);  // kernel and op names from the trace reach JSON output
  });
  return 0;
}
