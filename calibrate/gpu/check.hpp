// Error checking for CUDA, NCCL and cuBLAS calls: a failed call throws GpuError whose message
// names the call, the library's error name and string, and the source line.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

namespace scalescope::gpu {

/// A failed GPU library call (or a GPU-side timeout). Caught per section by main().
struct GpuError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_cuda(cudaError_t e, const char* call, const char* file, int line);
[[noreturn]] void throw_nccl(ncclResult_t r, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line);

/// "cudaErrorMemoryAllocation: out of memory".
std::string cuda_error_text(cudaError_t e);

}  // namespace scalescope::gpu

#define SS_CUDA(expr)                                                                              \
  do {                                                                                             \
    const cudaError_t ss_err_ = (expr);                                                            \
    if (ss_err_ != cudaSuccess) ::scalescope::gpu::throw_cuda(ss_err_, #expr, __FILE__, __LINE__); \
  } while (0)

#define SS_NCCL(expr)                                                    \
  do {                                                                   \
    const ncclResult_t ss_res_ = (expr);                                 \
    if (ss_res_ != ncclSuccess && ss_res_ != ncclInProgress)             \
      ::scalescope::gpu::throw_nccl(ss_res_, #expr, __FILE__, __LINE__); \
  } while (0)

#define SS_CUBLAS(expr)                                                   \
  do {                                                                    \
    const cublasStatus_t ss_st_ = (expr);                                 \
    if (ss_st_ != CUBLAS_STATUS_SUCCESS)                                  \
      ::scalescope::gpu::throw_cublas(ss_st_, #expr, __FILE__, __LINE__); \
  } while (0)
