// Compute-cost model of one GPU: GEMMs, attention, memory-bound kernels and launch overhead, from a
// calibration profile when there is one and from a datasheet roofline otherwise.
//
// GEMM (m, n, k, dtype), FLOPs F = 2mnk, operand bytes D = e(mk + kn + mn) (e = bytes per element):
//   with measured shapes of that dtype (profile): the shape is a point x = (log2 m, log2 n, log2 k).
//     An exact hit returns the measured time (provenance "measured"). Otherwise the achieved
//     throughput is interpolated by inverse-distance weighting in log space over the K = 4 nearest
//     measured shapes (Euclidean distance d_i in x; weight 1/d_i^2; ties by sample order):
//         log R = sum_i w_i log R_i / sum_i w_i,   R_i = 2 m_i n_i k_i / t_i,
//     clamped to the dtype's peak, and  t = max(F / R, D / B_hbm)  (provenance "fitted": derived from
//     measurements). Far outside the measured range this returns the nearest shapes' throughput.
//   without (datasheet roofline):  t = max(F / (P_dtype * eta_gemm), D / (B_hbm * eta_hbm)),
//     P_dtype from the cluster's GpuSpec (datasheet) and eta_gemm an ASSUMED achievable fraction.
// Attention (flash, FLOPs F passed in: forward 4 b H s^2 d / 2 causal, backward 2.5x the forward):
//   with measured rows of that dtype and causality (profile `attention` section), separately for the
//     forward and the backward pass: the shape is a point y = (log2(b H), log2 s, log2 d) (b batch,
//     H query heads on the rank, s sequence, d head size; kv heads only decide an exact hit). An exact
//     hit returns the measured time scaled by F / F_row (provenance "measured"); otherwise the
//     achieved rate R_i = F_i / t_i of the K = 4 nearest rows is averaged in log space with weights
//     1/d_i^2 as for GEMMs (rows at distance 0 take all the weight, equally), clamped to peak, and
//     t = max(F / R, IO / B_mem) ("fitted").
//   without:  t = max(F / (P * eta_attn), IO / B_mem)  (eta_attn assumed).
//   Rows carry the kernel that was timed (`backend`: flash = FlashAttention-2 via SDPA, the default of rows without
//   one; cudnn = cuDNN's fused attention, which torch's SDPA picks on Hopper and Transformer Engine runs). A shape
//   is priced from the rows of its own backend when the profile has any of that dtype and causality, else from
//   all of them (cuDNN ran 1.7-2.1x flash's rate on an H100: validation/nemo/h100-attention/). Varlen calls
//   (packed documents, sliding windows) priced from varlen rows use tile work instead of FLOPs in F, F_i and R_i:
//   the tiles FlashAttention-2 computes (attention_tiles.hpp), so whole blocks per document count; without varlen
//   rows they take the flash rows by FLOPs, a window as its AttentionShape::span_shape().
// Attention dropout (AttentionShape::dropout > 0, a random mask per score drawn inside the kernel): the shape's time
//   without dropout x the kernel's dropout factor for the pass, f = t(dropout) / t(none). f is the geometric mean
//   over the profile's `attention` rows with `dropout` that have a row of the same shape, backend and dtype
//   without it; for a backend without such pairs, the factors measured on one H200 (validation/attention/
//   dropout24: torch 2.11 SDPA, dropout 0.1, GPT-3's per-rank shapes, within 3% of each other): FlashAttention-2
//   1.202 forward / 1.123 backward, cuDNN 2.042 / 1.201 (varlen takes flash's). The mask's cost does not depend on
//   p (every score draws a number), so one factor serves every p > 0.
// FP8 accumulation (dtype "fp8_fast": an fp8_e4m3 GEMM with cuBLASLt's fast accumulation, as Transformer Engine
//   runs the forward GEMM of its delayed and current-scaling recipes; "fp8" rows are the default, split
//   accumulation, which TE keeps for dgrad and wgrad): with the profile's fp8_e4m3_fast rows, interpolated among
//   them as above; without, the fp8 time / s, s = t(split) / t(fast) = 1.054, the median measured on one H200
//   (validation/session32/fp8_accum.json: torch._scaled_mm at 16 shapes of the NeMo rows, 1.026-1.116; the
//   calibration grid's 122 forward shapes on the same lease: median 1.068).
// Memory-bound kernels (norms, activations, residual adds, RoPE, optimizer step):  t = bytes / B_mem,
//   B_mem = measured elementwise bandwidth, else measured HBM copy bandwidth, else datasheet HBM x
//   eta_elementwise (assumed).
// Launch: a kernel never takes less than the launch overhead L (the host issues kernels at most
//   every L): kernel_time(t) = max(t, L). L is measured when the profile has it, assumed otherwise.
// Energy (profile `power` section, docs/power.md): with one, every kernel also carries the energy it takes above the
//   GPU's idle draw, watts_c x time + joules_c x work for its class c (GEMM by precision, attention by backend,
//   memory-bound), measured on the profile's GPU (PowerModel); predict() turns a step's energy into the clock its
//   GPU holds under the power cap. Without one, energy is 0 and nothing changes.
// Every number carries its provenance (measured / fitted / datasheet / assumed) and source.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/models/attention_backend.hpp"
#include "scalescope/models/framework_host.hpp"
#include "scalescope/models/interference_curves.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/simulator.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope::models {

