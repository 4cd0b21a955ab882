// GEMM section (GPU 0): cuBLASLt throughput by dtype and shape (gemm_shapes.hpp), after a
// correctness check of each dtype against a double-precision host product.
#include <algorithm>
#include <cmath>
#include <memory>

#include "check.hpp"
#include "lt_matmul.hpp"
#include "scalescope/calibrate/gpu_plan.hpp"
#include "scalescope/calibrate/model_shapes.hpp"
#include "sections.hpp"
#include "timing.hpp"

namespace scalescope::gpu {

namespace {

using calib::GemmDtype;
using calib::GemmShape;

constexpr int kDev = 0;

double tolerance(GemmDtype d) {
  switch (d) {
    case GemmDtype::fp32:
      return 1e-4;
    case GemmDtype::tf32:
      return 5e-3;
    default:
      return 1e-2;  // 16-bit outputs (bf16 rounding alone is ~2e-3 relative)
  }
}

std::vector<float> to_host_floats(const void* src, ElemType t, std::size_t n, cudaStream_t s) {
  DeviceBuffer tmp(kDev, n * 4);
  SS_CUDA(launch_to_float(src, t, tmp.as<float>(), n, s));
  std::vector<float> out(n);
  SS_CUDA(cudaMemcpyAsync(out.data(), tmp.get(), n * 4, cudaMemcpyDeviceToHost, s));
  wait_stream(kDev, s, 60.0, "a conversion for the GEMM check");
  return out;
}

/// Relative Frobenius error of a 256^3 product in each layout the dtype uses; the largest.
double check_dtype(GemmDtype dtype, const LtTypes& t, cublasLtHandle_t h, const DeviceBuffer& a,
                   const DeviceBuffer& b, const DeviceBuffer& d, const DeviceBuffer& ws,
                   cudaStream_t s, std::string& detail) {
  constexpr std::int64_t N = 256;
  const std::vector<std::pair<char, char>> layouts =
      is_fp8(dtype)
          ? std::vector<std::pair<char, char>>{{'T', 'N'}}
          : std::vector<std::pair<char, char>>{{'N', 'N'}, {'T', 'N'}, {'N', 'T'}};
  double worst = 0.0;
  const auto av = to_host_floats(a.get(), t.in, N * N, s);
  const auto bv = to_host_floats(b.get(), t.in, N * N, s);
  for (const auto& [ta, tb] : layouts) {
    const GemmShape g{ta, tb, N, N, N, "check"};
    LtMatmul mm(h, t, g);
    if (!mm.has_algo())
      throw GpuError("GEMM check " + std::string(1, ta) + std::string(1, tb) + ": " + mm.why());
    mm.run(a.get(), b.get(), d.get(), ws.get(), s);
    const auto dv = to_host_floats(d.get(), t.out, N * N, s);
    double err2 = 0.0, ref2 = 0.0;
    for (std::int64_t j = 0; j < N; ++j) {
      for (std::int64_t i = 0; i < N; ++i) {
        double acc = 0.0;
        for (std::int64_t l = 0; l < N; ++l) {
          const double x = ta == 'N' ? av[static_cast<std::size_t>(i + l * N)]
                                     : av[static_cast<std::size_t>(l + i * N)];
          const double y = tb == 'N' ? bv[static_cast<std::size_t>(l + j * N)]
                                     : bv[static_cast<std::size_t>(j + l * N)];
          acc += x * y;
        }
        const double got = dv[static_cast<std::size_t>(i + j * N)];
        err2 += (got - acc) * (got - acc);  // NaN makes err2 NaN, which fails the check below
        ref2 += acc * acc;
      }
    }
    const double rel = std::sqrt(err2 / ref2);
    detail += strf("%c%c %.2e; ", ta, tb, rel);
    if (!(rel <= worst)) worst = rel;  // keeps NaN
  }
  return worst;
}

/// Checks and times one dtype. Returns false when the time budget stopped it.
bool run_dtype(RunContext& ctx, GemmDtype dtype, int cc, cublasLtHandle_t handle,
               const DeviceBuffer& ws, cudaStream_t s, const std::vector<GemmShape>& extra) {
  const std::string dname(calib::gemm_dtype_name(dtype));
  const LtTypes t = lt_types(dtype);
  std::vector<GemmShape> shapes;
  if (ctx.opt.gemm_grid) shapes = calib::gemm_shapes(dtype, ctx.opt.quick);
  for (GemmShape g : extra) {
    // Fast accumulation prices forward GEMMs only (Transformer Engine's fprop): a shape every label of which is a
    // dgrad or wgrad is left to fp8_e4m3.
    if (dtype == GemmDtype::fp8_e4m3_fast && calib::backward_only_label(g.label)) continue;
    if (calib::is_fp8(dtype)) {  // cuBLASLt FP8 on Hopper: TN only (gemm_shapes.hpp)
      g.transa = 'T';
      g.transb = 'N';
    }
    const bool repeat = std::any_of(shapes.begin(), shapes.end(), [&](const GemmShape& h) {
      return h.transa == g.transa && h.transb == g.transb && h.m == g.m && h.n == g.n && h.k == g.k;
    });
    if (!repeat) shapes.push_back(std::move(g));
  }
  Json meta{{"dtype", dname},
            {"device", kDev},
            {"a_b_type", t.ab_name},
            {"c_d_type", t.cd_name},
            {"compute_type", t.compute_name},
            {"scale_type", "fp32 (alpha 1, beta 0)"},
            {"algorithm", "first result of cublasLtMatmulAlgoGetHeuristic, 32 MiB workspace"},
            {"data", "uniform random in [-1, 1)"},
            {"shapes_planned", shapes.size()},
            {"shapes_timed", 0}};
  if (calib::is_fp8(dtype)) {
    meta["note"] = std::string("TN layout (cuBLASLt FP8 requirement); A/B scale 1 (no scale pointers); ") +
                   (dtype == GemmDtype::fp8_e4m3_fast
                        ? "fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM 1: Transformer Engine's forward GEMMs)"
                        : "default (split) accumulation (Transformer Engine's dgrad and wgrad GEMMs)");
    if (cc < 89) {
      meta["skipped"] =
          strf("FP8 needs compute capability 8.9 or newer; GPU 0 is %d.%d", cc / 10, cc % 10);
      ctx.profile.edit([&](Json& d) { d["gemm_meta"].push_back(meta); });
      ctx.log(dname + ": skipped (" + meta["skipped"].get<std::string>() + ")");
      return true;
    }
  }
  if (!ctx.fits(5.0)) {
    ctx.budget_stop("GEMM " + dname + " and the dtypes after it");
    return false;
  }
  std::size_t meta_idx = 0;
  ctx.profile.edit([&](Json& doc) {
    meta_idx = doc["gemm_meta"].size();
    doc["gemm_meta"].push_back(meta);
  });

  std::uint64_t max_a = 256 * 256, max_b = 256 * 256,
                max_d = 256 * 256;  // the check's 256^3 product
  for (const auto& g : shapes) {
    const auto m = static_cast<std::uint64_t>(g.m), n = static_cast<std::uint64_t>(g.n),
               k = static_cast<std::uint64_t>(g.k);
    max_a = std::max(max_a, m * k);
    max_b = std::max(max_b, k * n);
    max_d = std::max(max_d, m * n);
  }
  DeviceBuffer a(kDev, max_a * elem_size(t.in));
  DeviceBuffer b(kDev, max_b * elem_size(t.in));
  DeviceBuffer d(kDev, max_d * elem_size(t.out));
  SS_CUDA(cudaSetDevice(kDev));
  SS_CUDA(launch_fill_random(a.get(), t.in, max_a, 31, -1.0f, 1.0f, s));
  SS_CUDA(launch_fill_random(b.get(), t.in, max_b, 32, -1.0f, 1.0f, s));

  std::string detail;
  const double rel = check_dtype(dtype, t, handle, a, b, d, ws, s, detail);
  const bool ok = rel <= tolerance(dtype);
  ctx.profile.edit([&](Json& doc) {
    Json& m = doc["gemm_meta"][meta_idx];
    m["check"] = ok ? "passed" : "FAILED";
    m["check_rel_error"] = std::isfinite(rel) ? Json(rel) : Json("NaN");
    m["check_tolerance"] = tolerance(dtype);
    m["check_detail"] =
        "256^3 product vs double-precision host reference, relative Frobenius error: " + detail;
  });
  if (!ok) {
    ctx.record_error(strf("GEMM %s: correctness check failed (relative error %g > %g), not timed",
                          dname.c_str(), rel, tolerance(dtype)));
    return true;
  }

  const double t_dtype = ctx.now_s();
  double rate = 50e12;  // FLOP/s guess until the first shape is measured
  double best = 0.0;
  int timed = 0;
  for (const GemmShape& g : shapes) {
    if (!ctx.fits(14.0 * g.flops() / rate + 0.08)) {
      ctx.budget_stop("GEMM " + dname + " " + g.label + " and the shapes after it");
      return false;
    }
    Json row{{"dtype", dname},
             {"transa", std::string(1, g.transa)},
             {"transb", std::string(1, g.transb)},
             {"m", g.m},
             {"n", g.n},
             {"k", g.k}};
    LtMatmul mm(handle, t, g);
    if (!mm.has_algo()) {
      row["error"] = "no cuBLASLt algorithm: " + mm.why();
      row["label"] = g.label;
      ctx.profile.edit([&](Json& doc) { doc["gemm"].push_back(row); });
      continue;
    }
    auto op = [&] { mm.run(a.get(), b.get(), d.get(), ws.get(), s); };
    const double est = time_single(kDev, s, op);
    const int reps = calib::reps_for_duration(est, 10, 0.05, 200);
    const calib::SampleStats stt = calib::summarize(time_back_to_back(kDev, s, 1, reps, op));
    rate = g.flops() / stt.median;
    best = std::max(best, rate);
    row["time_us"] = round_to(stt.median * 1e6, 0.001);
    row["time_us_min"] = round_to(stt.min * 1e6, 0.001);
    row["time_us_p90"] = round_to(stt.p90 * 1e6, 0.001);
    row["tflops"] = round_to(rate / 1e12, 0.01);
    row["reps"] = reps;
    row["label"] = g.label;
    ++timed;
    ctx.profile.edit([&](Json& doc) {
      doc["gemm"].push_back(row);
      doc["gemm_meta"][meta_idx]["shapes_timed"] = timed;
    });
  }
  ctx.log(strf("%s: check %.1e, %d of %zu shapes timed, best %.0f TFLOP/s (%.1f s)", dname.c_str(),
               rel, timed, shapes.size(), best / 1e12, ctx.now_s() - t_dtype));
  return true;
}

}  // namespace

void run_gemm(RunContext& ctx) {
  cudaDeviceProp prop{};
  SS_CUDA(cudaGetDeviceProperties(&prop, kDev));
  const int cc = prop.major * 10 + prop.minor;
  Stream st(kDev);
  LtHandle handle(kDev);
  DeviceBuffer ws(kDev, kLtWorkspaceBytes);
  calib::CalibrationShapes file;
  if (!ctx.opt.gemm_shapes_file.empty()) {
    auto loaded = calib::load_calibration_shapes(ctx.opt.gemm_shapes_file);
    if (!loaded) throw GpuError("--gemm-shapes: " + loaded.error().str());
    file = std::move(loaded).value();
    ctx.log(strf("GEMM shapes file %s: %zu shapes in %zu dtypes", ctx.opt.gemm_shapes_file.c_str(),
                 file.gemms.size(), file.dtypes.size()));
  }
  for (GemmDtype dtype : calib::all_gemm_dtypes()) {
    const std::string dname(calib::gemm_dtype_name(dtype));
    const auto& want = ctx.opt.gemm_dtypes;
    const bool in_file = std::find(file.dtypes.begin(), file.dtypes.end(), dname) != file.dtypes.end();
    if (!want.empty() && std::find(want.begin(), want.end(), dname) == want.end()) continue;
    if (!ctx.opt.gemm_grid && !in_file) continue;
    bool go_on = true;
    try {
      go_on = run_dtype(ctx, dtype, cc, handle.get(), ws, st.get(),
                        in_file ? file.gemms : std::vector<GemmShape>{});
    } catch (const GpuError& e) {
      ctx.record_error("GEMM " + dname + ": " + e.what());
      // A failure that broke the CUDA context fails every later call too; stop then.
      const cudaError_t sticky = cudaDeviceSynchronize();
      if (sticky != cudaSuccess) {
        ctx.save();
        throw GpuError("GEMM: CUDA context unusable after the " + dname +
                       " failure: " + cuda_error_text(sticky));
      }
    }
    ctx.save();
    if (!go_on) return;
  }
}

}  // namespace scalescope::gpu
