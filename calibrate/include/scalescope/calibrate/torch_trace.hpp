// Import of a one-GPU PyTorch profiler (Kineto) Chrome trace of one training step into a stack profile
// (models/stack_profile.hpp): the user's own kernels, with their measured times, as rows the cost model scales to
// other shapes and plans (`scalescope import torch-trace`, docs/stack-profile.md).
//
// What is read (torch.profiler.profile(activities=[CPU, CUDA], record_shapes=True[, profile_memory=True])
// .export_chrome_trace(), plain or gzip): cpu_op events (name, thread, time, "Input Dims", "Input type",
// "Sequence number"), user annotations (ProfilerStep#N, Optimizer.step#..., Optimizer.zero_grad#...), CUDA
// runtime/driver launch calls and the GPU kernels, copies and memsets they launched (args.correlation), and
// [memory] events. Everything else is skipped. The reader streams (SAX); its memory grows with the events kept,
// not with the file.
//
// Steps:
//  1. The step: the last ProfilerStep# annotation; without one, the whole trace when it holds at most one
//     optimizer step (else an error: several steps and no marker).
//  2. Each GPU activity launched inside the step is tied to its launch call (correlation id) and to the innermost
//     and outermost CPU ops around that call on the launching thread. Phase: inside Optimizer.step or
//     Optimizer.zero_grad -> optimizer; under an autograd::engine::evaluate_function op (the backward thread) ->
//     backward; else forward. NCCL kernels are communication, left to the collective model.
//  3. Layers: the forward kernels (by launch) are searched for L repetitions of one kernel-name block (L = the
//     model's layers, or --layers when the trace ran fewer); what precedes is the embedding, what follows the
//     final norm, LM head and loss. Backward kernels follow their autograd node to the forward op that made it
//     (the "Sequence number" both carry), so each lands in the layer (or embedding / head) whose forward made it.
//  4. Rows: each kernel's cost class and the expression its size scales by, from the innermost op's input
//     shapes: GEMMs (aten::mm, addmm, bmm, baddbmm, _scaled_mm, linear) -> m, n, k as symbols (T tokens, H, Q, K,
//     F, ... per rank), by matching the trace's values and the layer position (projections before the
//     attention kernel read H and write Q/K; the one after reads Q; the MLP's first reads H, its last F);
//     flash / efficient / cuDNN attention -> an attention row with the op's q/k shapes; everything else ->
//     memory-bound with the byte count of its inputs and output, scaled by the symbol expression of its largest
//     tensor's element count (T*H, T*F, Vu*H, ...); a kernel whose size matches no expression keeps its time
//     (fixed) and is counted in the import summary. Like rows of the L layers are merged and averaged.
//  5. Host: the CPU time of each layer's forward and backward and of the rest of the step, from the trace,
//     divided by the profiler's dilation D, which one unprofiled step time at a shape where the GPU idles
//     (--host-step-time at --host-shape) fixes: S_host = (host time of the step outside the optimizer) / D +
//     max(optimizer host / D, optimizer GPU time). Without it the profiled host time is kept (a warning: it
//     over-states host-bound steps). Kernel gap: the median idle between back-to-back kernels on one stream.
//  6. Memory (with [memory] events): allocated at the step's start (states), the forward's growth per layer
//     (activations), and the rest at the step's peak, as anchors of the base stack's rules.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/models/model_spec.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::calib {

struct TraceImportOptions {
  int micro_batch = 0;  ///< sequences per micro-batch in the traced step (required)
  int seq = 0;          ///< sequence length of the traced step (0: the model's seq_len)
  int layers = 0;       ///< transformer layers the traced program ran (0: the model's)
  std::string base = "pytorch-eager";  ///< built-in stack whose memory rules and properties the import starts from
  std::optional<double> host_step_time_s;  ///< unprofiled step time at host_micro_batch x host_seq (GPU idle)
  /// Optional: the same host-bound timing in several processes (2 to 64). host_step_time_s defaults to their
  /// median; the stack keeps each relative to it (host.process_samples: a plan of N ranks waits for the
  /// expected slowest of N, FrameworkHostCost::slowest_of).
  std::vector<double> host_process_times_s;
  int host_micro_batch = 1, host_seq = 0;
  std::optional<double> step_time_s;  ///< unprofiled step time at the trace's shape, for the record
  std::string name;                   ///< the stack's name (default: the trace file's stem)
  std::string software;               ///< e.g. "torch 2.11.0+cu130", for the record
  /// The program's DDP runs with gradient_as_bucket_view=True: no gradient copies into and out of the buckets
  /// (default: torch's default, False; the stack's property ddp_grad_copies).
  bool ddp_bucket_view = false;
  /// Every memory row moved by the elementwise sweep, as imports did before session 26 (default false: the
  /// elementwise rows linearly in their bytes, `scaling: "bytes"`; docs/stack-profile.md).
  bool memory_scaling_sweep = false;
  std::function<void(const std::string&)> progress;
};

struct TraceImportSummary {
  std::string gpu;
  std::size_t events = 0, kernels = 0;
  double step_cpu_s = 0, gpu_busy_s = 0;
  double layer_forward_gpu_s = 0, layer_backward_gpu_s = 0, edge_gpu_s = 0, optimizer_gpu_s = 0, comm_gpu_s = 0;
  double fixed_gpu_s = 0;  ///< time in rows that do not scale (unmatched sizes)
  double host_dilation = 1.0;
  int layer_period = 0;
  std::vector<std::string> notes;
};

struct TraceImport {
  Json stack;  ///< scalescope.stack/1
  TraceImportSummary summary;
};

/// Reads `file` and builds the stack profile of the program it traced, running `model`.
Expected<TraceImport> import_torch_trace(const std::string& file, const models::ModelSpec& model,
                                         const TraceImportOptions& options);

}  // namespace scalescope::calib
