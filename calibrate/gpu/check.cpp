// Error messages for failed CUDA, NCCL and cuBLAS calls.
#include "check.hpp"

#include <cstring>

namespace scalescope::gpu {

namespace {
std::string where(const char* file, int line) {
  const char* slash = std::strrchr(file, '/');
  return std::string(slash ? slash + 1 : file) + ":" + std::to_string(line);
}
}  // namespace

std::string cuda_error_text(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

void throw_cuda(cudaError_t e, const char* call, const char* file, int line) {
  throw GpuError(std::string("CUDA call ") + call + " failed: " + cuda_error_text(e) + " (" +
                 where(file, line) + ")");
}

void throw_nccl(ncclResult_t r, const char* call, const char* file, int line) {
  std::string msg = std::string("NCCL call ") + call + " failed: " + ncclGetErrorString(r);
  const char* last = ncclGetLastError(nullptr);
  if (last != nullptr && last[0] != '\0') msg += std::string(" (last NCCL error: ") + last + ")";
  throw GpuError(msg + " (" + where(file, line) + ")");
}

void throw_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  throw GpuError(std::string("cuBLAS call ") + call + " failed: " + cublasLtGetStatusName(s) +
                 ": " + cublasLtGetStatusString(s) + " (" + where(file, line) + ")");
}

}  // namespace scalescope::gpu
