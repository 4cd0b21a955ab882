// `scalescope calibrate`: fit a profile into collective parameters (fit), show how well they
// predict (report, in cmd_calibrate_report.cpp), and run the GPU measurement program (run).
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "calibrate_common.hpp"

namespace scalescope::cli {

void register_calibrate_report(CLI::App* calibrate, Context& ctx);  // cmd_calibrate_report.cpp
void register_calibrate_import_attention(CLI::App* calibrate, Context& ctx);  // cmd_calibrate_import.cpp
void register_calibrate_import_section(CLI::App* calibrate, Context& ctx);    // cmd_calibrate_import.cpp
void register_calibrate_shapes(CLI::App* calibrate, Context& ctx);            // cmd_calibrate_shapes.cpp

namespace {

namespace fs = std::filesystem;

struct FitCmd {
  CalibrateCommon common;
  std::string output;
};

int run_fit(const FitCmd& o) {
  const std::string cmd = "calibrate fit";
  auto fopt = fit_options(o.common);
  if (!fopt) return report(cmd, fopt.error());
  auto loaded = load_profile_and_cluster(o.common.profile, o.common);
  if (!loaded) return report(cmd, loaded.error());
  auto fit = calib::fit_collective_params(loaded->profile, *loaded->cluster, *fopt);
  if (!fit) return report(cmd, fit.error());
  const Json params = to_json(fit->params);
  if (!o.output.empty()) {
    auto w = write_file_atomic(o.output, dump_json(params) + "\n");
    if (!w) return report(cmd, w.error());
    std::cerr << "scalescope " << cmd << ": wrote " << o.output << "\n";
  }
  const auto& rep = fit->report;
  if (o.common.format == Format::json) {
    Json values = Json::array();
    for (const auto& v : rep.values)
      values.push_back({{"name", v.name}, {"value", v.value}, {"before", v.before}, {"unit", v.unit}, {"rows", v.rows},
                        {"method", v.method}});
    print_stdout(dump_json(Json{{"profile", o.common.profile}, {"cluster", loaded->cluster->name()},
                      {"fit_groups", fopt->groups}, {"fit_ops", fopt->ops}, {"values", values}, {"notes", rep.notes},
                      {"params", params}}));
    return 0;
  }
  Table t;
  t.header = {"parameter", "before", "fitted", "unit", "rows"};
  t.right_align = {false, true, true, false, false};
  for (const auto& v : rep.values)
    t.rows.push_back({v.name, fmt_fixed(v.before, v.unit == "bytes" ? 0 : 4), fmt_fixed(v.value, v.unit == "bytes" ? 0 : 4),
                      v.unit, v.rows});
  if (o.common.format == Format::csv) {
    print_stdout(t.to_csv());
    return 0;
  }
  std::string out = "# scalescope calibrate fit: " + o.common.profile + " on cluster " + loaded->cluster->name() +
                    (fopt->groups.empty() ? "" : ", fitted on groups of " + join_ints(fopt->groups) + " GPUs") + "\n";
  for (const auto& n : rep.notes) out += "# note: " + n + "\n";
  out += t.to_text();
  print_stdout(out);
  return 0;
}

/// scalescope-calibrate next to this executable, in the build tree's calibrate/gpu/, or on PATH.
std::optional<fs::path> find_calibrate_binary(std::vector<std::string>& looked) {
  const std::string name = "scalescope-calibrate";
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (const fs::path& c : {self.parent_path() / name, self.parent_path().parent_path() / "calibrate" / "gpu" / name}) {
      looked.push_back(c.string());
      if (fs::is_regular_file(c, ec) && ::access(c.c_str(), X_OK) == 0) return c;
    }
  }
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    std::size_t start = 0;
    while (start <= p.size()) {
      const auto colon = p.find(':', start);
      const std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!dir.empty()) {
        const fs::path c = fs::path(dir) / name;
        if (fs::is_regular_file(c, ec) && ::access(c.c_str(), X_OK) == 0) return c;
      }
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
    looked.push_back("$PATH");
  }
  return std::nullopt;
}

int run_gpu_program(const std::vector<std::string>& args) {
  std::vector<std::string> looked;
  const auto bin = find_calibrate_binary(looked);
  if (!bin) {
    std::string where;
    for (const auto& l : looked) where += (where.empty() ? "" : ", ") + l;
    return report("calibrate run",
                  runtime_error("scalescope-calibrate was not found (looked in " + where +
                                "). It is built from calibrate/gpu/ only when the CUDA toolkit, cuBLAS and NCCL are "
                                "found at configure time; build it there (target scalescope-calibrate) and run it on "
                                "the GPU machine."));
  }
  std::vector<std::string> argv_s{bin->string()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::cerr << "scalescope calibrate run: exec " << bin->string() << "\n";
  std::cout.flush();
  ::execv(bin->c_str(), argv.data());
  return report("calibrate run", runtime_error("cannot execute " + bin->string() + ": " + std::strerror(errno)));
}

}  // namespace

void register_calibrate(CLI::App& app, Context& ctx) {
  CLI::App* sub = app.add_subcommand(
      "calibrate",
      "Calibration profiles: fit them into collective-model parameters, report prediction errors, or run the GPU "
      "measurement program that writes them");
  sub->require_subcommand(1);

  auto fo = std::make_shared<FitCmd>();
  CLI::App* fit = sub->add_subcommand(
      "fit",
      "Fit the collective model's parameters (bus efficiency from sizes >= 64 MiB, latencies from sizes <= 64 KiB, "
      "channel thresholds and LL128/Simple latency scale from the sizes between) to a profile's collectives and "
      "print every fitted number with the rows it came from");
  add_calibrate_common(fit, fo->common);
  fit->add_option("-o,--output", fo->output,
                  "Write the fitted parameters (scalescope.collective_params/1, for `collective --calibration`)");
  fit->callback([fo, &ctx] { ctx.exit_code = run_fit(*fo); });

  register_calibrate_report(sub, ctx);
  register_calibrate_import_attention(sub, ctx);
  register_calibrate_import_section(sub, ctx);
  register_calibrate_shapes(sub, ctx);

  CLI::App* run = sub->add_subcommand(
      "run",
      "Run the GPU measurement program scalescope-calibrate (next to this binary, in the build tree, or on PATH) "
      "with the arguments that follow, e.g. `scalescope calibrate run -o h200x4.json --time-budget-s 420`");
  run->prefix_command();
  run->callback([run, &ctx] { ctx.exit_code = run_gpu_program(run->remaining()); });
}

}  // namespace scalescope::cli
