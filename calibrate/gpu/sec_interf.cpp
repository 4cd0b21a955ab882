// Interference section: how much a compute kernel slows down beside an NCCL collective on the same
// GPUs, and the collective beside the compute kernel (every GPU in use, separate streams).
//
// Rows: compute kernel K x collective C in {all_gather, reduce_scatter, all_reduce, sendrecv} (float32,
// out of place, min(256 MiB, --max-bytes) in the collectives section's `bytes` convention). K (kKernels):
//   - bf16 GEMMs (cuBLAS NN m x n x k = [n x k] x [k x m] row-major: out x tokens x in): 8192^3, and
//     the forward GEMMs of eager llama-1b and llama-7b at 4096 tokens (validation/models/: q/o, k/v,
//     gate/up, down), which last 15-500 us as training kernels do;
//   - the fp32 read/write kernel y = 2x over 64 MiB, 256 MiB and 1 GiB (30-520 us).
// How much each side slows depends on the length of the compute kernels (a collective's blocks get
// SMs mostly where a kernel ends), so the simulator interpolates the slowdowns by kernel time
// (models/compute_model.hpp, ComputeModel::interference_of). Every GPU has a compute stream
// (K) and a comm stream (CollGroup's, C). Per row, after warm-up (which also estimates K's and C's
// times and the host's queueing costs):
//   1. K alone: N back-to-back launches per GPU (N: a ~30 ms window), time per launch.
//   2. C alone: L back-to-back calls (L: a ~30 ms window), time per call of the slowest GPU.
//   3. K beside C: the comm streams loop C (queued first); each compute stream waits for the
//      first call, then its N launches are timed.
//   4. C beside K: the compute streams loop K (queued first); each comm stream waits for the first
//      launch on its GPU, then the L calls are timed.
// Background loops last >= 1.5x the timed window + 2 items: first from the alone estimates, then
// from untimed probes of 3 and of 4 (the side in front can slow down 2-6x). Then 5 rounds (3 with
// --quick) of (1, 3, 2, 4): alone and beside alternate so that clock and power drift (4% seen on
// a GEMM between rows) cancels in each round's ratio; slowdowns are medians of those ratios.
// "covered": in every window, on every GPU, the background loop ended after the timed window
// (event times from a common start event per GPU). One thread queues everything, so each window
// starts behind a spin kernel lasting about twice the host's queueing time (as in `coll`).
//
// Run time: per row ~20 ms of warm-up, probes (~0.1-0.3 s), 5 rounds x (30 + ~50 + 30 + ~50-120
// ms) ~= 1.1-1.6 s; the first 3 kernels' 9 rows took 13 s on 2x H200 (measured); 11 kernels x 3
// collectives 58-64 s on 2x and 4x H200 (measured), with sendrecv ~80 s, plus NCCL communicators.
// Memory: ~3 GiB per GPU. --quick: 3 rounds of
// ~10 ms windows, the collective at --max-bytes (4 MiB): ~15 s.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>

#include "check.hpp"
#include "coll_group.hpp"
#include "kernels.hpp"
#include "lt_matmul.hpp"
#include "sections.hpp"
#include "timing.hpp"