/// t(split accumulation) / t(fast accumulation) of an FP8 GEMM where the profile has no fast rows (header comment).
inline constexpr double kFp8FastAccumulationSpeedup = 1.054;

/// Where a number comes from, from most to least certain.
enum class Provenance : std::uint8_t { measured, fitted, datasheet, assumed };
inline constexpr int kNumProvenances = 4;
std::string_view to_string(Provenance p);
/// The less certain of the two.
constexpr Provenance weaker(Provenance a, Provenance b) { return a > b ? a : b; }

/// A scalar input of the model with its unit, provenance and source (for reports).
struct SourcedValue {
  std::string name;  ///< e.g. "gemm_efficiency"
  double value = 0.0;
  std::string unit;  ///< e.g. "TFLOP/s", "GB/s", "us", "fraction"
  Provenance provenance = Provenance::assumed;
  std::string source;
};

/// Duration of a kernel (or of a group of kernels) and the provenance of its least certain input.
struct KernelCost {
  KernelCost() = default;
  KernelCost(Seconds t, Provenance p, KernelInterference f = {}) : time(t), provenance(p), interference(f) {}

  Seconds time;
  Provenance provenance = Provenance::assumed;
  /// Measured interference of this kernel (interference_curves.hpp; 1 = none or not measured): its
  /// time multiplier while a collective runs on its GPU, and the multiplier it puts on that collective.
  KernelInterference interference;
  /// Energy the kernel takes on the GPU beyond its idle draw, in joules (0 without a power model; header comment).
  double energy = 0.0;
  /// A tensor-core kernel (GEMM, attention): its rate follows the SM clock, which the power cap lowers.
  bool tensor = false;
};

