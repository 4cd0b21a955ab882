// Compute-communication interference per kernel, from the measured rows of a calibration profile's
// `interference` section (scalescope-calibrate --sections interf; docs/profile-format.md).
//
// What the rows show (4x H200, calibrate/profiles/raw/h200x4/interf/): how much a kernel slows down
// beside a running NCCL collective depends on how many SMs it could use. NCCL's blocks hold some SMs
// for the whole collective; a GEMM with about one wave of output tiles then needs a second wave
// (x2.1 for 512x4096x2048, x1.9 for 2048x4096x2048), one with many waves loses little (x1.3 for
// 8192x4096x2048, x1.04 for 8192^3). So a GEMM's compute slowdown is a curve in its output size
// m x n. How much a collective slows down beside a kernel depends mostly on the kernel's length: the
// collective's blocks get SMs where a kernel ends (x1.2 beside 50-200 us GEMMs, x1.7 beside 550 us
// ones, x2.4 beside 1.6 ms ones; x1.5 beside a 35 us copy kernel, x2.5 beside a 520 us one). So
// that is a curve in the kernel's time. Memory-bound kernels have their own two curves, both in time.
//
// Curves: for every measured compute kernel, the median over its collectives (all_gather,
// reduce_scatter, all_reduce; covered windows only; sendrecv rows are not used, see
// counts_as_collective) of each slowdown, at x = ln(m n) or ln(its alone
// time, median over its rows). Points with equal x are merged (median). Between points, y is
// linear in x; beyond the first and last point it is held (no extrapolation).
//   GEMM, batched b times:  slowed = G_slowed(ln(b m n)),   slows = G_slows(ln t)
//   flash attention (forward or backward), b batch, H heads on the rank, s sequence: as a GEMM with
//     as many 256 x 128 output tiles as the kernel has 128-row blocks (ASSUMED tiling: FlashAttention-2
//     runs one block per 128 query rows and head), output = 32768 b H ceil(s / 128)
//   memory-bound:  slowed = M_slowed(ln t),   slows = M_slows(ln t)
// A curve without points gives 1 (nothing measured: no interference).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scalescope/sim/units.hpp"

namespace scalescope::models {

/// How one kernel and a collective on its GPU slow each other down (1 = not at all).
struct KernelInterference {
  double slowed = 1.0;  ///< the kernel's time multiplier while a collective runs beside it
  double slows = 1.0;   ///< the time multiplier it puts on a collective running beside it
};

/// One measured (compute kernel, collective) pair of the profile `interference` section: how much
/// slower each ran beside the other than alone (scalescope-calibrate's `interf` section).
struct InterferenceSample {
  std::string compute;               ///< e.g. "bf16 GEMM 8192x8192x8192"
  std::string kernel_class;          ///< "gemm" | "memory"
  std::string op;                    ///< the collective, e.g. "all_gather"
  std::int64_t m = 0, n = 0, k = 0;  ///< GEMM rows: cuBLAS m x n x k, read from `compute`
  Seconds compute_alone;             ///< the compute kernel's time alone
  std::optional<double> compute_slowdown;  ///< compute time beside / alone (when the window was covered)
  std::optional<double> coll_slowdown;     ///< collective time beside / alone (when covered)
};

/// True for the rows the model uses: all_gather, reduce_scatter and all_reduce. sendrecv rows (newer
/// runs measure them too) are read but not used yet: transfers take the collectives' factors.
bool counts_as_collective(const InterferenceSample& row);

class InterferenceCurves {
 public:
  InterferenceCurves() = default;
  explicit InterferenceCurves(const std::vector<InterferenceSample>& rows);

  bool empty() const;
  /// A GEMM with `output_elements` (batch x m x n) that takes `time` alone.
  KernelInterference gemm(double output_elements, Seconds time) const;
  /// A flash-attention kernel over `batch` x `heads` x `seq` query rows that takes `time` alone.
  KernelInterference attention(std::int64_t batch, std::int64_t heads, std::int64_t seq, Seconds time) const;
  /// A memory-bound kernel that takes `time` alone.
  KernelInterference memory(Seconds time) const;
  /// The four curves' points, for provenance, e.g. "GEMM slowed by output elements: 2.1M x2.09, ...".
  std::string describe() const;

 private:
  struct Curve {
    std::vector<std::pair<double, double>> points;  ///< (x, y), x ascending, distinct
    double at(double x) const;
  };
  Curve gemm_slowed_, gemm_slows_, memory_slowed_, memory_slows_;
};

}  // namespace scalescope::models
