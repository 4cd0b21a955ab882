// `scalescope import nccl-tests`: nccl-tests logs -> a calibration profile (out-of-place columns).
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "scalescope/calibrate/nccl_tests.hpp"

namespace scalescope::cli {

void register_import_trace(CLI::App* import, Context& ctx);  // cmd_import_trace.cpp

namespace {

struct ImportNcclOptions {
  std::vector<std::string> files;
  std::string output;
  std::string op = "auto";
  int gpus_per_node = 0;
  bool allow_truncated = false;
  Format format = Format::text;
};

int run_import(const ImportNcclOptions& o) {
  const std::string cmd = "import nccl-tests";
  if (o.output.empty()) return report(cmd, input_error("", "-o", "an output profile file is required"));
  calib::NcclTestsOptions opt;
  if (o.op != "auto") opt.op = o.op;
  if (o.gpus_per_node != 0) {
    if (o.gpus_per_node < 0)
      return report(cmd, input_error("", "--gpus-per-node", "expected a positive integer, got " + std::to_string(o.gpus_per_node)));
    opt.gpus_per_node = o.gpus_per_node;
  }
  opt.allow_truncated = o.allow_truncated;
  std::vector<std::filesystem::path> files(o.files.begin(), o.files.end());
  std::vector<std::string> notes;
  auto profile = calib::import_nccl_tests(files, opt, &notes);
  if (!profile) return report(cmd, profile.error());
  for (const auto& n : notes) std::cerr << "scalescope " << cmd << ": " << n << "\n";
  auto written = calib::write_profile(*profile, o.output);
  if (!written) return report(cmd, written.error());

  // Summary of what went into the profile (data on stdout).
  if (o.format == Format::json) {
    Json entries = Json::array();
    for (const auto& e : profile->collectives)
      entries.push_back({{"op", e.op}, {"nranks", e.nranks}, {"nodes", e.nodes.value_or(1)}, {"sizes", e.rows.size()},
                         {"min_bytes", e.rows.front().bytes}, {"max_bytes", e.rows.back().bytes},
                         {"max_busbw_GBps", e.rows.back().busbw_GBps}, {"check", e.check}, {"source", e.source}});
    print_stdout(dump_json(Json{{"profile", o.output}, {"provenance", profile->provenance}, {"columns_used", "out-of-place"},
                      {"collectives", entries}}));
    return 0;
  }
  Table t;
  t.header = {"op", "nranks", "nodes", "sizes", "min_bytes", "max_bytes", "busbw_at_max_GBps", "check"};
  t.right_align = {false, true, true, true, true, true, true, false};
  for (const auto& e : profile->collectives) {
    char bw[32];
    std::snprintf(bw, sizeof bw, "%.2f", e.rows.back().busbw_GBps);
    t.rows.push_back({e.op, std::to_string(e.nranks), std::to_string(e.nodes.value_or(1)), std::to_string(e.rows.size()),
                      std::to_string(static_cast<long long>(e.rows.front().bytes)),
                      std::to_string(static_cast<long long>(e.rows.back().bytes)), bw, e.check});
  }
  if (o.format == Format::csv) {
    print_stdout(t.to_csv());
    return 0;
  }
  print_stdout("# wrote " + o.output + " (" + profile->provenance +
               "; out-of-place columns used, in-place kept as in_place_rows)\n" + t.to_text());
  return 0;
}

}  // namespace

void register_import(CLI::App& app, Context& ctx) {
  CLI::App* sub = app.add_subcommand("import", "Import measurements made by other tools into scalescope files");
  sub->require_subcommand(1);

  auto o = std::make_shared<ImportNcclOptions>();
  CLI::App* nccl = sub->add_subcommand(
      "nccl-tests",
      "Turn nccl-tests stdout logs (all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, "
      "broadcast_perf, sendrecv_perf; -g N or one process per GPU) into a calibration profile. The out-of-place "
      "columns become the profile's rows; the in-place columns are kept as in_place_rows. See "
      "docs/nccl-tests-import.md.");
  nccl->add_option("FILE", o->files, "nccl-tests logs (stdout); one file may hold several tests")->required();
  nccl->add_option("-o,--output", o->output, "Profile JSON to write (atomically)")->required();
  nccl->add_option("--op", o->op,
                   "auto (from the log's 'Collective test starting' line, the program name on the command line, or "
                   "the file name) or one of " + coll_op_choices())
      ->default_str("auto");
  nccl->add_option("--gpus-per-node", o->gpus_per_node,
                   "Ranks per node (default: counted from the hosts in the log's device lines)");
  nccl->add_flag("--allow-truncated", o->allow_truncated,
                 "Keep the rows of a test whose footer ('# Avg bus bandwidth') is missing instead of failing");
  add_format_option(nccl, o->format);
  nccl->callback([o, &ctx] { ctx.exit_code = run_import(*o); });
  register_import_trace(sub, ctx);
}

}  // namespace scalescope::cli
