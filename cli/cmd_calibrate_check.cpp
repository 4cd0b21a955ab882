// `scalescope calibrate check PROFILE [--cluster C] [--strict]`: is the machine a profile was
// measured on healthy? Every measured figure against the cluster's topology and datasheet
// (calibrate/profile_check.hpp).
#include <iostream>

#include "calibrate_common.hpp"
#include "scalescope/calibrate/profile_check.hpp"

namespace scalescope::cli {

namespace {

struct CheckCmd {
  std::string profile;
  std::string cluster;
  bool strict = false;
  Format format = Format::text;
};

int run_check(const CheckCmd& o) {
  const std::string cmd = "calibrate check";
  auto profile = calib::load_profile_by_name_or_path(o.profile);
  if (!profile) return report(cmd, profile.error());
  auto cluster = o.cluster.empty() ? calib::cluster_for_profile(*profile)
                                   : calib::load_check_cluster(o.cluster);
  if (!cluster) return report(cmd, cluster.error());
  auto rep = calib::check_profile(*profile, *cluster);
  if (!rep) return report(cmd, rep.error());
  if (o.format == Format::json) {
    print_stdout(dump_json(calib::to_json(*rep)));
  } else if (o.format == Format::csv) {
    Table t;
    t.header = {"rule",  "figure",    "measured", "expected",     "unit",
                "ratio", "threshold", "finding",  "expected_from"};
    for (const auto& r : rep->rows)
      t.rows.push_back({r.rule, r.figure, fmt_fixed(r.measured, 3), fmt_fixed(r.expected, 3),
                        r.unit, fmt_fixed(r.ratio(), 4),
                        fmt_fixed(calib::check_rule(r.rule).threshold, 2), r.finding ? "yes" : "no",
                        r.expected_from});
    print_stdout(t.to_csv());
  } else {
    print_stdout(calib::to_text(*rep));
  }
  if (!rep->clean())
    std::cerr << "scalescope " << cmd << ": " << rep->findings.size() << " finding(s)"
              << (o.strict ? " (--strict: exit 1)" : "") << "\n";
  return o.strict && !rep->clean() ? 1 : 0;
}

}  // namespace

void register_calibrate_check(CLI::App* calibrate, Context& ctx) {
  auto o = std::make_shared<CheckCmd>();
  CLI::App* sub =
      calibrate->add_subcommand("check",
                                "Is the machine healthy? Compare every figure a profile measured "
                                "(P2P per pair, collective busbw per group "
                                "size, HBM, GEMM peak, host-device copies per NUMA node, clocks "
                                "and PCIe links under load, the nvidia-smi "
                                "topology, NCCL's environment) with what the cluster's topology "
                                "and datasheet predict; each figure beyond its "
                                "rule's threshold is reported with its likely causes and the "
                                "commands that confirm them. Exit 0, or 1 with "
                                "--strict when there are findings; 2 for bad input");
  sub->add_option("PROFILE", o->profile,
                  "Calibration profile: a JSON file or a name from calibrate/profiles/")
      ->required();
  sub->add_option("--cluster", o->cluster,
                  "Cluster the profile was measured on (a topologies/ name or a file); default: "
                  "the single-node "
                  "built-in with the profile's GPU type and SM count and the fewest GPUs per node");
  sub->add_flag("--strict", o->strict, "Exit 1 when there is any finding");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run_check(*o); });
}

}  // namespace scalescope::cli