/// A GPU at its power cap (profile `power` section, docs/power.md), from its kernels run alone back to back for
/// seconds (validation/clocks/power_sweep.py; `scalescope calibrate import-power`). While a kernel of class c runs at
/// the profile's (burst) rate R it draws idle + watts_c + joules_per_unit_c x R: fitted per class over the sweep's
/// kernels of that class (bf16 GEMMs on H200: 100 W + 0.74 pJ per FLOP, within 4% from 1024^3 to 8192^3). Its
/// energy, E = watts_c t + joules_per_unit_c x work, does not change with the clock (measured: a GEMM's draw above
/// idle is linear in the SM clock, and its rate is proportional to it). Under the cap the GPU holds the clock at which
/// the draw stays at capped_w, so a step whose tensor-core kernels take T_t at the profile's rates, its other work
/// T_o and energy E, runs its tensor-core kernels at
///     r = min(1, T_t / (E / (capped_w - idle_w) - T_o))
/// of the profile's rates (memory-bound kernels keep theirs: HBM-bound, within 0.5% at every clock measured).
struct PowerClass {
  double watts = 0.0;            ///< the class's draw above idle that goes with time (W)
  double joules_per_unit = 0.0;  ///< and with work: per FLOP (GEMM, attention) or per byte (memory-bound)
  int kernels = 0;               ///< sweep kernels it was fitted on; 0: not measured
  bool measured() const { return kernels > 0; }
  double energy(double seconds, double work) const { return watts * seconds + joules_per_unit * work; }
};
struct PowerModel {
  double idle_w = 0.0;    ///< the GPU's draw with nothing running (W)
  double capped_w = 0.0;  ///< what it draws while the cap binds (W): the median of the capped kernels
  PowerClass gemm_bf16;   ///< 16-bit GEMMs (required)
  PowerClass gemm_fp8;    ///< FP8 GEMMs; unmeasured: gemm_bf16's time part, its work part x peak bf16 / peak fp8
  PowerClass attention_flash;  ///< FlashAttention (and varlen); unmeasured: gemm_bf16's
  PowerClass attention_cudnn;  ///< cuDNN fused attention; unmeasured: attention_flash's
  PowerClass memory;      ///< memory-bound kernels, per byte (required)
  std::string source;     ///< the section's `source` text
};

/// One measured GEMM: cuBLAS arguments (column-major C[m x n] = A[m x k] B[k x n]) and its time.
struct GemmSample {
  std::string dtype;  ///< "bf16", "fp16", "tf32", "fp32", "fp8"
  std::int64_t m = 0, n = 0, k = 0;
  Seconds time;
};

/// Shape of one flash-attention call: b sequences, H query heads and H_kv key/value heads (on this
/// rank), head size d, sequence s.
struct AttentionShape {
  std::int64_t batch = 1, heads = 1, kv_heads = 1, head_dim = 1, seq = 1;
  bool causal = true;
  AttentionBackend backend = AttentionBackend::flash;
  /// Sliding window (causal shapes): each query sees at most this many keys up to itself; 0: none. (Last, so that
  /// brace-initialised shapes keep their meaning.)
  std::int64_t window = 0;
  /// Dropout probability applied to the attention probabilities inside the kernel; 0: none. (Last, likewise.)
  double dropout = 0.0;
  /// FLOPs of the forward pass: 4 b H s^2 d, halved when causal (the kernel skips the masked half); a windowed
  /// shape has the FLOPs of its span_shape().
  double forward_flops() const;
  /// A windowed shape as scalescope prices it from kernels without windows (model_spec.hpp, sliding_window_span):
  /// batch x seq / span causal attentions of span = min(seq, 2 window) tokens, each query seeing about `window`
  /// keys; without a window, the shape itself.
  AttentionShape span_shape() const;
};

/// One measured flash-attention shape: forward and backward kernel time (profile `attention` rows).
struct AttentionSample {
  AttentionShape shape;
  std::string dtype = "bf16";
  Seconds forward, backward;
};

class StackProfile;  // stack_profile.hpp

/// What the compute model uses from a calibration profile (see compute_profile.hpp for the loader).
/// One measured Mamba-2 shape (profile `mamba` rows, validation/session33/ssd_kernels.py): the GPU time of each
/// kernel group of mamba_ssm's scan and gated RMSNorm at `batch` sequences of `seq` tokens.
struct MambaSample {
  std::int64_t batch = 1, seq = 1;
  int heads = 1, head_dim = 1, groups = 1, state = 1, chunk = 1;
  std::array<double, kNumMambaGroups> seconds{};  ///< by MambaGroup; 0: not measured
};

