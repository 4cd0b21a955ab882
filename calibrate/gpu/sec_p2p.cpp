// P2P section: cudaMemcpyPeerAsync time by size for every ordered GPU pair (unidirectional) and
// every unordered pair (both directions at once), with peer access enabled where possible.
#include <algorithm>
#include <chrono>

#include "check.hpp"
#include "kernels.hpp"
#include "scalescope/calibrate/gpu_plan.hpp"
#include "sections.hpp"
#include "timing.hpp"

namespace scalescope::gpu {

namespace {

using calib::summarize;

struct Reps {
  int warmup, reps;
};
Reps reps_for(std::uint64_t bytes) {
  if (bytes <= (1ull << 20)) return {5, 30};
  if (bytes <= (64ull << 20)) return {2, 10};
  return {1, 5};
}

/// Per-size seconds of src -> dst copies, back to back on a stream of src.
std::vector<double> time_uni(int a, int b, const DeviceBuffer& src_a, const DeviceBuffer& dst_b,
                             std::uint64_t bytes, const Reps& r, const Stream& sa) {
  return time_back_to_back(a, sa.get(), r.warmup, r.reps, [&] {
    SS_CUDA(cudaMemcpyPeerAsync(dst_b.get(), b, src_a.get(), a, bytes, sa.get()));
  });
}

/// Per-repetition seconds of a->b and b->a copies started together (each on its source's stream);
/// a repetition ends when both copies are done.
std::vector<double> time_bidi(int a, int b, const DeviceBuffer& src_a, const DeviceBuffer& dst_a,
                              const DeviceBuffer& src_b, const DeviceBuffer& dst_b,
                              std::uint64_t bytes, const Reps& r, const Stream& sa,
                              const Stream& sb) {
  // Every call below is made with its stream's device current.
  auto copy_both = [&] {
    SS_CUDA(cudaSetDevice(a));
    SS_CUDA(cudaMemcpyPeerAsync(dst_b.get(), b, src_a.get(), a, bytes, sa.get()));
    SS_CUDA(cudaSetDevice(b));
    SS_CUDA(cudaMemcpyPeerAsync(dst_a.get(), a, src_b.get(), b, bytes, sb.get()));
  };
  for (int i = 0; i < r.warmup; ++i) copy_both();
  wait_stream(a, sa.get(), 120.0, "bidirectional warm-up");
  wait_stream(b, sb.get(), 120.0, "bidirectional warm-up");
  const auto n = static_cast<std::size_t>(r.reps);
  EventSet ea(a, n + 1), eb(b, n, false);
  SS_CUDA(cudaSetDevice(a));
  SS_CUDA(launch_spin(spin_ns_for(2 * r.reps), sa.get()));
  SS_CUDA(cudaEventRecord(ea[0], sa.get()));
  for (std::size_t i = 0; i < n; ++i) {
    SS_CUDA(cudaSetDevice(b));
    SS_CUDA(cudaStreamWaitEvent(sb.get(), ea[i], 0));  // b starts with a
    copy_both();                                       // leaves b current
    SS_CUDA(cudaEventRecord(eb[i], sb.get()));
    SS_CUDA(cudaSetDevice(a));
    SS_CUDA(cudaStreamWaitEvent(sa.get(), eb[i], 0));  // a's next event waits for b's copy
    SS_CUDA(cudaEventRecord(ea[i + 1], sa.get()));
  }
  wait_stream(a, sa.get(), 120.0, "bidirectional copies");
  wait_stream(b, sb.get(), 120.0, "bidirectional copies");
  std::vector<double> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(elapsed_s(ea[i], ea[i + 1]));
  return out;
}

}  // namespace

void run_p2p(RunContext& ctx) {
  const int n = ctx.ngpus;
  if (n < 2) return ctx.log("fewer than 2 GPUs: nothing to measure");
  const std::uint64_t max_bytes = std::min<std::uint64_t>(ctx.opt.max_bytes, 1ull << 30);
  const auto sizes = calib::doubling_sizes(4, max_bytes);
  if (sizes.empty()) return ctx.log("--max-bytes is below 4 bytes: no P2P sizes to measure");

  // Peer access both ways for every pair that supports it.
  std::vector<std::vector<bool>> peer(static_cast<std::size_t>(n),
                                      std::vector<bool>(static_cast<std::size_t>(n)));
  for (int a = 0; a < n; ++a) {
    for (int b = 0; b < n; ++b) {
      if (a == b) continue;
      int can = 0;
      SS_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
      if (can == 0) continue;
      SS_CUDA(cudaSetDevice(a));
      const cudaError_t e = cudaDeviceEnablePeerAccess(b, 0);
      if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled)
        throw_cuda(e, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
      cudaGetLastError();  // clear cudaErrorPeerAccessAlreadyEnabled
      peer[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = true;
    }
  }

  std::vector<DeviceBuffer> src, dst;
  std::vector<Stream> streams;
  for (int d = 0; d < n; ++d) {
    src.emplace_back(d, max_bytes);
    dst.emplace_back(d, max_bytes);
    streams.emplace_back(d);
    SS_CUDA(launch_fill_random(src.back().get(), ElemType::f32, max_bytes / 4,
                               100 + static_cast<std::uint64_t>(d), -1.0f, 1.0f,
                               streams.back().get()));
  }

  struct Job {
    int a, b;
    bool bidi;
  };
  std::vector<Job> jobs;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b) jobs.push_back({a, b, false});
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) jobs.push_back({a, b, true});

