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
// Attention (flash, causal-aware FLOPs passed in):  t = max(F / (P * eta_attn), IO / B_mem).
// Memory-bound kernels (norms, activations, residual adds, RoPE, optimizer step):  t = bytes / B_mem,
//   B_mem = measured elementwise bandwidth, else measured HBM copy bandwidth, else datasheet HBM x
//   eta_elementwise (assumed).
// Launch: a kernel never takes less than the launch overhead L (the host issues kernels at most
//   every L): kernel_time(t) = max(t, L). L is measured when the profile has it, assumed otherwise.
// Every number carries its provenance (measured / fitted / datasheet / assumed) and source.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope::models {

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
  Seconds time;
  Provenance provenance = Provenance::assumed;
};

/// One measured GEMM: cuBLAS arguments (column-major C[m x n] = A[m x k] B[k x n]) and its time.
struct GemmSample {
  std::string dtype;  ///< "bf16", "fp16", "tf32", "fp32", "fp8"
  std::int64_t m = 0, n = 0, k = 0;
  Seconds time;
};

/// What the compute model uses from a calibration profile (see compute_profile.hpp for the loader).
struct ComputeProfile {
  std::string source;  ///< the profile file, for provenance
  std::string gpu;     ///< GPU model named in the profile (may be empty)
  std::vector<GemmSample> gemms;
  std::optional<BytesPerSecond> hbm_bandwidth;         ///< measured device copy bandwidth (read + write)
  std::optional<BytesPerSecond> elementwise_bandwidth; ///< measured bandwidth of elementwise kernels
  std::optional<Seconds> launch_overhead;              ///< measured per-kernel launch overhead
};

/// Numbers the model has to assume where nothing is measured; each default states its source.
struct ComputeAssumptions {
  /// Fraction of dense peak large GEMMs reach. Assumed 0.75: public cuBLAS bf16 measurements of
  /// large GEMMs reach about 0.7-0.8 of the datasheet peak on H100 SXM and A100 SXM.
  double gemm_efficiency = 0.75;
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
  /// A memory-bound kernel moving `bytes` (read + written).
  KernelCost memory_bound(Bytes bytes) const;
  /// max(t, launch overhead): what a kernel of device time t costs on its stream.
  Seconds kernel_time(Seconds t) const { return t < launch_.time ? launch_.time : t; }
  KernelCost launch_overhead() const { return launch_; }

  /// Dense peak of `dtype` (fp8 also accepts "fp8_e4m3"); falls back to bf16, then fp16.
  FlopsPerSecond peak(std::string_view dtype = "bf16") const;
  const std::string& gpu_name() const { return gpu_name_; }
  bool has_profile() const { return !profile_source_.empty(); }
  /// Every input the model uses, with provenance and source, in a fixed order.
  std::vector<SourcedValue> inputs() const;

 private:
  ComputeModel() = default;
  std::optional<KernelCost> interpolate_gemm(std::int64_t m, std::int64_t n, std::int64_t k, std::string_view dtype,
                                             double flops, Bytes operands) const;

  std::string gpu_name_;
  PeakFlops peak_;
  BytesPerSecond hbm_datasheet_;
  ComputeAssumptions assume_;
  std::string profile_source_;
  std::vector<GemmSample> gemms_;
  BytesPerSecond hbm_bw_;  ///< for GEMM operand traffic (roofline floor)
  Provenance hbm_prov_ = Provenance::datasheet;
  BytesPerSecond elementwise_bw_;  ///< for memory-bound kernels
  Provenance elementwise_prov_ = Provenance::assumed;
  KernelCost launch_;
};

}  // namespace scalescope::models
