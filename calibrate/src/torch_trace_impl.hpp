// Internal pieces of the torch-trace import (torch_trace.hpp): the events kept from a Kineto trace, the step's
// structure (phases, layers) and the symbol matching of sizes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scalescope/calibrate/torch_trace.hpp"

namespace scalescope::calib::trace {

/// One input of a CPU op: its dims (a tensor) or, for a tensor list, the element count of all its tensors.
struct OpInput {
  std::vector<std::int64_t> dims;
  double elements = 0.0;  ///< product of dims (a tensor), sum over tensors (a list); 0 for scalars
  std::string type;       ///< "float", "c10::BFloat16", "long int", ... ("" when not recorded)
  bool list = false;
};

struct CpuOp {
  std::uint32_t name = 0;
  std::int64_t tid = 0;
  double ts = 0.0, dur = 0.0;  ///< microseconds
  std::int64_t seq = -1;       ///< "Sequence number" (autograd node), -1 when absent
  std::vector<OpInput> inputs;
};

struct Launch {  ///< a CUDA runtime / driver call that carries a correlation id
  std::uint32_t name = 0;
  std::int64_t tid = 0;
  double ts = 0.0, dur = 0.0;
  std::int64_t correlation = -1;
};

struct GpuActivity {
  std::uint32_t name = 0;
  enum class Kind : std::uint8_t { kernel, memcpy, memset } kind = Kind::kernel;
  double ts = 0.0, dur = 0.0;
  std::int64_t correlation = -1, stream = -1;
};

struct Annotation {
  std::uint32_t name = 0;
  std::int64_t tid = 0;
  double ts = 0.0, dur = 0.0;
};

struct MemoryEvent {
  double ts = 0.0, total_allocated = 0.0, bytes = 0.0;
  int device_type = 0;  ///< 1: CUDA
};

struct Events {
  std::vector<std::string> names;  ///< interned
  std::vector<CpuOp> ops;
  std::vector<Launch> launches;
  std::vector<GpuActivity> gpu;
  std::vector<Annotation> annotations;
  std::vector<MemoryEvent> memory;
  std::string gpu_name;
  std::size_t events = 0;
  const std::string& name(std::uint32_t i) const { return names[i]; }
};

/// Streams the file (gzip when it starts with the gzip magic) through a SAX reader.
Expected<Events> read_events(const std::string& file, const std::function<void(const std::string&)>& progress);

enum class Phase : std::uint8_t { forward, backward, optimizer, comm };

/// A GPU activity launched inside the step, with what launched it.
struct Kernel {
  std::size_t gpu = 0;        ///< index into Events::gpu
  std::size_t launch = 0;     ///< index into Events::launches
  std::int64_t inner = -1;    ///< innermost CPU op around the launch (index into Events::ops), -1 none
  std::int64_t outer = -1;    ///< outermost
  std::int64_t forward_op = -1;  ///< backward kernels: the forward op that made their autograd node
  Phase phase = Phase::forward;
  int segment = -1;  ///< forward/backward: -1 embedding, 0..L-1 layer, L head; optimizer: -2
};

struct Step {
  double t0 = 0.0, t1 = 0.0;
  std::int64_t main_tid = 0;
  std::vector<Kernel> kernels;  ///< by launch time
  std::vector<std::pair<double, double>> optimizer_windows;  ///< sorted, overlapping ones merged
  int layers = 0;
  int period = 0;  ///< forward kernels per layer
  std::vector<double> layer_start_ts;  ///< CPU time of each layer's first forward launch, and the head's
  /// The main thread's waits for the GPU in the step (cudaStreamSynchronize, cudaEventSynchronize,
  /// cudaDeviceSynchronize: a read-back such as .tolist() or .item()), {start, duration}, by start.
  std::vector<std::pair<double, double>> syncs;
  /// Start of the first such wait in each layer's forward (between its first launch and the next layer's), -1 none.
  std::vector<double> layer_sync_ts;
  /// Total wait of the syncs that start in [a, b).
  double sync_wait(double a, double b) const;
  /// Whether every layer's forward waits (layer_sync_ts all set): the forward is then split at the first wait.
  bool waits_in_every_layer() const {
    return layers > 0 && std::all_of(layer_sync_ts.begin(), layer_sync_ts.end(), [](double t) { return t >= 0; });
  }
};

/// Whether CPU time t lies in one of the step's optimizer windows (sorted and merged by analyse_step).
bool in_optimizer(const Step& step, double t);

/// Finds the step, ties kernels to launches and ops, and assigns phases and layers.
Expected<Step> analyse_step(const Events& ev, int layers, const std::string& file, TraceImportSummary& summary);

/// Symbol values at the trace (names of models::stack_base_symbols() and the memory extras).
using Symbols = std::map<std::string, double>;

/// The rows of every phase (stack JSON), with what did not scale counted in `summary`.
/// `linear_elementwise`: elementwise memory rows carry `scaling: "bytes"` (TraceImportOptions::memory_scaling_sweep
/// off); otherwise every memory row keeps the sweep.
Json build_rows(const Events& ev, const Step& step, const Symbols& sym, TraceImportSummary& summary,
                bool linear_elementwise);

/// The op of the step's first GEMM that ran in FP8 (the rows' own GEMM classification: torch._scaled_mm, or a
/// GEMM op with Float8 inputs), or nullopt when every GEMM ran in 16 or 32 bits.
std::optional<std::string> fp8_gemm_op(const Events& ev, const Step& step);

/// Parameter tensors per transformer layer: the step's AccumulateGrad nodes less the embedding, final norm and head
/// tensors, over the layers (the model's count of weights when the trace has none); `nodes` gets the node count.
double parameter_tensors_per_layer(const Events& ev, const Step& step, const models::ModelSpec& model,
                                   double* nodes = nullptr);

/// Gradient accumulation (docs/stack-profile.md, "Gradient accumulation"): a trace of one micro-batch whose
/// gradients start as None has no accumulation kernels (AccumulateGrad hands the first gradient over), while
/// micro-batches 2..m of a real step add theirs into `.grad`. Appends, when the trace has none, memory rows that run
/// when m > 1 and read two and write one gradient per parameter; says what it did in `summary.notes`.
void add_accumulation_rows(const Events& ev, const Step& step, const models::ModelSpec& model, Json& phases,
                           TraceImportSummary& summary);

}  // namespace scalescope::calib::trace
