// NCCL communicator clique over GPUs 0..n-1: creation, launches, waits, correctness check.
#include "coll_group.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <numeric>
#include <thread>

#include "check.hpp"
#include "context.hpp"
#include "kernels.hpp"

namespace scalescope::gpu {

namespace {

using calib::CollOp;

/// Exactly representable check values (multiples of 0.25 below 256): sums over up to 2^15 ranks
/// are exact in float whatever the reduction order.
float check_value(int rank, std::uint64_t i) {
  return static_cast<float>((static_cast<std::uint64_t>(rank + 1) * 131u + i * 7u) % 1024u) * 0.25f;
}

}  // namespace

CollGroup::CollGroup(int nranks, std::uint64_t buffer_bytes)
    : n_(nranks), comms_(static_cast<std::size_t>(nranks)) {
  std::vector<int> devs(static_cast<std::size_t>(n_));
  std::iota(devs.begin(), devs.end(), 0);
  SS_NCCL(ncclCommInitAll(comms_.data(), n_, devs.data()));
  try {
    for (int r = 0; r < n_; ++r) {
      send_.emplace_back(r, buffer_bytes);
      recv_.emplace_back(r, buffer_bytes);
      streams_.emplace_back(r);  // leaves device r current
      events_.emplace_back(r, 2);
      SS_CUDA(cudaSetDevice(r));
      SS_CUDA(launch_fill_random(send_.back().get(), ElemType::f32, buffer_bytes / 4,
                                 1000 + static_cast<std::uint64_t>(r), -1.0f, 1.0f,
                                 streams_.back().get()));
      SS_CUDA(cudaMemsetAsync(recv_.back().get(), 0, buffer_bytes, streams_.back().get()));
    }
    wait(120.0, "buffer initialisation");
  } catch (...) {
    for (ncclComm_t c : comms_)
      if (c != nullptr) ncclCommAbort(c);
    comms_.clear();
    throw;
  }
}

CollGroup::~CollGroup() {
  const std::string err = close(60.0);
  if (!err.empty()) std::fprintf(stderr, "scalescope-calibrate: %s\n", err.c_str());
}

std::string CollGroup::close(double timeout_s) {
  if (comms_.empty()) return {};
  // Sequential ncclCommDestroy of ncclCommInitAll's communicators from one thread, as in NCCL's
  // single-thread multi-device example; ncclCommAbort after a failure or timeout. On a helper
  // thread so that a hang here cannot stop the run.
  struct Done {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
  };
  auto state = std::make_shared<Done>();
  std::vector<ncclComm_t> comms;
  comms.swap(comms_);
  const bool abort = broken_;
  std::thread worker([state, comms, abort] {
    for (ncclComm_t c : comms) {
      if (c == nullptr) continue;
      if (abort)
        ncclCommAbort(c);
      else
        ncclCommDestroy(c);
    }
    {
      std::lock_guard<std::mutex> lock(state->m);
      state->done = true;
    }
    state->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(state->m);
  const bool finished = state->cv.wait_for(lock, std::chrono::duration<double>(timeout_s),
                                           [&] { return state->done; });
  lock.unlock();
  if (finished) {
    worker.join();
    return {};
  }
  worker.detach();
  return strf("%s of the %zu communicators for GPUs 0..%d did not return within %.0f s",
              abort ? "ncclCommAbort" : "ncclCommDestroy", comms.size(), n_ - 1, timeout_s);
}

void CollGroup::launch(const CollCall& c) {
  const ncclDataType_t F = ncclFloat;
  SS_NCCL(ncclGroupStart());
  try {
    for (int r = 0; r < n_; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      float* sb = send_[ur].as<float>();
      float* rb = recv_[ur].as<float>();
      ncclComm_t cm = comms_[ur];
      cudaStream_t s = streams_[ur].get();
      const std::size_t cnt = c.param_count;
      switch (c.op) {
        case CollOp::all_reduce:
          SS_NCCL(ncclAllReduce(sb, rb, cnt, F, ncclSum, cm, s));
          break;
        case CollOp::all_gather:
          SS_NCCL(ncclAllGather(sb, rb, cnt, F, cm, s));
          break;
        case CollOp::reduce_scatter:
          SS_NCCL(ncclReduceScatter(sb, rb, cnt, F, ncclSum, cm, s));
          break;
        case CollOp::alltoall:
          for (int p = 0; p < n_; ++p) {
            const std::size_t off = static_cast<std::size_t>(p) * cnt;
            SS_NCCL(ncclSend(sb + off, cnt, F, p, cm, s));
            SS_NCCL(ncclRecv(rb + off, cnt, F, p, cm, s));
          }
          break;
        case CollOp::broadcast:
          SS_NCCL(ncclBroadcast(sb, rb, cnt, F, 0, cm, s));
          break;
        case CollOp::sendrecv:
          SS_NCCL(ncclSend(sb, cnt, F, (r + 1) % n_, cm, s));
          SS_NCCL(ncclRecv(rb, cnt, F, (r - 1 + n_) % n_, cm, s));
          break;
        case CollOp::sendrecv_pair:
          if (r == c.src) SS_NCCL(ncclSend(sb, cnt, F, c.dst, cm, s));
          if (r == c.dst) SS_NCCL(ncclRecv(rb, cnt, F, c.src, cm, s));
          break;
      }
    }
  } catch (...) {
    ncclGroupEnd();  // close the group before the error travels on
    throw;
  }
  SS_NCCL(ncclGroupEnd());
}

void CollGroup::wait(double timeout_s, const char* what) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<bool> done(static_cast<std::size_t>(n_), false);
  while (true) {
    bool all = true;
    for (int r = 0; r < n_; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      if (done[ur]) continue;
      SS_CUDA(cudaSetDevice(r));
      const cudaError_t e = cudaStreamQuery(streams_[ur].get());
      if (e == cudaSuccess) {
        done[ur] = true;
      } else if (e == cudaErrorNotReady) {
        all = false;
      } else {
        throw_cuda(e, "cudaStreamQuery (waiting for NCCL work)", __FILE__, __LINE__);
      }
    }
    if (all) return;
    for (ncclComm_t c : comms_) {
      ncclResult_t async = ncclSuccess;
      SS_NCCL(ncclCommGetAsyncError(c, &async));
      if (async != ncclSuccess && async != ncclInProgress)
        throw_nccl(async, "ncclCommGetAsyncError (asynchronous error)", __FILE__, __LINE__);
    }
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (waited > timeout_s)
      throw GpuError(
          strf("timed out after %.0f s waiting for %s on %d GPUs (NCCL hang?)", waited, what, n_));
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

std::vector<double> CollGroup::time_batch(const CollCall& c, int iters, std::uint64_t spin_ns,
                                          double timeout_s) {
  for (int r = 0; r < n_; ++r) {
    SS_CUDA(cudaSetDevice(r));
    SS_CUDA(launch_spin(spin_ns, streams_[static_cast<std::size_t>(r)].get()));
    SS_CUDA(cudaEventRecord(events_[static_cast<std::size_t>(r)][0],
                            streams_[static_cast<std::size_t>(r)].get()));
  }
  for (int i = 0; i < iters; ++i) launch(c);
  for (int r = 0; r < n_; ++r) {
    SS_CUDA(cudaSetDevice(r));
    SS_CUDA(cudaEventRecord(events_[static_cast<std::size_t>(r)][1],
                            streams_[static_cast<std::size_t>(r)].get()));
  }
  wait(timeout_s, "timed collectives");
  std::vector<double> out;
  for (int r = 0; r < n_; ++r) {
    const EventSet& ev = events_[static_cast<std::size_t>(r)];
    out.push_back(elapsed_s(ev[0], ev[1]));
  }
  return out;
}

std::string CollGroup::check(CollOp op, int src, int dst) {
  constexpr std::uint64_t kChunk = 1024;
  const auto un = static_cast<std::uint64_t>(n_);
  const calib::CollCounts cc = calib::coll_counts(op, un * kChunk * 4, 4, n_);
  const std::uint64_t p = cc.param_count;
  for (int r = 0; r < n_; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    std::vector<float> h(cc.send_elems);
    for (std::uint64_t i = 0; i < cc.send_elems; ++i) h[i] = check_value(r, i);
    SS_CUDA(cudaSetDevice(r));
    SS_CUDA(cudaMemcpyAsync(send_[ur].get(), h.data(), h.size() * 4, cudaMemcpyHostToDevice,
                            streams_[ur].get()));
    SS_CUDA(cudaMemsetAsync(recv_[ur].get(), 0xFF, cc.recv_elems * 4,
                            streams_[ur].get()));        // NaN poison
    SS_CUDA(cudaStreamSynchronize(streams_[ur].get()));  // h goes out of scope
  }
  launch(CollCall{op, p, src, dst});
  wait(60.0, "the correctness check");

  std::uint64_t wrong = 0, total = 0;
  std::string first;
  for (int r = 0; r < n_; ++r) {
    if (op == CollOp::sendrecv_pair && r != dst) continue;
    const auto ur = static_cast<std::size_t>(r);
    std::vector<float> got(cc.recv_elems);
    SS_CUDA(cudaSetDevice(r));
    SS_CUDA(cudaMemcpy(got.data(), recv_[ur].get(), got.size() * 4, cudaMemcpyDeviceToHost));
    for (std::uint64_t e = 0; e < cc.recv_elems; ++e) {
      float want = 0.0f;
      switch (op) {
        case CollOp::all_reduce:
          for (int q = 0; q < n_; ++q) want += check_value(q, e);
          break;
        case CollOp::all_gather:
          want = check_value(static_cast<int>(e / p), e % p);
          break;
        case CollOp::reduce_scatter:
          for (int q = 0; q < n_; ++q)
            want += check_value(q, static_cast<std::uint64_t>(r) * p + e);
          break;
        case CollOp::alltoall:
          want = check_value(static_cast<int>(e / p), static_cast<std::uint64_t>(r) * p + e % p);
          break;
        case CollOp::broadcast:
          want = check_value(0, e);
          break;
        case CollOp::sendrecv:
          want = check_value((r - 1 + n_) % n_, e);
          break;
        case CollOp::sendrecv_pair:
          want = check_value(src, e);
          break;
      }
      ++total;
      if (got[e] != want) {  // NaN (unwritten) never compares equal
        if (wrong++ == 0)
          first = strf("rank %d element %llu: got %g, expected %g", r,
                       static_cast<unsigned long long>(e), static_cast<double>(got[e]),
                       static_cast<double>(want));
      }
    }
  }
  if (wrong == 0) return {};
  return strf("%llu of %llu received elements wrong; first: %s",
              static_cast<unsigned long long>(wrong), static_cast<unsigned long long>(total),
              first.c_str());
}

}  // namespace scalescope::gpu
