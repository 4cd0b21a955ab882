// `scalescope sweep SPEC.json -o OUT`: every point of a sweep planned or simulated, on one process or the
// ranks of an MPI job (`mpirun -np N scalescope sweep ...`), journalled, resumable, written atomically.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>

#include "cli_common.hpp"
#include "stack_loader.hpp"
#include "scalescope/planner/sweep.hpp"
#include "scalescope/planner/sweep_output.hpp"

namespace scalescope::cli {

namespace {

struct SweepCliOptions {
  std::string spec, output;
  int threads = 0;
  bool restart = false;
  bool mpi = false;
  bool quiet = false;
  Format format = Format::csv;
};

/// Progress on stderr: a bar redrawn in place on a terminal, a line every 10% otherwise.
std::function<void(std::size_t, std::size_t)> progress_printer(bool quiet) {
  if (quiet) return {};
  const bool tty = ::isatty(2) != 0;
  const auto start = std::chrono::steady_clock::now();
  return [tty, start, last = -1](std::size_t done, std::size_t total) mutable {
    const int pct = total ? static_cast<int>(100 * done / total) : 100;
    if (!tty && pct / 10 == last / 10 && done != total) return;
    last = pct;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int width = 30, fill = width * pct / 100;
    std::fprintf(stderr, "%sscalescope sweep: [%s%s] %zu/%zu points, %.0f s%s", tty ? "\r" : "",
                 std::string(static_cast<std::size_t>(fill), '#').c_str(),
                 std::string(static_cast<std::size_t>(width - fill), ' ').c_str(), done, total, s,
                 tty && done != total ? "" : "\n");
    std::fflush(stderr);
  };
}

int run(const SweepCliOptions& o) {
  const std::string cmd = "sweep";
  std::shared_ptr<planner::Transport> transport;
  if (o.mpi || planner::launched_by_mpi()) {
    auto t = planner::load_mpi_transport();
    if (!t) return report(cmd, t.error());
    transport = std::move(t).value();
  }
  const bool root = !transport || transport->rank() == 0;
  auto spec = planner::load_sweep_spec(o.spec);
  if (!spec) return root ? report(cmd, spec.error()) : spec.error().exit_code();
  planner::SweepRunOptions ro;
  ro.output = o.output;
  ro.restart = o.restart;
  ro.threads = o.threads > 0 ? o.threads : transport ? 1 : static_cast<int>(std::thread::hardware_concurrency());
  ro.progress = progress_printer(o.quiet);
  auto res = planner::run_sweep(*spec, ro, load_stack_by_name, transport.get());
  if (!res) return root ? report(cmd, res.error()) : res.error().exit_code();
  if (res->worker) return 0;
  if (res->resumed > 0)
    std::fprintf(stderr, "scalescope sweep: resumed %s: %zu of %zu points were done, %zu computed now\n",
                 (o.output + ".partial").c_str(), res->resumed, res->points, res->computed);
  if (o.output.empty()) {
    std::map<std::size_t, std::vector<Json>> rows;
    for (const auto& r : res->rows) rows[r.at("point").get<std::size_t>()].push_back(r);
    const auto f = o.format == Format::json ? planner::SweepFormat::json : planner::SweepFormat::csv;
    auto text = planner::render_sweep(*spec, rows, f);
    if (!text) return report(cmd, text.error());
    print_stdout(*text);
  } else if (!o.quiet) {
    std::fprintf(stderr, "scalescope sweep: wrote %s (%zu rows, %zu points, %d rank(s))\n", o.output.c_str(),
                 res->rows.size(), res->points, transport ? transport->size() : 1);
  }
  return 0;
}

}  // namespace

void register_sweep(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<SweepCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "sweep",
      "Plan (mode \"plan\") or simulate with a fixed plan (mode \"simulate\") every point of a sweep spec: the product "
      "or listed points of models, clusters, GPU counts, global batches, calibrations, stacks and plan constraints "
      "(docs/sweep-format.md). Rows are journalled to OUT.partial as points finish and OUT is written atomically at "
      "the end; an interrupted run resumes. Under mpirun/srun the points are shared among the ranks (dynamic load "
      "balancing, gathered on rank 0); the output is byte-identical to a one-process run.");
  sub->add_option("spec", o->spec, "Sweep spec (JSON, format scalescope.sweep/1)")->required();
  sub->add_option("-o,--output", o->output,
                  "Result file: .csv, .json or .parquet (default: CSV, or --format json, on stdout, without a journal)");
  sub->add_option("--threads", o->threads, "Points evaluated at once by this process (default: all cores; 1 per rank "
                                           "under MPI)");
  sub->add_flag("--restart", o->restart, "Discard the journal of an interrupted run instead of resuming it");
  sub->add_flag("--mpi", o->mpi, "Use the MPI transport (automatic under mpirun, mpiexec and srun --mpi=pmix)");
  sub->add_flag("-q,--quiet", o->quiet, "No progress on stderr");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run(*o); });
}

}  // namespace scalescope::cli