namespace scalescope::gpu {

namespace {

using calib::CollOp;
using SteadyClock = std::chrono::steady_clock;

constexpr std::uint64_t kCollBytes = 256ull << 20;  // collective size (capped by --max-bytes)
constexpr double kWaitTimeout = 60.0;               // seconds before a wait counts as a hang
constexpr double kCoverFactor = 1.5;                // background loop vs timed window
constexpr int kCoverExtra = 2;                      // ... plus this many calls / launches
constexpr int kMaxReps = 5000;                      // cap of every loop length
constexpr int kMaxProbes = 4;                       // untimed probes per background loop

struct KernelSpec {
  const char* name;
  const char* cls;
  std::int64_t m, n, k;    // GEMM (NN, cuBLAS column-major arguments); m == 0: the memory kernel
  std::size_t mem_bytes;   // the memory kernel's buffer (read, and written again)
};
const KernelSpec kKernels[] = {
    {"bf16 GEMM 8192x8192x8192", "gemm", 8192, 8192, 8192, 0},
    {"bf16 GEMM 8192x4096x2048", "gemm", 8192, 4096, 2048, 0},  // llama-1b gate/up
    {"fp32 read/write kernel y = 2x, 1 GiB", "memory", 0, 0, 0, 1ull << 30},
    {"bf16 GEMM 2048x4096x2048", "gemm", 2048, 4096, 2048, 0},     // llama-1b q, o
    {"bf16 GEMM 512x4096x2048", "gemm", 512, 4096, 2048, 0},       // llama-1b k, v
    {"bf16 GEMM 2048x4096x8192", "gemm", 2048, 4096, 8192, 0},     // llama-1b down
    {"bf16 GEMM 4096x4096x4096", "gemm", 4096, 4096, 4096, 0},     // llama-7b q, k, v, o
    {"bf16 GEMM 11008x4096x4096", "gemm", 11008, 4096, 4096, 0},   // llama-7b gate/up
    {"bf16 GEMM 4096x4096x11008", "gemm", 4096, 4096, 11008, 0},   // llama-7b down
    {"fp32 read/write kernel y = 2x, 64 MiB", "memory", 0, 0, 0, 64ull << 20},
    {"fp32 read/write kernel y = 2x, 256 MiB", "memory", 0, 0, 0, 256ull << 20},
};
// sendrecv: every GPU sends to the next and receives from the previous one (nccl-tests sendrecv_perf),
// as pipeline stages do.
const CollOp kOps[] = {CollOp::all_gather, CollOp::reduce_scatter, CollOp::all_reduce, CollOp::sendrecv};

/// Event slots of one window, per GPU.
enum Slot : std::size_t { kStart, kFirst, kBegin, kEnd, kLoopEnd, kSlots };

/// Every GPU's compute stream, cuBLASLt handle and workspace, and the events of one window.
struct ComputeSide {
  std::vector<Stream> streams;
  std::vector<LtHandle> handles;
  std::vector<DeviceBuffer> workspaces;
  std::vector<EventSet> events;

  explicit ComputeSide(int n) {
    for (int r = 0; r < n; ++r) {
      streams.emplace_back(r);
      handles.emplace_back(r);
      workspaces.emplace_back(r, kLtWorkspaceBytes);
      events.emplace_back(r, kSlots);
    }
  }
  cudaStream_t stream(int r) const { return streams[static_cast<std::size_t>(r)].get(); }
  cudaEvent_t ev(int r, Slot s) const { return events[static_cast<std::size_t>(r)][s]; }
};

/// One compute kernel set up on every GPU: its buffers and, for a GEMM, its cuBLASLt product.
struct Kernel {
  KernelSpec spec;
  std::vector<DeviceBuffer> a, b, d;          // per GPU; the memory kernel reads a, writes d
  std::vector<std::unique_ptr<LtMatmul>> mm;  // per GPU, GEMMs only
  std::string no_algo;                        // why cuBLASLt offered no algorithm, if it did not