struct ComputeProfile {
  std::string source;  ///< the profile file, for provenance
  std::string gpu;     ///< GPU model named in the profile (may be empty)
  std::vector<GemmSample> gemms;
  std::optional<BytesPerSecond> hbm_bandwidth;         ///< measured device copy bandwidth (read + write)
  std::optional<BytesPerSecond> elementwise_bandwidth; ///< measured bandwidth of elementwise kernels
  /// The elementwise sweep itself, (bytes per kernel, bandwidth) by increasing bytes: small kernels reach
  /// less of HBM (H200: 48% at 12.6 MB, 77% at 50 MB, 93% at 201 MB of the 3.2 GB kernel's 4.27 TB/s).
  std::vector<std::pair<Bytes, BytesPerSecond>> elementwise_curve;
  std::optional<Seconds> launch_overhead;              ///< measured per-kernel launch overhead
  /// Measured launch + cudaStreamSynchronize of an empty kernel (memory.launch_sync_us): what a host that waits
  /// for the GPU takes to see it finish and go on (host synchronisation points, sim/host_dispatch.hpp).
  std::optional<Seconds> launch_sync;
  std::vector<AttentionSample> attention;              ///< measured flash-attention shapes (some with dropout)
  std::string attention_source;                        ///< the `attention` section's `source` text
  std::vector<InterferenceSample> interference;         ///< measured compute-communication pairs
  std::vector<MambaSample> mamba;                      ///< measured Mamba-2 kernel groups
  std::string mamba_source;                            ///< the `mamba` section's `source` text
  std::optional<PowerModel> power;                     ///< the `power` section
};

/// Numbers the model has to assume where nothing is measured; each default states its source.
struct ComputeAssumptions {
  /// Fraction of dense peak large GEMMs reach. Assumed 0.75: public cuBLAS bf16 measurements of
  /// large GEMMs reach about 0.7-0.8 of the datasheet peak on H100 SXM and A100 SXM.
  double gemm_efficiency = 0.75;
  /// The same for FP8 GEMMs, of the datasheet fp8 dense peak. 0.63: the median of the 280 fp8_e4m3
  /// shapes with m, n, k >= 2048 measured on GH100 (calibrate/profiles/h200x4.json: 1,255 TFLOP/s of
  /// 1,979), where the same shapes in bf16 reach 0.70; used without an fp8 profile.
  double fp8_gemm_efficiency = 0.63;
  /// Fraction of dense peak a flash-attention kernel reaches (forward and backward together).
  /// Assumed 0.5: FlashAttention-2 (Dao 2023) reports 50-73% of A100 peak forward and less backward.
  double attention_efficiency = 0.5;
  /// Fraction of the datasheet HBM bandwidth a GEMM's operand traffic reaches (roofline floor).
  /// Assumed 0.85: device copy kernels typically reach 80-90% of the datasheet HBM bandwidth.
  double hbm_efficiency = 0.85;
  /// Fraction of the datasheet HBM bandwidth elementwise kernels (norms, activations, Adam) reach.
  /// Assumed 0.7 (below a plain copy: reductions, several operands, imperfect fusion).
  double elementwise_efficiency = 0.7;
  /// Host-side launch overhead per kernel. Assumed 5 us (cudaLaunchKernel plus PyTorch eager
  /// dispatch; public measurements put each in the few-microsecond range).
  Seconds launch_overhead = microseconds(5.0);
};

class ComputeModel {
 public:
  /// Datasheet roofline for `gpu` (needs a bf16 or fp16 peak and the HBM bandwidth).
  static Expected<ComputeModel> datasheet(const GpuSpec& gpu, const ComputeAssumptions& assumptions = {});
  /// Measured where the profile has numbers, the datasheet roofline elsewhere.
  static Expected<ComputeModel> with_profile(const GpuSpec& gpu, ComputeProfile profile,
                                             const ComputeAssumptions& assumptions = {});

