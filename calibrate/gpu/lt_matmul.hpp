// One cuBLASLt matrix product (descriptors, layouts, the heuristic's first algorithm) for a
// calibration dtype and shape; see scalescope/calibrate/gemm_shapes.hpp for the conventions.
#pragma once

#include <cublasLt.h>

#include <string>

#include "kernels.hpp"
#include "scalescope/calibrate/gemm_shapes.hpp"

namespace scalescope::gpu {

/// cuBLASLt types of one calibration dtype.
struct LtTypes {
  cudaDataType_t ab = CUDA_R_16BF;  ///< A and B
  cudaDataType_t cd = CUDA_R_16BF;  ///< C and D
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  ElemType in = ElemType::bf16;   ///< element type of A and B in memory
  ElemType out = ElemType::bf16;  ///< element type of D
  const char* ab_name = "bf16";
  const char* cd_name = "bf16";
  const char* compute_name = "CUBLAS_COMPUTE_32F";
  bool fast_accum = false;  ///< FP8: CUBLASLT_MATMUL_DESC_FAST_ACCUM (no split accumulation)
};
LtTypes lt_types(calib::GemmDtype d);

/// Workspace offered to the heuristic (32 MiB, what NVIDIA suggests for Hopper).
inline constexpr std::size_t kLtWorkspaceBytes = 32ull << 20;

/// A cuBLASLt handle created with `device` current (it stays current afterwards), destroyed with
/// its owner.
class LtHandle {
 public:
  explicit LtHandle(int device);
  ~LtHandle();
  LtHandle(LtHandle&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  LtHandle(const LtHandle&) = delete;
  LtHandle& operator=(const LtHandle&) = delete;
  LtHandle& operator=(LtHandle&&) = delete;
  cublasLtHandle_t get() const { return h_; }

 private:
  cublasLtHandle_t h_ = nullptr;
};

class LtMatmul {
 public:
  LtMatmul(cublasLtHandle_t handle, const LtTypes& t, const calib::GemmShape& g);
  ~LtMatmul();
  LtMatmul(const LtMatmul&) = delete;
  LtMatmul& operator=(const LtMatmul&) = delete;

  /// False when the heuristic returned no algorithm; why() says what it answered.
  bool has_algo() const { return has_algo_; }
  const std::string& why() const { return why_; }
  /// D = op(A) op(B) (alpha 1, beta 0) on stream s; throws GpuError when cuBLASLt fails.
  void run(const void* a, const void* b, void* d, void* workspace, cudaStream_t s) const;

 private:
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t op_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulHeuristicResult_t heur_{};
  bool has_algo_ = false;
  std::string why_;
};

}  // namespace scalescope::gpu