  /// Queues one run on GPU r's compute stream.
  void launch(int r, const ComputeSide& side) const {
    const auto ur = static_cast<std::size_t>(r);
    SS_CUDA(cudaSetDevice(r));
    if (mm.empty())
      SS_CUDA(launch_scale_copy(a[ur].as<float>(), d[ur].as<float>(), spec.mem_bytes / 4,
                                side.stream(r)));
    else
      mm[ur]->run(a[ur].get(), b[ur].get(), d[ur].get(), side.workspaces[ur].get(), side.stream(r));
  }
};

Kernel make_kernel(const KernelSpec& spec, const ComputeSide& side, int n) {
  Kernel kn{spec, {}, {}, {}, {}, {}};
  const LtTypes t = lt_types(calib::GemmDtype::bf16);
  const auto m = static_cast<std::uint64_t>(spec.m), nn = static_cast<std::uint64_t>(spec.n),
             k = static_cast<std::uint64_t>(spec.k);
  for (int r = 0; r < n; ++r) {
    const cudaStream_t s = side.stream(r);
    const auto seed = 7000 + 10 * static_cast<std::uint64_t>(r);
    if (spec.m == 0) {
      kn.a.emplace_back(r, spec.mem_bytes);
      kn.d.emplace_back(r, spec.mem_bytes);
      SS_CUDA(launch_fill_random(kn.a.back().get(), ElemType::f32, spec.mem_bytes / 4, seed, -1.0f,
                                 1.0f, s));
      continue;
    }
    kn.a.emplace_back(r, m * k * elem_size(t.in));
    kn.b.emplace_back(r, k * nn * elem_size(t.in));
    kn.d.emplace_back(r, m * nn * elem_size(t.out));
    SS_CUDA(launch_fill_random(kn.a.back().get(), t.in, m * k, seed, -1.0f, 1.0f, s));
    SS_CUDA(launch_fill_random(kn.b.back().get(), t.in, k * nn, seed + 1, -1.0f, 1.0f, s));
    SS_CUDA(cudaSetDevice(r));  // the handle's device
    kn.mm.push_back(
        std::make_unique<LtMatmul>(side.handles[static_cast<std::size_t>(r)].get(), t,
                                   calib::GemmShape{'N', 'N', spec.m, spec.n, spec.k, spec.name}));
    if (!kn.mm.back()->has_algo() && kn.no_algo.empty())
      kn.no_algo = strf("GPU %d: no cuBLASLt algorithm: %s", r, kn.mm.back()->why().c_str());
  }
  for (int r = 0; r < n; ++r) wait_stream(r, side.stream(r), kWaitTimeout, "the buffer fills");
  return kn;
}

/// Calls fa `a` times and fb `b` times, interleaved in proportion (fa first), so that neither
/// stream runs dry should the host fall behind the spin kernel.
void interleave(int a, int b, const std::function<void()>& fa, const std::function<void()>& fb) {
  int i = 0, j = 0;
  while (i < a || j < b) {
    if (j >= b || (i < a && static_cast<std::int64_t>(i) * b <= static_cast<std::int64_t>(j) * a)) {
      fa();
      ++i;
    } else {
      fb();
      ++j;
    }
  }
}

double seconds_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

int reps_for(double target_s, double per_run_s) {
  const double want = std::ceil(target_s / std::max(per_run_s, 1e-7));
  return static_cast<int>(std::clamp(want, 2.0, static_cast<double>(kMaxReps)));
}

/// Samples of one timed window: per GPU seconds per launch or call, and coverage.
struct Window {
  std::vector<double> per_gpu;
  bool covered = true;
  double slowest() const { return *std::max_element(per_gpu.begin(), per_gpu.end()); }
};

/// Queues and times the windows of one row (kernel x collective) on every GPU.
class RowBench {
 public:
  RowBench(CollGroup& g, const ComputeSide& side, const Kernel& kn, const CollCall& call)
      : g_(g), side_(side), kn_(kn), call_(call), n_(g.size()) {}

  /// Warm-up runs of both, then host queueing costs and rough GPU times (for choosing reps).
  void warm_up(double& est_kernel_s, double& est_call_s) {
    for_each_gpu([&](int r) { kn_.launch(r, side_); });
    g_.launch(call_);
    wait_all("warm-up runs");
    auto t0 = SteadyClock::now();
    for (int i = 0; i < 3; ++i) g_.launch(call_);
    host_call_s_ = seconds_since(t0) / 3;
    g_.wait(kWaitTimeout, "warm-up collectives");
    const Window k = compute_alone(3);
    est_kernel_s = *std::max_element(k.per_gpu.begin(), k.per_gpu.end());
    est_call_s = coll_alone(3);
  }

  /// 1. N launches per GPU on the compute streams, nothing else running.
  Window compute_alone(int reps) {
    const std::uint64_t spin = spin_ns(0, reps);
    const auto t0 = SteadyClock::now();
    for_each_gpu([&](int r) {
      SS_CUDA(launch_spin(spin, side_.stream(r)));
      SS_CUDA(cudaEventRecord(side_.ev(r, kBegin), side_.stream(r)));
    });
    const auto t_launch = SteadyClock::now();
    for (int i = 0; i < reps; ++i) for_each_gpu([&](int r) { kn_.launch(r, side_); });
    host_launch_s_ = seconds_since(t_launch) / (static_cast<double>(reps) * n_);
    note_host(t0, spin);
    for_each_gpu([&](int r) { SS_CUDA(cudaEventRecord(side_.ev(r, kEnd), side_.stream(r))); });
    wait_all("compute alone");
    return per_gpu(kBegin, kEnd, reps, Slot::kSlots);
  }

