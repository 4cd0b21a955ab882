// One NCCL communicator clique over GPUs 0..n-1 (ncclCommInitAll, one thread), with a stream and
// send/receive buffers per rank; launches one collective on all ranks and checks its results.
#pragma once

#include <nccl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "scalescope/calibrate/gpu_plan.hpp"
#include "timing.hpp"

namespace scalescope::gpu {

/// What one launch does: the op, its per-call count (calib::CollCounts::param_count), and for
/// sendrecv_pair the sending and receiving rank.
struct CollCall {
  calib::CollOp op = calib::CollOp::all_reduce;
  std::uint64_t param_count = 0;
  int src = 0, dst = 1;
};

class CollGroup {
 public:
  /// Creates the communicators and buffer_bytes of send and receive memory on every rank.
  CollGroup(int nranks, std::uint64_t buffer_bytes);
  /// Calls close(60) if the owner did not (and reports a failure on stderr only).
  ~CollGroup();
  CollGroup(const CollGroup&) = delete;
  CollGroup& operator=(const CollGroup&) = delete;

  int size() const { return n_; }
  /// Rank r's stream (on device r), where launch() queues rank r's part of every call.
  cudaStream_t stream(int rank) const { return streams_[static_cast<std::size_t>(rank)].get(); }
  /// Enqueues the call on every rank's stream (one ncclGroupStart/End around all ranks).
  void launch(const CollCall& c);
  /// Waits for every rank's stream, polling NCCL's asynchronous errors; GpuError on an error or
  /// after timeout_s.
  void wait(double timeout_s, const char* what);
  /// Runs the call once at a small size with rank-dependent values and compares every received
  /// element with the value computed on the host. Returns "" when all match, else what differs.
  std::string check(calib::CollOp op, int src, int dst);
  /// Per-rank seconds of `iters` back-to-back calls, between an event before the first and one
  /// after the last on each rank's stream. A spin kernel of spin_ns on every stream before the
  /// start events lets this one thread queue all the calls first, so that the batch measures the
  /// GPUs, not the host's launch rate (as with one process or thread per GPU).
  std::vector<double> time_batch(const CollCall& c, int iters, std::uint64_t spin_ns,
                                 double timeout_s);
  /// Marks the communicators for ncclCommAbort (instead of ncclCommDestroy) when closing.
  void mark_broken() { broken_ = true; }
  /// Destroys the communicators (aborts them after mark_broken()) on a helper thread, waiting at
  /// most timeout_s: returns "" when done, else a message; the helper thread is then left
  /// running (detached) and the caller should end the process with std::_Exit.
  std::string close(double timeout_s);

 private:
  int n_ = 0;
  std::vector<ncclComm_t> comms_;
  std::vector<Stream> streams_;
  std::vector<DeviceBuffer> send_, recv_;
  std::vector<EventSet> events_;  // [rank]: start, stop
  bool broken_ = false;
};

}  // namespace scalescope::gpu
