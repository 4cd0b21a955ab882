// Memory section (GPU 0): HBM bandwidth (copy engine and a read/write kernel), pinned host
// transfers, kernel launch overheads and the cost of an elementwise kernel by size; and, for every GPU in use,
// host copies per NUMA node and the clocks / PCIe links under load (sec_host.cpp).
#include <chrono>
#include <cstring>

#include "check.hpp"
#include "kernels.hpp"
#include "scalescope/calibrate/gpu_plan.hpp"
#include "sections.hpp"
#include "timing.hpp"

namespace scalescope::gpu {

namespace {

using calib::summarize;
using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

Json stats_json(const calib::SampleStats& s) {
  return Json{{"time_us", round_to(s.median * 1e6, 0.001)},
              {"time_us_min", round_to(s.min * 1e6, 0.001)},
              {"time_us_p90", round_to(s.p90 * 1e6, 0.001)},
              {"reps", s.n}};
}

void store(RunContext& ctx, const Json& mem) {
  ctx.profile.edit([&](Json& d) { d["memory"] = mem; });
}

}  // namespace

void run_mem(RunContext& ctx) {
  constexpr int dev = 0;
  Stream st(dev);
  const cudaStream_t s = st.get();
  Json mem{{"device", dev}};

  // 1. HBM: device-to-device copy and a scale-copy kernel over `big` bytes (bytes read + written).
  const std::size_t big = ctx.opt.quick ? (256ull << 20) : (2ull << 30);
  if (!ctx.fits(5.0)) return ctx.budget_stop("device-to-device copies");
  {
    DeviceBuffer src(dev, big), dst(dev, big);
    SS_CUDA(launch_fill_random(src.get(), ElemType::f32, big / 4, 11, -1.0f, 1.0f, s));
    const auto copy = summarize(time_back_to_back(dev, s, 2, 10, [&] {
      SS_CUDA(cudaMemcpyAsync(dst.get(), src.get(), big, cudaMemcpyDeviceToDevice, s));
    }));
    const auto kern = summarize(time_back_to_back(dev, s, 2, 10, [&] {
      SS_CUDA(launch_scale_copy(src.as<float>(), dst.as<float>(), big / 4, s));
    }));
    mem["hbm_bytes_counted"] = "read+write: 2 x buffer bytes per copy";
    mem["d2d_copy_buffer_bytes"] = big;
    mem["d2d_copy_GBps"] = round_to(2.0 * static_cast<double>(big) / copy.median / 1e9, 0.01);
    mem["d2d_copy"] = stats_json(copy);
    mem["read_write_kernel_GBps"] =
        round_to(2.0 * static_cast<double>(big) / kern.median / 1e9, 0.01);
    mem["read_write_kernel"] = stats_json(kern);
    ctx.log(strf("HBM: cudaMemcpy D2D %.0f GB/s, read/write kernel %.0f GB/s (read+write bytes)",
                 mem["d2d_copy_GBps"].get<double>(), mem["read_write_kernel_GBps"].get<double>()));
  }
  store(ctx, mem);

  // 2. Pinned host <-> device, one direction at a time.
  const std::size_t hb = ctx.opt.quick ? (64ull << 20) : (512ull << 20);
  if (!ctx.fits(5.0)) return ctx.budget_stop("host-device copies");
  {
    PinnedBuffer host(hb);
    std::memset(host.get(), 1, hb);  // touch every page before timing
    DeviceBuffer d(dev, hb);
    const auto h2d = summarize(time_back_to_back(dev, s, 1, 5, [&] {
      SS_CUDA(cudaMemcpyAsync(d.get(), host.get(), hb, cudaMemcpyHostToDevice, s));
    }));
    const auto d2h = summarize(time_back_to_back(dev, s, 1, 5, [&] {
      SS_CUDA(cudaMemcpyAsync(host.get(), d.get(), hb, cudaMemcpyDeviceToHost, s));
    }));
    mem["host_copy_bytes"] = hb;
    mem["h2d_GBps"] = round_to(static_cast<double>(hb) / h2d.median / 1e9, 0.01);
    mem["h2d"] = stats_json(h2d);
    mem["d2h_GBps"] = round_to(static_cast<double>(hb) / d2h.median / 1e9, 0.01);
    mem["d2h"] = stats_json(d2h);
    ctx.log(strf("pinned host copies: H2D %.1f GB/s, D2H %.1f GB/s", mem["h2d_GBps"].get<double>(),
                 mem["d2h_GBps"].get<double>()));
  }
  store(ctx, mem);

  // 2b. Every GPU from every NUMA node, pinned and pageable; clocks and PCIe links under load.
  run_host_copies(ctx, mem);
  store(ctx, mem);
  sample_under_load(ctx);

  // 3. Launch overheads of an empty kernel.
  if (!ctx.fits(3.0)) return ctx.budget_stop("launch overhead");
  {
    SS_CUDA(cudaSetDevice(dev));
    for (int i = 0; i < 200; ++i) SS_CUDA(launch_empty(s));
    wait_stream(dev, s, 60.0, "warm-up launches");
    constexpr int kBatch = 500;
    std::vector<double> submit, b2b, sync;
    for (int rep = 0; rep < 7; ++rep) {
      const auto t0 = SteadyClock::now();
      for (int i = 0; i < kBatch; ++i) SS_CUDA(launch_empty(s));
      const double t_submit = seconds_since(t0);
      SS_CUDA(cudaStreamSynchronize(s));
      const double t_all = seconds_since(t0);
      submit.push_back(t_submit / kBatch);
      b2b.push_back(t_all / kBatch);
    }
    for (int i = 0; i < 300; ++i) {
      const auto t0 = SteadyClock::now();
      SS_CUDA(launch_empty(s));
      SS_CUDA(cudaStreamSynchronize(s));
      sync.push_back(seconds_since(t0));
    }
    const auto gpu =
        summarize(time_back_to_back(dev, s, 10, 200, [&] { SS_CUDA(launch_empty(s)); }));
    mem["launch_overhead_us"] = round_to(summarize(submit).median * 1e6, 0.001);
    mem["launch_back_to_back_us"] = round_to(summarize(b2b).median * 1e6, 0.001);
    mem["launch_sync_us"] = round_to(summarize(sync).median * 1e6, 0.001);
    mem["empty_kernel_gpu_us"] = round_to(gpu.median * 1e6, 0.001);
    mem["launch_notes"] =
        "launch_overhead_us: host time per cudaLaunchKernel of an empty kernel, 500 back to back "
        "(median of 7 "
        "batches); launch_back_to_back_us: wall time per kernel including the final synchronize; "
        "launch_sync_us: launch + cudaStreamSynchronize, median of 300; empty_kernel_gpu_us: event "
        "time between "
        "queued empty kernels";
    ctx.log(
        strf("launch: submit %.2f us, back-to-back %.2f us, launch+sync %.2f us, GPU-side %.2f us",
             mem["launch_overhead_us"].get<double>(), mem["launch_back_to_back_us"].get<double>(),
             mem["launch_sync_us"].get<double>(), mem["empty_kernel_gpu_us"].get<double>()));
  }
  store(ctx, mem);

  // 4. Elementwise c = a + b (float) by size: what a small memory-bound kernel costs.
  const std::size_t max_n = ctx.opt.quick ? (1ull << 22) : (1ull << 28);
  mem["elementwise_kernel"] =
      "c[i] = a[i] + b[i], float32; bytes = 12 * n_elements (read a, b; write c)";
  mem["elementwise"] = Json::array();
  DeviceBuffer a(dev, max_n * 4), b(dev, max_n * 4), c(dev, max_n * 4);
  SS_CUDA(launch_fill_random(a.get(), ElemType::f32, max_n, 21, -1.0f, 1.0f, s));
  SS_CUDA(launch_fill_random(b.get(), ElemType::f32, max_n, 22, -1.0f, 1.0f, s));
  for (std::size_t n = 256; n <= max_n; n *= 4) {
    if (!ctx.fits(1.0)) {
      store(ctx, mem);
      return ctx.budget_stop(strf("elementwise n=%zu", n));
    }
    auto op = [&] { SS_CUDA(launch_add(a.as<float>(), b.as<float>(), c.as<float>(), n, s)); };
    const double est = time_single(dev, s, op);
    const int reps = calib::reps_for_duration(est, 20, 0.02, 500);
    const auto st_n = summarize(time_back_to_back(dev, s, 3, reps, op));
    const double bytes = 12.0 * static_cast<double>(n);
    Json row{{"n_elements", n}, {"bytes", static_cast<std::uint64_t>(bytes)}};
    row.update(stats_json(st_n));
    row["GBps"] = round_to(bytes / st_n.median / 1e9, 0.01);
    mem["elementwise"].push_back(row);
  }
  store(ctx, mem);
  const auto& last = mem["elementwise"].back();
  ctx.log(strf("elementwise add: %zu sizes, %.2f us at 256 elements, %.0f GB/s at %zu elements",
               mem["elementwise"].size(), mem["elementwise"][0]["time_us"].get<double>(),
               last["GBps"].get<double>(), last["n_elements"].get<std::size_t>()));
}

}  // namespace scalescope::gpu