  /// 2. L calls on the comm streams, nothing else running: the slowest GPU's seconds per call.
  double coll_alone(int reps) {
    const auto s = g_.time_batch(call_, reps, spin_ns(reps, 0), kWaitTimeout);
    return *std::max_element(s.begin(), s.end()) / reps;
  }

  /// 3. N launches per GPU while the comm streams loop `loop` calls (started first).
  Window compute_beside(int reps, int loop) {
    const std::uint64_t spin = spin_ns(loop, reps);
    const auto t0 = SteadyClock::now();
    for_each_gpu([&](int r) {
      SS_CUDA(launch_spin(spin, g_.stream(r)));
      SS_CUDA(cudaEventRecord(side_.ev(r, kStart), g_.stream(r)));
    });
    g_.launch(call_);
    for_each_gpu([&](int r) {
      SS_CUDA(cudaEventRecord(side_.ev(r, kFirst), g_.stream(r)));
      SS_CUDA(cudaStreamWaitEvent(side_.stream(r), side_.ev(r, kFirst), 0));
      SS_CUDA(cudaEventRecord(side_.ev(r, kBegin), side_.stream(r)));
    });
    interleave(
        reps, loop - 1, [&] { for_each_gpu([&](int r) { kn_.launch(r, side_); }); },
        [&] { g_.launch(call_); });
    note_host(t0, spin);
    for_each_gpu([&](int r) {
      SS_CUDA(cudaEventRecord(side_.ev(r, kEnd), side_.stream(r)));
      SS_CUDA(cudaEventRecord(side_.ev(r, kLoopEnd), g_.stream(r)));
    });
    wait_all("compute beside a collective loop");
    return per_gpu(kBegin, kEnd, reps, kStart);
  }

  /// 4. L calls while the compute streams loop `loop` launches (started first).
  Window coll_beside(int reps, int loop) {
    const std::uint64_t spin = spin_ns(reps, loop);
    const auto t0 = SteadyClock::now();
    for_each_gpu([&](int r) {
      SS_CUDA(launch_spin(spin, side_.stream(r)));
      SS_CUDA(cudaEventRecord(side_.ev(r, kStart), side_.stream(r)));
      kn_.launch(r, side_);
      SS_CUDA(cudaEventRecord(side_.ev(r, kFirst), side_.stream(r)));
      SS_CUDA(cudaStreamWaitEvent(g_.stream(r), side_.ev(r, kFirst), 0));
      SS_CUDA(cudaEventRecord(side_.ev(r, kBegin), g_.stream(r)));
    });
    interleave(
        reps, loop - 1, [&] { g_.launch(call_); },
        [&] { for_each_gpu([&](int r) { kn_.launch(r, side_); }); });
    note_host(t0, spin);
    for_each_gpu([&](int r) {
      SS_CUDA(cudaEventRecord(side_.ev(r, kEnd), g_.stream(r)));
      SS_CUDA(cudaEventRecord(side_.ev(r, kLoopEnd), side_.stream(r)));
    });
    wait_all("a collective beside a compute loop");
    return per_gpu(kBegin, kEnd, reps, kStart);
  }

  /// Windows in which the host was still queueing when the spin kernel ended.
  int host_late() const { return host_late_; }

 private:
  void for_each_gpu(const std::function<void(int)>& f) const {
    for (int r = 0; r < n_; ++r) {
      SS_CUDA(cudaSetDevice(r));
      f(r);
    }
  }

  void wait_all(const char* what) {
    g_.wait(kWaitTimeout, what);
    for (int r = 0; r < n_; ++r) wait_stream(r, side_.stream(r), kWaitTimeout, what);
  }

  /// Spin that covers about twice the host time to queue `calls` collective calls and
  /// `launches` kernel launches per GPU (1 ms .. 250 ms).
  std::uint64_t spin_ns(int calls, int launches) const {
    const double host = calls * host_call_s_ + static_cast<double>(launches) * n_ * host_launch_s_;
    return static_cast<std::uint64_t>(std::clamp(2.0 * host + 1e-3, 1e-3, 0.25) * 1e9);
  }

  void note_host(SteadyClock::time_point t0, std::uint64_t spin) {
    if (seconds_since(t0) * 1e9 > static_cast<double>(spin)) ++host_late_;
  }

