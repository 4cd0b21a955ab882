// `scalescope import nccl-tests`: nccl-tests logs -> a calibration profile (out-of-place columns).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "cli_common.hpp"
#include "scalescope/calibrate/nccl_tests.hpp"
#include "scalescope/calibrate/topo_node.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/json_reader.hpp"

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

struct ImportTopoOptions {
  std::string file, output, gpu_from, name = "imported-node";
  double nvlink_GBps = 26.562, pcie_GBps = 63.0, upi_GBps = 64.0;
};

/// The text of `nvidia-smi topo -m` (a few KiB): a regular file of at most 64 MiB, refused before it is read
/// when larger, never blocking on a FIFO (read_input_file).
Expected<std::string> read_text_file(const std::string& file) {
  return read_input_file(file, std::uint64_t{64} << 20, "nvidia-smi topo text file");
}

// `scalescope import nvidia-smi-topo FILE`: a one-node cluster file (calibrate/topo_node.hpp).
int run_import_topo(const ImportTopoOptions& o) {
  const std::string cmd = "import nvidia-smi-topo";
  if (o.gpu_from.empty())
    return report(cmd, input_error("", "--gpu-from", "a cluster name or file whose GPU the node has is required"));
  for (auto [key, v] : {std::pair{"--nvlink-GBps", o.nvlink_GBps}, std::pair{"--pcie-GBps", o.pcie_GBps},
                        std::pair{"--upi-GBps", o.upi_GBps}})
    if (!(v > 0.0 && v < 1e6)) return report(cmd, input_error("", key, "expected a positive bandwidth in GB/s"));
  auto text = read_text_file(o.file);
  if (!text) return report(cmd, text.error());
  auto from = load_cluster_by_name_or_path(o.gpu_from, ClusterOptions{1, {}});
  if (!from) return report(cmd, from.error());
  const GpuSpec& g = from->gpu_spec();
  Json peaks = Json::object();
  for (const char* dtype : {"fp8", "bf16", "fp16", "tf32", "fp32"})
    if (auto p = g.peak.get(dtype)) peaks[dtype] = p->value / 1e12;
  calib::TopoNodeOptions to;
  to.name = o.name;
  to.gpu = Json{{"model", g.model}, {"memory_MiB", g.memory.value / (1024.0 * 1024.0)},
                {"hbm_bandwidth_GBps", g.hbm_bandwidth.value / 1e9}, {"sm_count", g.sm_count},
                {"peak_dense_TFLOPS", peaks}};
  to.nvlink_GBps = o.nvlink_GBps;
  to.pcie_GBps = o.pcie_GBps;
  to.upi_GBps = o.upi_GBps;
  auto doc = calib::node_file_from_topo(*text, o.file, to);
  if (!doc) return report(cmd, doc.error());
  auto check = cluster_from_json(*doc, o.file);  // what is written must load
  if (!check) return report(cmd, check.error());
  const std::string out = doc->dump(2) + "\n";
  if (o.output.empty()) {
    print_stdout(out);
    return 0;
  }
  if (auto ok = write_file_atomic(o.output, out); !ok) return report(cmd, ok.error());
  std::fprintf(stderr, "scalescope %s: wrote %s (%d GPUs, %d NICs)\n", cmd.c_str(), o.output.c_str(),
               check->gpus_per_node(), check->nics_per_node());
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

  auto t = std::make_shared<ImportTopoOptions>();
  CLI::App* topo = sub->add_subcommand(
      "nvidia-smi-topo",
      "Turn `nvidia-smi topo -m` text into a one-node cluster file (NV<k> -> NVLink links, or an NVSwitch when every "
      "GPU pair shows the same NV<k>; PIX/PXB -> a shared PCIe switch; NODE/PHB -> one CPU socket; SYS -> across "
      "sockets). See docs/cluster-format.md.");
  topo->add_option("FILE", t->file, "The text nvidia-smi topo -m printed")->required();
  topo->add_option("--gpu-from", t->gpu_from, "Cluster name or file whose GPU spec (model, memory, peaks) to use")
      ->required();
  topo->add_option("-o,--output", t->output, "Cluster JSON to write (atomically); default: stdout");
  topo->add_option("--name", t->name, "The cluster's name")->default_str("imported-node");
  topo->add_option("--nvlink-GBps", t->nvlink_GBps, "NVLink bandwidth per link per direction (A100 25, H100 26.562, B200 50)")
      ->default_str("26.562");
  topo->add_option("--pcie-GBps", t->pcie_GBps, "PCIe bandwidth per direction (Gen5 x16: 63)")->default_str("63");
  topo->add_option("--upi-GBps", t->upi_GBps, "CPU socket link bandwidth per direction")->default_str("64");
  topo->callback([t, &ctx] { ctx.exit_code = run_import_topo(*t); });
}

}  // namespace scalescope::cli
