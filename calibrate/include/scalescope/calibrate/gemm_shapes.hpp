// GEMM shapes the GPU calibration program times: square sizes and the GEMMs of a transformer
// layer (forward and both backward products) for common hidden sizes and token counts.
//
// Shapes are cuBLAS (column-major) arguments: C[m x n] = op(A)[m x k] * op(B)[k x n].
// A linear layer Y[t x out] = X[t x in] * W[in x out] (row-major, weights stored [in, out]) maps to
//   forward  Y = X W      : NN, m = out, n = t,   k = in
//   dgrad    dX = dY W^T  : TN, m = in,  n = t,   k = out
//   wgrad    dW = X^T dY  : NT, m = out, n = in,  k = t
// (column-major C^T = B^T A^T turns each row-major product into these arguments). Every product
// costs 2*m*n*k FLOPs. cuBLASLt runs FP8 only in the TN layout on Hopper, so FP8 shapes keep
// (m, n, k) and use TN.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalescope::calib {

/// fp8_e4m3: cuBLASLt's default (split) accumulation, as Transformer Engine's dgrad and wgrad GEMMs;
/// fp8_e4m3_fast: the same with CUBLASLT_MATMUL_DESC_FAST_ACCUM, as TE's forward GEMMs (delayed and current scaling).
enum class GemmDtype { bf16, fp16, tf32, fp32, fp8_e4m3, fp8_e4m3_fast };

/// "bf16", "fp16", "tf32", "fp32", "fp8_e4m3", "fp8_e4m3_fast".
std::string_view gemm_dtype_name(GemmDtype d);
std::optional<GemmDtype> gemm_dtype_from_name(std::string_view name);
/// Either FP8 dtype (e4m3 operands, TN layout only).
constexpr bool is_fp8(GemmDtype d) { return d == GemmDtype::fp8_e4m3 || d == GemmDtype::fp8_e4m3_fast; }
/// Measuring order (most used in training first): bf16, fp8_e4m3, fp8_e4m3_fast, fp16, tf32, fp32.
std::vector<GemmDtype> all_gemm_dtypes();

struct GemmShape {
  char transa = 'N';  ///< 'N' or 'T', as passed to cuBLAS
  char transb = 'N';
  std::int64_t m = 0, n = 0, k = 0;
  std::string label;  ///< e.g. "square 4096", "qkv fwd h=4096 t=8192"

  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
};

/// SwiGLU intermediate size as in Llama: floor(8h/3) rounded up to a multiple of 256.
std::int64_t swiglu_ffn(std::int64_t hidden);

/// The six GEMMs of one transformer layer (qkv h->3h, attn_out h->h, mlp_up h->4h,
/// mlp_down 4h->h, swiglu_up h->2*ffn, swiglu_down ffn->h) for `tokens` rows; passes: forward
/// only, or forward + dgrad + wgrad.
std::vector<GemmShape> transformer_layer_gemms(std::int64_t hidden, std::int64_t tokens,
                                               bool with_backward);

/// The shape list for one dtype (before removing repeats):
///   bf16, fp8_e4m3: squares 1024..16384 + hidden {2048,4096,5120,8192,12288} x tokens
///                   {2048,4096,8192,16384} x 6 GEMMs x (fwd, dgrad, wgrad)       = 365 shapes
///   fp8_e4m3_fast, fp16, tf32: squares 1024..16384 + the same grid, forward only = 125 shapes
///   fp32:           squares 1024..8192 + hidden {2048,4096} x tokens {2048,8192}, forward = 28
///   quick (any):    squares 1024, 2048 + hidden 4096 x tokens 4096, forward       = 8 shapes
/// FP8 shapes are all TN (see the header comment). A problem (transa, transb, m, n, k) that
/// appears more than once is kept once, its labels joined with " | ".
std::vector<GemmShape> gemm_shapes(GemmDtype dtype, bool quick);

/// True when every " | "-joined part of a shape's label names a dgrad or wgrad GEMM (the labels of gemm_shapes and
/// model_shapes.hpp): fp8_e4m3_fast, which prices forward GEMMs only, does not time such a shape.
bool backward_only_label(std::string_view label);

}  // namespace scalescope::calib
