// Host entry points of the calibration program's CUDA kernels (defined in kernels.cu). Each one
// launches on the current device and returns the launch status (cudaGetLastError).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace scalescope::gpu {

/// Element types the program fills and converts: float, bfloat16, half, fp8 e4m3.
enum class ElemType { f32, bf16, f16, fp8_e4m3 };

std::size_t elem_size(ElemType t);

/// p[i] = pseudo-random value uniform in [lo, hi) (a hash of seed and i), converted to t.
cudaError_t launch_fill_random(void* p, ElemType t, std::size_t n, std::uint64_t seed, float lo,
                               float hi, cudaStream_t s);
/// dst[i] = float(src[i]).
cudaError_t launch_to_float(const void* src, ElemType t, float* dst, std::size_t n, cudaStream_t s);
/// One thread that busy-waits about ns nanoseconds (%globaltimer, with a clock64 bound so that it
/// ends even if the timer stalls): lets the host queue work so that the queued work then runs
/// back to back, with no host launch gaps inside the timed region.
cudaError_t launch_spin(std::uint64_t ns, cudaStream_t s);
/// An empty kernel of one block of one thread.
cudaError_t launch_empty(cudaStream_t s);
/// y[i] = 2 * x[i] for n floats (reads 4n bytes, writes 4n bytes; 16-byte accesses).
cudaError_t launch_scale_copy(const float* x, float* y, std::size_t n, cudaStream_t s);
/// c[i] = a[i] + b[i] for n floats (reads 8n bytes, writes 4n bytes).
cudaError_t launch_add(const float* a, const float* b, float* c, std::size_t n, cudaStream_t s);

}  // namespace scalescope::gpu