  /// Per GPU (end - begin) / reps; with a `start` slot, covered = the loop ended after `end`.
  Window per_gpu(Slot begin, Slot end, int reps, Slot start) const {
    Window w;
    for (int r = 0; r < n_; ++r) {
      w.per_gpu.push_back(elapsed_s(side_.ev(r, begin), side_.ev(r, end)) / reps);
      if (start != Slot::kSlots)
        w.covered = w.covered && elapsed_s(side_.ev(r, start), side_.ev(r, kLoopEnd)) >
                                     elapsed_s(side_.ev(r, start), side_.ev(r, end));
    }
    return w;
  }

  CollGroup& g_;
  const ComputeSide& side_;
  const Kernel& kn_;
  CollCall call_;
  int n_;
  double host_call_s_ = 100e-6, host_launch_s_ = 20e-6;  // until measured
  int host_late_ = 0;
};

double median(std::vector<double> v) { return calib::summarize(std::move(v)).median; }

/// Loop length that lasts kCoverFactor x `window_s` plus kCoverExtra items of `item_s`.
int cover_loop(double window_s, double item_s) {
  return reps_for(kCoverFactor * window_s, item_s) + kCoverExtra;
}

/// Background loop length for `reps` timed items, starting from `loop`: probes (at most
/// kMaxProbes) until one is covered, doubling the loop after each uncovered one; then at least
/// cover_loop of the covered probe's window. item_s: the background's time per item (alone).
int stretch_loop(int loop, double item_s, int reps, const std::function<Window(int)>& probe) {
  for (int i = 0; i < kMaxProbes; ++i) {
    const Window w = probe(loop);
    if (w.covered) return std::max(loop, cover_loop(reps * w.slowest(), item_s));
    loop = std::min(2 * loop, kMaxReps + kCoverExtra);
  }
  return loop;
}

/// Measures one row; throws GpuError when a GPU call fails.
Json measure_row(RunContext& ctx, CollGroup& g, const ComputeSide& side, const Kernel& kn,
                 CollOp op, const calib::CollCounts& cc, int windows, double target_s) {
  const int n = g.size();
  RowBench bench(g, side, kn, CollCall{op, cc.param_count, 0, 1});
  double est_k = 0.0, est_c = 0.0;
  bench.warm_up(est_k, est_c);
  const int reps_k = reps_for(target_s, est_k);
  const int reps_c = reps_for(target_s, est_c);

  // Background loops from the alone times, then stretched to cover the windows as they last
  // beside the other side (the side in front can slow down 2-6x) with untimed probes: a covered
  // probe's per-item time is the beside time, an uncovered one's underestimates it (the window's
  // tail ran alone), so the loop doubles until a probe is covered.
  const int loop_c = stretch_loop(cover_loop(reps_k * est_k, est_c), est_c, reps_k,
                                  [&](int loop) { return bench.compute_beside(reps_k, loop); });
  const int loop_k = stretch_loop(cover_loop(reps_c * est_c, est_k), est_k, reps_c,
                                  [&](int loop) { return bench.coll_beside(reps_c, loop); });

  // Alone and beside windows alternate, so that clock and power drift cancels in each pair.
  std::vector<double> k_alone, k_beside, k_ratio, c_alone, c_beside, c_ratio;
  bool k_covered = true, c_covered = true;
  for (int w = 0; w < windows; ++w) {
    const Window ka = bench.compute_alone(reps_k);
    const Window kb = bench.compute_beside(reps_k, loop_c);
    k_covered = k_covered && kb.covered;
    for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
      k_alone.push_back(ka.per_gpu[r]);
      k_beside.push_back(kb.per_gpu[r]);
      k_ratio.push_back(kb.per_gpu[r] / ka.per_gpu[r]);
    }
    const double ca = bench.coll_alone(reps_c);
    const Window cb = bench.coll_beside(reps_c, loop_k);
    c_covered = c_covered && cb.covered;
    c_alone.push_back(ca);
    c_beside.push_back(cb.slowest());
    c_ratio.push_back(cb.slowest() / ca);
  }
  if (bench.host_late() > 0)
    ctx.log(
        strf("note: in %d window(s) the host was still queueing when the spin kernel ended "
             "(launch gaps possible)",
             bench.host_late()));
  ctx.log(
      strf("%s / %s: %d launches x %.0f us, %d calls x %.0f us per window; background loops "
           "%d calls, %d launches",
           kn.spec.name, std::string(calib::coll_op_name(op)).c_str(), reps_k, est_k * 1e6, reps_c,
           est_c * 1e6, loop_c, loop_k));
  return Json{{"compute", kn.spec.name},
              {"class", kn.spec.cls},
              {"op", std::string(calib::coll_op_name(op))},
              {"bytes", cc.bytes},
              {"compute_alone_us", round_to(median(k_alone) * 1e6, 0.001)},
              {"compute_beside_us", round_to(median(k_beside) * 1e6, 0.001)},
              {"compute_slowdown", round_to(median(k_ratio), 0.0001)},
              {"compute_covered", k_covered},
              {"coll_alone_us", round_to(median(c_alone) * 1e6, 0.001)},
              {"coll_beside_us", round_to(median(c_beside) * 1e6, 0.001)},
              {"coll_slowdown", round_to(median(c_ratio), 0.0001)},
              {"coll_covered", c_covered},
              {"compute_reps", reps_k},
              {"coll_reps", reps_c}};
}

std::string method_text(int windows, double target_s) {
  return strf(
      "Compute kernel K (bf16 GEMM via cuBLASLt: NN, m x n x k as cuBLAS column-major arguments, "
      "fp32 compute, first heuristic algorithm, 32 MiB workspace; or the fp32 read/write kernel "
      "y = 2x over the named buffer) on a compute stream of every GPU, NCCL collective C (float32, "
      "out of place, sum, one ncclGroupStart/End over all ranks per call from one thread) on a "
      "separate comm stream of every GPU; CUDA events after warm-up, each window queued behind a "
      "spin kernel, windows of ~%.0f ms, %d rounds of (K alone, K beside C, C alone, C beside K). "
      "compute_alone_us: time per launch of compute_reps back-to-back launches; "
      "compute_beside_us: the same while the comm streams loop C (queued first, each compute "
      "stream waiting for the first call); both medians over rounds x GPUs; compute_slowdown: "
      "median over rounds x GPUs of (beside / alone of the same round and GPU). coll_alone_us: "
      "time per call of coll_reps back-to-back calls on the slowest GPU; coll_beside_us: the same "
      "while the compute streams loop K (queued first, each comm stream waiting for the first K "
      "on its GPU); both medians over rounds; coll_slowdown: median over rounds of (beside / "
      "alone). Background loops last >= 1.5x the timed window (as measured in untimed probes) "
      "+ 2 items; *_covered: in every window on every GPU the loop ended after the timed window "
      "(event times from a common start event). bytes: as in collectives rows (nccl-tests).",
      target_s * 1e3, windows);
}

void push_row(RunContext& ctx, const Json& row) {
  ctx.profile.edit([&](Json& d) { d["interference"]["rows"].push_back(row); });
}

void push_error(RunContext& ctx, const KernelSpec& k, CollOp op, const std::string& what) {
  push_row(
      ctx,
      Json{{"compute", k.name}, {"op", std::string(calib::coll_op_name(op))}, {"error", what}});
  ctx.record_error(
      strf("%s / %s: %s", k.name, std::string(calib::coll_op_name(op)).c_str(), what.c_str()));
}

}  // namespace

