// CUDA kernels of the calibration program: random fills, conversions, spin/empty kernels and the
// memory-bound kernels (scale-copy, add) whose speed the profile records.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "kernels.hpp"

namespace scalescope::gpu {

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned long long kMaxBlocks = 32768;

unsigned blocks_for(unsigned long long work_items) {
  const unsigned long long b = (work_items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::max(1ull, std::min(b, kMaxBlocks)));
}

__device__ __forceinline__ unsigned long long splitmix64(unsigned long long x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ __forceinline__ float uniform(unsigned long long seed, unsigned long long i, float lo,
                                         float hi) {
  const unsigned long long h = splitmix64(seed * 0x100000001B3ull ^ splitmix64(i));
  const float u = static_cast<float>(h >> 40) * (1.0f / 16777216.0f);  // 24 bits -> [0, 1)
  return lo + (hi - lo) * u;
}

template <class T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float v) {
  return __nv_fp8_e4m3(v);
}

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_fp8_e4m3 v) { return static_cast<float>(v); }

template <class T>
__global__ void fill_random_kernel(T* p, unsigned long long n, unsigned long long seed, float lo,
                                   float hi) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += stride)
    p[i] = from_float<T>(uniform(seed, i, lo, hi));
}

template <class T>
__global__ void to_float_kernel(const T* src, float* dst, unsigned long long n) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i =
           blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
       i < n; i += stride)
    dst[i] = to_f(src[i]);
}

__global__ void spin_kernel(unsigned long long ns) {
  unsigned long long t0 = 0, t = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  // At most 4 cycles per requested ns: ends within 2 ns/ns even at 2 GHz if %globaltimer stalls.
  const long long max_cycles = static_cast<long long>(ns) * 4 + 1000;
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns && clock64() - c0 < max_cycles);
}

__global__ void empty_kernel() {}

__global__ void scale_copy_kernel(const float4* x, float4* y, unsigned long long n4,
                                  const float* xs, float* ys, unsigned long long tail_begin,
                                  unsigned long long n) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long tid =
      blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  for (unsigned long long i = tid; i < n4; i += stride) {
    float4 v = x[i];
    v.x *= 2.0f;
    v.y *= 2.0f;
    v.z *= 2.0f;
    v.w *= 2.0f;
    y[i] = v;
  }
  for (unsigned long long i = tail_begin + tid; i < n; i += stride) ys[i] = 2.0f * xs[i];
}

__global__ void add_kernel(const float4* a, const float4* b, float4* c, unsigned long long n4,
                           const float* as, const float* bs, float* cs,
                           unsigned long long tail_begin, unsigned long long n) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long tid =
      blockIdx.x * static_cast<unsigned long long>(blockDim.x) + threadIdx.x;
  for (unsigned long long i = tid; i < n4; i += stride) {
    const float4 u = a[i];
    const float4 v = b[i];
    c[i] = make_float4(u.x + v.x, u.y + v.y, u.z + v.z, u.w + v.w);
  }
  for (unsigned long long i = tail_begin + tid; i < n; i += stride) cs[i] = as[i] + bs[i];
}

bool aligned16(const void* p) { return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0; }

}  // namespace

std::size_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::f32:
      return 4;
    case ElemType::bf16:
      return 2;
    case ElemType::f16:
      return 2;
    case ElemType::fp8_e4m3:
      return 1;
  }
  return 4;
}

cudaError_t launch_fill_random(void* p, ElemType t, std::size_t n, std::uint64_t seed, float lo,
                               float hi, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  const unsigned b = blocks_for(n);
  switch (t) {
    case ElemType::f32:
      fill_random_kernel<<<b, kThreads, 0, s>>>(static_cast<float*>(p), n, seed, lo, hi);
      break;
    case ElemType::bf16:
      fill_random_kernel<<<b, kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed, lo, hi);
      break;
    case ElemType::f16:
      fill_random_kernel<<<b, kThreads, 0, s>>>(static_cast<__half*>(p), n, seed, lo, hi);
      break;
    case ElemType::fp8_e4m3:
      fill_random_kernel<<<b, kThreads, 0, s>>>(static_cast<__nv_fp8_e4m3*>(p), n, seed, lo, hi);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_to_float(const void* src, ElemType t, float* dst, std::size_t n,
                            cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  const unsigned b = blocks_for(n);
  switch (t) {
    case ElemType::f32:
      to_float_kernel<<<b, kThreads, 0, s>>>(static_cast<const float*>(src), dst, n);
      break;
    case ElemType::bf16:
      to_float_kernel<<<b, kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(src), dst, n);
      break;
    case ElemType::f16:
      to_float_kernel<<<b, kThreads, 0, s>>>(static_cast<const __half*>(src), dst, n);
      break;
    case ElemType::fp8_e4m3:
      to_float_kernel<<<b, kThreads, 0, s>>>(static_cast<const __nv_fp8_e4m3*>(src), dst, n);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_spin(std::uint64_t ns, cudaStream_t s) {
  spin_kernel<<<1, 1, 0, s>>>(ns);
  return cudaGetLastError();
}

cudaError_t launch_empty(cudaStream_t s) {
  empty_kernel<<<1, 1, 0, s>>>();
  return cudaGetLastError();
}

cudaError_t launch_scale_copy(const float* x, float* y, std::size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  const bool vec = aligned16(x) && aligned16(y);
  const unsigned long long n4 = vec ? n / 4 : 0;
  const unsigned long long tail = n4 * 4;
  const unsigned b = blocks_for(vec ? std::max(n4, 1ull) : n);
  scale_copy_kernel<<<b, kThreads, 0, s>>>(reinterpret_cast<const float4*>(x),
                                           reinterpret_cast<float4*>(y), n4, x, y, tail, n);
  return cudaGetLastError();
}

cudaError_t launch_add(const float* a, const float* b, float* c, std::size_t n, cudaStream_t s) {
  if (n == 0) return cudaSuccess;
  const bool vec = aligned16(a) && aligned16(b) && aligned16(c);
  const unsigned long long n4 = vec ? n / 4 : 0;
  const unsigned long long tail = n4 * 4;
  const unsigned blocks = blocks_for(vec ? std::max(n4, 1ull) : n);
  add_kernel<<<blocks, kThreads, 0, s>>>(reinterpret_cast<const float4*>(a),
                                         reinterpret_cast<const float4*>(b),
                                         reinterpret_cast<float4*>(c), n4, a, b, c, tail, n);
  return cudaGetLastError();
}

}  // namespace scalescope::gpu
