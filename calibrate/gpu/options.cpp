// Command-line options of scalescope-calibrate: declarations, --quick defaults, validation.
#include "options.hpp"

#include "scalescope/calibrate/gemm_shapes.hpp"
#include "scalescope/calibrate/gpu_plan.hpp"

namespace scalescope::gpu {

namespace {

/// "topo,mem,...": the sections in measuring order.
std::string section_list() {
  std::string out;
  for (const auto& s : kSectionOrder) out += (out.empty() ? "" : ",") + s;
  return out;
}

}  // namespace

void add_options(CLI::App& app, Options& opt, RawOptions& raw) {
  std::vector<std::string> op_names, dtype_names;
  for (auto op : calib::all_coll_ops()) op_names.emplace_back(calib::coll_op_name(op));
  for (auto d : calib::all_gemm_dtypes()) dtype_names.emplace_back(calib::gemm_dtype_name(d));

  app.add_option(
         "-o,--output", opt.output,
         "Profile JSON to write; rewritten atomically (temp file + rename) as results come in")
      ->capture_default_str();
  app.add_option("--gpus", opt.gpus,
                 "Use CUDA devices 0..N-1 (default: all visible; error if fewer are present)")
      ->check(CLI::Range(1, 4096));
  app.add_option("--min-bytes", raw.min_bytes,
                 "Smallest collective size (bytes; K/M/G suffixes are powers of 1024)")
      ->capture_default_str();
  app.add_option(
         "--max-bytes", raw.max_bytes,
         "Largest collective and P2P size; every GPU needs about 2x this free (P2P stops at 1G)")
      ->capture_default_str();
  app.add_option("--sections", opt.sections,
                 "Comma-separated sections to run, measured in the order " + section_list() +
                     " (interf: compute-communication interference, 2+ GPUs)")
      ->delimiter(',')
      ->check(CLI::IsMember(kSectionOrder))
      ->capture_default_str();
  app.add_option("--ops", opt.coll_ops,
                 "Comma-separated collectives (default all; interf measures those of "
                 "all_gather,reduce_scatter,all_reduce named)")
      ->delimiter(',')
      ->check(CLI::IsMember(op_names));
  app.add_option("--gemm-dtypes", opt.gemm_dtypes, "Comma-separated GEMM dtypes (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember(dtype_names));
  app.add_option("--gemm-shapes", opt.gemm_shapes_file,
                 "GEMM shapes to time besides the built-in grid, in each dtype the file names "
                 "(scalescope.calibration-shapes/1, written by `scalescope calibrate shapes --model ...`)");
  app.add_option("--gemm-grid", raw.gemm_grid,
                 "default: time the built-in grid of squares and transformer-layer GEMMs; none: only "
                 "--gemm-shapes")
      ->check(CLI::IsMember({"default", "none"}))
      ->capture_default_str();
  app.add_option("--time-budget-s", opt.time_budget_s,
                 "Stop starting new measurements when this many seconds are used up (recorded in "
                 "the profile)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--iters", opt.iters,
                 "Collective iterations per timed batch (nccl-tests -n; 5 above 64 MiB)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--warmup", opt.warmup,
                 "Collective warm-up iterations per size (nccl-tests -w; 2 above 64 MiB)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_flag("--quick", opt.quick,
               "Smoke run: sizes up to 4M, few GEMM shapes, small buffers, budget 120 s (explicit "
               "options win)");
  app.add_flag("--allow-nvls", opt.allow_nvls,
               "Do not force NCCL_NVLS_ENABLE=0 (by default NVLink multicast is switched off for "
               "the host's safety)");
  app.add_option("--cluster", opt.check_cluster,
                 "Cluster to check the profile against at the end (`scalescope calibrate check`): a topologies/ name "
                 "or a file; default: the built-in with this GPU type and the fewest GPUs per node");
  app.add_option("--watchdog-s", opt.watchdog_s,
                 "Abort (writing the profile) after this many seconds; 0 = time budget + 90")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

std::string finish_options(const CLI::App& app, Options& opt, const RawOptions& raw) {
  std::string max_text = raw.max_bytes;
  if (opt.quick) {
    if (app.count("--max-bytes") == 0) max_text = "4M";
    if (app.count("--iters") == 0) opt.iters = 5;
    if (app.count("--warmup") == 0) opt.warmup = 2;
    if (app.count("--time-budget-s") == 0) opt.time_budget_s = 120.0;
  }
  const auto mn = calib::parse_byte_size(raw.min_bytes);
  const auto mx = calib::parse_byte_size(max_text);
  if (!mn || *mn == 0)
    return "--min-bytes: expected a positive byte count such as 8 or 64K, got '" + raw.min_bytes +
           "'";
  if (!mx || *mx == 0)
    return "--max-bytes: expected a positive byte count such as 1G, got '" + max_text + "'";
  if (*mn > *mx)
    return "--min-bytes (" + raw.min_bytes + ") is larger than --max-bytes (" + max_text + ")";
  if (*mx > (16ull << 30)) return "--max-bytes: at most 16G, got '" + max_text + "'";
  opt.min_bytes = *mn;
  opt.max_bytes = *mx;
  opt.gemm_grid = raw.gemm_grid != "none";
  if (!opt.gemm_grid && opt.gemm_shapes_file.empty())
    return "--gemm-grid none needs --gemm-shapes FILE (otherwise no GEMM would be timed)";
  if (opt.sections.empty()) return "--sections: expected at least one of " + section_list();
  return {};
}

}  // namespace scalescope::gpu
