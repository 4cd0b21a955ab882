// cuBLASLt matrix products of the calibration program's GEMM section.
#include "lt_matmul.hpp"

#include <cstdint>

#include "check.hpp"

namespace scalescope::gpu {

LtTypes lt_types(calib::GemmDtype d) {
  LtTypes t;
  switch (d) {
    case calib::GemmDtype::bf16:
      break;  // the defaults
    case calib::GemmDtype::fp16:
      t.ab = t.cd = CUDA_R_16F;
      t.in = t.out = ElemType::f16;
      t.ab_name = t.cd_name = "fp16";
      break;
    case calib::GemmDtype::tf32:
      t.ab = t.cd = CUDA_R_32F;
      t.in = t.out = ElemType::f32;
      t.ab_name = t.cd_name = "fp32";
      t.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
      t.compute_name = "CUBLAS_COMPUTE_32F_FAST_TF32";
      break;
    case calib::GemmDtype::fp32:
      t.ab = t.cd = CUDA_R_32F;
      t.in = t.out = ElemType::f32;
      t.ab_name = t.cd_name = "fp32";
      break;
    case calib::GemmDtype::fp8_e4m3:
    case calib::GemmDtype::fp8_e4m3_fast:
      t.ab = CUDA_R_8F_E4M3;
      t.in = ElemType::fp8_e4m3;
      t.ab_name = "fp8_e4m3";
      t.fast_accum = d == calib::GemmDtype::fp8_e4m3_fast;
      break;  // C and D stay bf16
  }
  return t;
}

LtHandle::LtHandle(int device) {
  SS_CUDA(cudaSetDevice(device));
  SS_CUBLAS(cublasLtCreate(&h_));
}

LtHandle::~LtHandle() {
  if (h_ != nullptr) cublasLtDestroy(h_);
}

LtMatmul::LtMatmul(cublasLtHandle_t handle, const LtTypes& t, const calib::GemmShape& g)
    : handle_(handle) {
  const auto m = static_cast<std::uint64_t>(g.m), n = static_cast<std::uint64_t>(g.n),
             k = static_cast<std::uint64_t>(g.k);
  const cublasOperation_t ta = g.transa == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t tb = g.transb == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
  SS_CUBLAS(cublasLtMatmulDescCreate(&op_, t.compute, CUDA_R_32F));
  SS_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  SS_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  if (t.fast_accum) {
    const std::int8_t fast = 1;
    SS_CUBLAS(cublasLtMatmulDescSetAttribute(op_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  }
  // Column-major layouts as stored: A is m x k (N) or k x m (T); B is k x n (N) or n x k (T).
  if (ta == CUBLAS_OP_N)
    SS_CUBLAS(cublasLtMatrixLayoutCreate(&a_, t.ab, m, k, static_cast<std::int64_t>(m)));
  else
    SS_CUBLAS(cublasLtMatrixLayoutCreate(&a_, t.ab, k, m, static_cast<std::int64_t>(k)));
  if (tb == CUBLAS_OP_N)
    SS_CUBLAS(cublasLtMatrixLayoutCreate(&b_, t.ab, k, n, static_cast<std::int64_t>(k)));
  else
    SS_CUBLAS(cublasLtMatrixLayoutCreate(&b_, t.ab, n, k, static_cast<std::int64_t>(n)));
  SS_CUBLAS(cublasLtMatrixLayoutCreate(&c_, t.cd, m, n, static_cast<std::int64_t>(m)));

  cublasLtMatmulPreference_t pref = nullptr;
  SS_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
  const std::uint64_t ws = kLtWorkspaceBytes;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
      pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  int returned = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(handle_, op_, a_, b_, c_, c_, pref, 1, &heur_, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  has_algo_ = st == CUBLAS_STATUS_SUCCESS && returned > 0 && heur_.state == CUBLAS_STATUS_SUCCESS;
  if (!has_algo_)
    why_ = std::string("cublasLtMatmulAlgoGetHeuristic: ") + cublasLtGetStatusName(st) + ", " +
           std::to_string(returned) + " algorithms";
}

LtMatmul::~LtMatmul() {
  if (c_ != nullptr) cublasLtMatrixLayoutDestroy(c_);
  if (b_ != nullptr) cublasLtMatrixLayoutDestroy(b_);
  if (a_ != nullptr) cublasLtMatrixLayoutDestroy(a_);
  if (op_ != nullptr) cublasLtMatmulDescDestroy(op_);
}

void LtMatmul::run(const void* a, const void* b, void* d, void* workspace, cudaStream_t s) const {
  const float alpha = 1.0f, beta = 0.0f;
  SS_CUBLAS(cublasLtMatmul(handle_, op_, &alpha, a, a_, b, b_, &beta, d, c_, d, c_, &heur_.algo,
                           workspace, kLtWorkspaceBytes, s));
}

}  // namespace scalescope::gpu
