// Owning wrappers for GPU resources and the event-based timing loops of the calibration program.
#include "timing.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "check.hpp"
#include "kernels.hpp"

namespace scalescope::gpu {

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
  SS_CUDA(cudaSetDevice(device));
  SS_CUDA(cudaMalloc(&ptr_, std::max<std::size_t>(bytes, 256)));
}

DeviceBuffer::~DeviceBuffer() { reset(); }

void DeviceBuffer::reset() {
  if (ptr_ != nullptr) {
    cudaSetDevice(device_);
    cudaFree(ptr_);  // errors here would come from an earlier failure, already reported
    cudaGetLastError();
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : device_(o.device_), ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    reset();
    device_ = o.device_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) { SS_CUDA(cudaMallocHost(&ptr_, bytes)); }

PinnedBuffer::~PinnedBuffer() {
  if (ptr_ != nullptr) cudaFreeHost(ptr_);
  cudaGetLastError();
}

Stream::Stream(int device) : device_(device) {
  SS_CUDA(cudaSetDevice(device));
  SS_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
}

Stream::~Stream() {
  if (s_ != nullptr) {
    cudaSetDevice(device_);
    cudaStreamDestroy(s_);
    cudaGetLastError();
  }
}

Stream::Stream(Stream&& o) noexcept : device_(o.device_), s_(o.s_) { o.s_ = nullptr; }

EventSet::EventSet(int device, std::size_t n, bool timing) : device_(device) {
  SS_CUDA(cudaSetDevice(device));
  ev_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    cudaEvent_t e = nullptr;
    SS_CUDA(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming));
    ev_.push_back(e);
  }
}

EventSet::~EventSet() {
  if (!ev_.empty()) cudaSetDevice(device_);
  for (cudaEvent_t e : ev_) cudaEventDestroy(e);
  cudaGetLastError();
}

EventSet::EventSet(EventSet&& o) noexcept : device_(o.device_), ev_(std::move(o.ev_)) {
  o.ev_.clear();
}

double elapsed_s(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0.0f;
  SS_CUDA(cudaEventElapsedTime(&ms, a, b));
  return static_cast<double>(ms) * 1e-3;
}

void wait_stream(int device, cudaStream_t s, double timeout_s, const char* what) {
  SS_CUDA(cudaSetDevice(device));
  const auto t0 = std::chrono::steady_clock::now();
  while (true) {
    const cudaError_t e = cudaStreamQuery(s);
    if (e == cudaSuccess) return;
    if (e != cudaErrorNotReady)
      throw_cuda(e, "cudaStreamQuery (waiting for the timed work)", __FILE__, __LINE__);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (waited > timeout_s)
      throw GpuError(std::string("timed out after ") + std::to_string(static_cast<int>(waited)) +
                     " s waiting for " + what + " on GPU " + std::to_string(device));
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::uint64_t spin_ns_for(int runs) {
  const std::uint64_t ns = static_cast<std::uint64_t>(std::max(runs, 0)) * 20'000ull;
  return std::clamp<std::uint64_t>(ns, 50'000ull, 20'000'000ull);
}

std::vector<double> time_back_to_back(int device, cudaStream_t s, int warmup, int reps,
                                      const std::function<void()>& op, double timeout_s) {
  SS_CUDA(cudaSetDevice(device));
  for (int i = 0; i < warmup; ++i) op();
  wait_stream(device, s, timeout_s, "warm-up runs");
  EventSet ev(device, static_cast<std::size_t>(reps) + 1);
  SS_CUDA(cudaSetDevice(device));
  SS_CUDA(launch_spin(spin_ns_for(reps), s));
  SS_CUDA(cudaEventRecord(ev[0], s));
  for (int i = 0; i < reps; ++i) {
    op();
    SS_CUDA(cudaEventRecord(ev[static_cast<std::size_t>(i) + 1], s));
  }
  wait_stream(device, s, timeout_s, "timed runs");
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(reps));
  for (std::size_t i = 0; i < static_cast<std::size_t>(reps); ++i)
    out.push_back(elapsed_s(ev[i], ev[i + 1]));
  return out;
}

double time_single(int device, cudaStream_t s, const std::function<void()>& op, double timeout_s) {
  SS_CUDA(cudaSetDevice(device));
  op();
  wait_stream(device, s, timeout_s, "a warm-up run");
  EventSet ev(device, 2);
  SS_CUDA(cudaSetDevice(device));
  SS_CUDA(cudaEventRecord(ev[0], s));
  op();
  SS_CUDA(cudaEventRecord(ev[1], s));
  wait_stream(device, s, timeout_s, "a single timed run");
  return elapsed_s(ev[0], ev[1]);
}

}  // namespace scalescope::gpu
