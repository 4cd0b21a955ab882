// Owning wrappers for device/pinned memory, streams and events, and the event-based timing
// loops every section uses (spin kernel first, then back-to-back runs, one event between runs).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace scalescope::gpu {

/// cudaMalloc'd memory on one device, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }
  void reset();

 private:
  int device_ = -1;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// cudaMallocHost'd (pinned) host memory.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const { return ptr_; }

 private:
  void* ptr_ = nullptr;
};

/// A non-blocking stream on one device.
class Stream {
 public:
  explicit Stream(int device);
  ~Stream();
  Stream(Stream&& o) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  Stream& operator=(Stream&&) = delete;
  cudaStream_t get() const { return s_; }
  int device() const { return device_; }

 private:
  int device_ = -1;
  cudaStream_t s_ = nullptr;
};

/// n events created on one device.
class EventSet {
 public:
  EventSet(int device, std::size_t n, bool timing = true);
  ~EventSet();
  EventSet(EventSet&& o) noexcept;
  EventSet(const EventSet&) = delete;
  EventSet& operator=(const EventSet&) = delete;
  EventSet& operator=(EventSet&&) = delete;
  cudaEvent_t operator[](std::size_t i) const { return ev_[i]; }
  std::size_t size() const { return ev_.size(); }

 private:
  int device_ = -1;
  std::vector<cudaEvent_t> ev_;
};

/// Seconds between two completed events.
double elapsed_s(cudaEvent_t a, cudaEvent_t b);

/// Waits for a stream by polling (so a hang becomes a GpuError naming `what`, not a stuck run).
void wait_stream(int device, cudaStream_t s, double timeout_s, const char* what);

/// Spin time that lets the host queue `runs` operations before they start: 20 us per run,
/// between 50 us and 20 ms.
std::uint64_t spin_ns_for(int runs);

/// Runs op `warmup` times, then times `reps` back-to-back runs on stream s of device `device`:
/// a spin kernel first, an event before the first run and after each run; returns each run's
/// seconds (event i+1 minus event i). op must enqueue its work on s.
std::vector<double> time_back_to_back(int device, cudaStream_t s, int warmup, int reps,
                                      const std::function<void()>& op, double timeout_s = 120.0);

/// Seconds of a single run of op (after one untimed run), timed with events; for choosing reps.
double time_single(int device, cudaStream_t s, const std::function<void()>& op,
                   double timeout_s = 120.0);

}  // namespace scalescope::gpu