  double last_sweep_s = 1.0;
  for (const Job& j : jobs) {
    const std::string name = strf("%s %d->%d", j.bidi ? "bidi" : "uni", j.a, j.b);
    if (!ctx.fits(1.5 * last_sweep_s))
      return ctx.budget_stop("p2p " + name + " and the pairs after it");
    const double t0 = ctx.now_s();
    const auto ua = static_cast<std::size_t>(j.a), ub = static_cast<std::size_t>(j.b);
    Json rows = Json::array();
    for (std::uint64_t bytes : sizes) {
      const Reps r = reps_for(bytes);
      const auto samples = j.bidi ? time_bidi(j.a, j.b, src[ua], dst[ua], src[ub], dst[ub], bytes,
                                              r, streams[ua], streams[ub])
                                  : time_uni(j.a, j.b, src[ua], dst[ub], bytes, r, streams[ua]);
      const auto s = summarize(samples);
      const double moved = static_cast<double>(bytes) * (j.bidi ? 2.0 : 1.0);
      rows.push_back(Json{{"bytes", bytes},
                          {"time_us", round_to(s.median * 1e6, 0.001)},
                          {"time_us_min", round_to(s.min * 1e6, 0.001)},
                          {"time_us_p90", round_to(s.p90 * 1e6, 0.001)},
                          {"bandwidth_GBps", round_to(moved / s.median / 1e9, 0.001)},
                          {"reps", s.n}});
    }
    Json entry{{"src", j.a},
               {"dst", j.b},
               {"mode", j.bidi ? "bidi" : "uni"},
               {"method", "cudaMemcpyPeerAsync"},
               {"peer_access", peer[ua][ub] && peer[ub][ua]},
               {"latency_us", rows.front()["time_us"]},
               {"latency_at_bytes", rows.front()["bytes"]},
               {"bandwidth_GBps", rows.back()["bandwidth_GBps"]},
               {"bandwidth_at_bytes", rows.back()["bytes"]},
               {"rows", rows}};
    ctx.profile.edit([&](Json& d) { d["p2p"].push_back(entry); });
    last_sweep_s = ctx.now_s() - t0;
    ctx.log(strf("%s: %.2f us at %llu B, %.1f GB/s at %llu B%s (%.1f s)", name.c_str(),
                 entry["latency_us"].get<double>(), static_cast<unsigned long long>(sizes.front()),
                 entry["bandwidth_GBps"].get<double>(),
                 static_cast<unsigned long long>(sizes.back()),
                 j.bidi ? " (both directions together)" : "", last_sweep_s));
  }
}

}  // namespace scalescope::gpu