void run_interf(RunContext& ctx) {
  const int n = ctx.ngpus;
  const int windows = ctx.opt.quick ? 3 : 5;
  const double target_s = ctx.opt.quick ? 0.01 : 0.03;
  Json doc{{"method", method_text(windows, target_s)}, {"gpus", n}, {"rows", Json::array()}};
  if (n < 2) {
    doc["skipped"] = strf("needs at least 2 GPUs; %d in use", n);
    ctx.profile.edit([&](Json& d) { d["interference"] = doc; });
    return ctx.log("skipped: " + doc["skipped"].get<std::string>());
  }
  std::vector<CollOp> ops;
  for (CollOp op : kOps) {
    const std::string name(calib::coll_op_name(op));
    const auto& want = ctx.opt.coll_ops;
    if (want.empty() || std::find(want.begin(), want.end(), name) != want.end()) ops.push_back(op);
  }
  if (ops.empty()) doc["skipped"] = "--ops names none of all_gather, reduce_scatter, all_reduce, sendrecv";
  ctx.profile.edit([&](Json& d) { d["interference"] = doc; });
  if (ops.empty()) return ctx.log("skipped: " + doc["skipped"].get<std::string>());
  if (!ctx.fits(ctx.opt.quick ? 4.0 : 8.0)) return ctx.budget_stop("interference (every row)");

  const std::uint64_t coll_bytes = std::min(kCollBytes, ctx.opt.max_bytes);
  const double t_setup = ctx.now_s();
  ComputeSide side(n);  // declared before the group: destroyed after it
  std::unique_ptr<CollGroup> g;
  try {
    g = std::make_unique<CollGroup>(n, coll_bytes);
  } catch (const GpuError& e) {
    ctx.record_error(strf("creating NCCL communicators for GPUs 0..%d: %s", n - 1, e.what()));
    return;
  }
  ctx.log(strf("communicators for GPUs 0..%d ready (%.1f s); collectives of %llu bytes", n - 1,
               ctx.now_s() - t_setup, static_cast<unsigned long long>(coll_bytes)));

  double row_estimate_s = ctx.opt.quick ? 1.0 : 2.0;
  bool stop = false;
  for (const KernelSpec& spec : kKernels) {
    if (stop) break;
    if (!ctx.fits(row_estimate_s)) {
      ctx.budget_stop(std::string("interference ") + spec.name + " and the rows after it");
      break;
    }
    std::unique_ptr<Kernel> kn;
    try {
      kn = std::make_unique<Kernel>(make_kernel(spec, side, n));
    } catch (const GpuError& e) {
      // Set-up failures (out of memory, say) leave nothing running: the next kernel may still fit.
      for (CollOp op : ops) push_error(ctx, spec, op, std::string("set-up failed: ") + e.what());
      ctx.save();
      continue;
    }
    if (!kn->no_algo.empty()) {
      for (CollOp op : ops) push_error(ctx, spec, op, kn->no_algo);
      ctx.save();
      continue;
    }
    for (CollOp op : ops) {
      const std::string opname(calib::coll_op_name(op));
      if (!ctx.fits(row_estimate_s)) {
        ctx.budget_stop(
            strf("interference %s / %s and the rows after it", spec.name, opname.c_str()));
        stop = true;
        break;
      }
      const double t0 = ctx.now_s();
      const calib::CollCounts cc = calib::coll_counts(op, coll_bytes, 4, n);
      if (cc.bytes == 0) {
        push_error(ctx, spec, op,
                   strf("%llu bytes are too few to split over %d GPUs",
                        static_cast<unsigned long long>(coll_bytes), n));
        continue;
      }
      try {
        const Json row = measure_row(ctx, *g, side, *kn, op, cc, windows, target_s);
        push_row(ctx, row);
        ctx.log(
            strf("%s + %s: compute %.1f -> %.1f us (x%.3f%s), collective %.1f -> %.1f us "
                 "(x%.3f%s) (%.1f s)",
                 spec.name, opname.c_str(), row["compute_alone_us"].get<double>(),
                 row["compute_beside_us"].get<double>(), row["compute_slowdown"].get<double>(),
                 row["compute_covered"].get<bool>() ? "" : ", NOT covered",
                 row["coll_alone_us"].get<double>(), row["coll_beside_us"].get<double>(),
                 row["coll_slowdown"].get<double>(),
                 row["coll_covered"].get<bool>() ? "" : ", NOT covered", ctx.now_s() - t0));
      } catch (const GpuError& e) {
        // Work may still be queued (or hung) on both kinds of stream: abort the communicators
        // before anything is freed, and end the section.
        g->mark_broken();
        push_error(ctx, spec, op, e.what());
        stop = true;
        break;
      }
      row_estimate_s = 1.3 * (ctx.now_s() - t0) + 0.1;
      ctx.save();
    }
    if (stop) {
      // Close here, while the kernel's buffers (which queued work may still use) are alive.
      if (const std::string err = g->close(60.0); !err.empty()) {
        ctx.record_error(err);
        ctx.detached_work = true;
        ctx.save();
        return;
      }
    }
  }
  if (const std::string err = g->close(60.0); !err.empty()) {
    ctx.record_error(err);
    ctx.detached_work = true;
  }
  ctx.save();
}

}  // namespace scalescope::gpu