  /// One GEMM C[m x n] = A[m x k] B[k x n] in `dtype` ("bf16", "fp16", "tf32", "fp32", "fp8"), batched
  /// `batch` times. Without launch overhead (see kernel_time()).
  KernelCost gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::string_view dtype = "bf16",
                  std::int64_t batch = 1) const;
  /// A flash-attention kernel doing `flops` (already halved for causal masking if the kernel skips
  /// the masked half) and moving `io` bytes.
  KernelCost attention(Flops flops, Bytes io, std::string_view dtype = "bf16") const;
  /// The forward (backward = false) or backward pass of a flash-attention call of `shape` doing
  /// `flops` (forward_flops(), x 2.5 for the backward) and moving `io` bytes: measured rows when the
  /// profile has them, the assumed efficiency otherwise.
  KernelCost attention(const AttentionShape& shape, bool backward, Flops flops, Bytes io,
                       std::string_view dtype = "bf16") const;
  /// A memory-bound kernel moving `bytes` (read + written).
  KernelCost memory_bound(Bytes bytes) const;
  /// The same at the sweep's flat top (the largest row's bandwidth, whatever the size): time linear in the bytes.
  KernelCost memory_bound_linear(Bytes bytes) const;
  /// max(t, launch overhead): what a kernel of device time t costs on its stream.
  Seconds kernel_time(Seconds t) const { return t < launch_.time ? launch_.time : t; }
  KernelCost launch_overhead() const { return launch_; }
  /// The host's wait after a kernel it synchronises on has finished: the profile's launch_sync_us less its
  /// launch_overhead_us (the launch itself is issue time); 0 without a measurement.
  Seconds host_sync_latency() const { return sync_latency_; }

  /// Dense peak of `dtype` (fp8 also accepts "fp8_e4m3"); falls back to bf16, then fp16.
  FlopsPerSecond peak(std::string_view dtype = "bf16") const;
  /// The GPU the profile was measured on (the cluster's GPU without a profile).
  const std::string& gpu_name() const { return gpu_name_; }
  bool has_profile() const { return !profile_source_.empty(); }
  /// The software stacks whose kernels layer_cost() prices (stack_profile.hpp): for a plan, the first one whose
  /// `applies` holds (stack_for); when that one is imported (has a trace), the applicable imported stack traced
  /// nearest the plan's tokens per micro-batch (|log T / T_trace|, ties to the earlier); the built-in `fused` stack
  /// unless set.
  const std::shared_ptr<const StackProfile>& stack() const;
  const StackProfile& stack_for(const ModelSpec& spec, const Plan& plan) const;
  /// Whether some stack applies to the plan (predict() refuses a plan no stack describes).
  bool has_stack_for(const ModelSpec& spec, const Plan& plan) const;
  void set_stack(std::shared_ptr<const StackProfile> stack) { stacks_ = {std::move(stack)}; }
  void set_stacks(std::vector<std::shared_ptr<const StackProfile>> stacks) { stacks_ = std::move(stacks); }
  const std::vector<std::shared_ptr<const StackProfile>>& stacks() const { return stacks_; }
  /// A memory-bound kernel of a stack row that asks for it: bytes / (B_mem x factor); provenance "fitted" when
  /// `fitted` (the factor was fitted on measurements), else that of B_mem.
  KernelCost memory_bound(Bytes bytes, double factor, bool fitted) const;
  /// Host (CPU) cost of issuing the framework's kernels (framework_host.hpp); predict() makes the GPU
  /// wait for it when set. Unset by default: the host is assumed never to be the bottleneck.
  void set_host_cost(std::optional<FrameworkHostCost> cost) { host_cost_ = std::move(cost); }
  const std::optional<FrameworkHostCost>& host_cost() const { return host_cost_; }
  /// Compute-communication interference for the simulator (sim/simulator.hpp): the median compute and
  /// collective slowdowns over the profile's `interference` rows; none (1, 1) without them. With
  /// such rows every kernel cost also carries its own factors (KernelCost::interference, from
  /// InterferenceCurves); the task graph builders put them on the compute tasks, and the medians
  /// apply only to tasks without them.
  const Interference& interference() const { return interference_; }
  /// True when kernel costs carry per-kernel factors (a profile with `interference` rows, and no
  /// set_interference() since).
  bool per_kernel_interference() const { return !curves_.empty(); }
  const InterferenceCurves& interference_curves() const { return curves_; }
  /// Replaces the factors by `f` for every kernel (e.g. none, to compare; drops the per-kernel
  /// curves); `source` says where the factors come from.
  void set_interference(Interference f, std::string source);
  /// The factor attention dropout multiplies a pass's time by on `backend` (header comment).
  double attention_dropout_factor(AttentionBackend backend, bool backward) const;
  /// The profile's measured Mamba-2 shapes (empty without a `mamba` section): layer_costs scales a stack row group's
  /// modelled time by measured / modelled at the nearest of them (docs/hybrid.md).
  const std::vector<MambaSample>& mamba_samples() const { return mamba_; }
  /// The GPU at its power cap (profile `power` section), or none: then kernels carry no energy.
  const std::optional<PowerModel>& power() const { return power_; }
  /// The energy (J) of a GEMM of `dtype` that takes `seconds` at the profile's rate and does `flops`; 0 without a
  /// power model. Precisions the sweep did not measure take bf16's, their per-FLOP part x peak bf16 / peak dtype.
  double gemm_energy(std::string_view dtype, double seconds, double flops) const;
  const std::string& mamba_source() const { return mamba_source_; }
  /// Measured attention rows in use (0 without a profile `attention` section).
  std::size_t attention_rows() const { return attention_.size(); }
  /// The longest sequence of the measured whole-sequence attention rows (flash, cudnn; not varlen documents), 0
  /// without any: beyond it a shape's rate is held at the nearest rows' (predict() notes plans far past it).
  std::int64_t longest_attention_seq() const;
  /// Every input the model uses, with provenance and source, in a fixed order.
  std::vector<SourcedValue> inputs() const;

 private:
  ComputeModel() = default;
  /// `c` with the energy of a memory-bound kernel moving `bytes` (none without a power model).
  KernelCost with_energy(KernelCost c, Bytes bytes) const;
  std::optional<KernelCost> interpolate_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::string_view dtype,
                                             double flops, Bytes operands) const;

  std::string gpu_name_;
  std::string cluster_gpu_;  ///< the cluster's GPU, whose datasheet gives the peaks
  PeakFlops peak_;
  BytesPerSecond hbm_datasheet_;
  ComputeAssumptions assume_;
  std::string profile_source_;
  std::optional<KernelCost> interpolate_attention(const AttentionShape& shape, bool backward, std::string_view dtype,
                                                  double flops, Bytes io) const;

  std::vector<GemmSample> gemms_;
  std::vector<AttentionSample> attention_;  ///< rows without dropout
  std::vector<MambaSample> mamba_;
  std::string mamba_source_;
  std::optional<PowerModel> power_;
  std::string attention_source_;
  /// t(dropout) / t(none) of the forward and backward pass by backend (header comment); `measured_pairs` 0: built in.
  struct DropoutFactor {
    double forward = 1.0, backward = 1.0;
    int measured_pairs = 0;
  };
  std::array<DropoutFactor, 3> dropout_factor_{};
  bool has_fp8_fast_rows_ = false;  ///< the profile measured fp8_e4m3_fast GEMMs
  static std::array<DropoutFactor, 3> measured_dropout_factors(const std::vector<AttentionSample>& plain,
                                                               const std::vector<AttentionSample>& with_dropout,
                                                               std::array<DropoutFactor, 3> factors);
  std::vector<std::shared_ptr<const StackProfile>> stacks_;
  BytesPerSecond hbm_bw_;  ///< for GEMM operand traffic (roofline floor)
  Provenance hbm_prov_ = Provenance::datasheet;
  BytesPerSecond elementwise_bw_;  ///< for memory-bound kernels
  std::vector<std::pair<Bytes, BytesPerSecond>> elementwise_curve_;  ///< measured sweep (may be empty)
  /// elementwise_bw_ scaled by the measured sweep at a kernel of `bytes` (log-log interpolation,
  /// clamped to the sweep's ends; the largest row is elementwise_bw_ itself).
  BytesPerSecond elementwise_bw_at(Bytes bytes) const;
  Provenance elementwise_prov_ = Provenance::assumed;
  KernelCost launch_;
  Seconds sync_latency_{0.0};
  std::optional<FrameworkHostCost> host_cost_;
  Interference interference_;
  InterferenceCurves curves_;
  Provenance interference_prov_ = Provenance::assumed;
  std::string interference_source_;
};

}  // namespace scalescope::models
