// Is the machine healthy? Every figure a calibration profile measured (P2P per pair and direction,
// collective bus bandwidth per group size, HBM, GEMM peak, host-device copies per NUMA node, clocks
// and PCIe links under load, the nvidia-smi topology, NCCL's environment) against what the
// cluster's topology and datasheet predict.
//
// Each figure is compared by a rule of a fixed table (check_rules()): measured / expected below the
// rule's threshold is a finding, reported with its likely causes and the command that confirms
// each. The expected values:
//   P2P copy:      the bottleneck bandwidth of the pair's route in the cluster graph (NVLink count
//   x rate, or PCIe); collectives:   the collective model's busbw on the cluster's routes with the
//   datasheet parameters (NCCL's
//                  ring/tree over the real topology), at the largest measured size;
//   HBM:           the cluster file's hbm_bandwidth_GBps; GEMM: its peak_dense_TFLOPS of the dtype;
//   host copies:   the bottleneck of the GPU's PCIe path to the CPU of the NUMA node the memory is
//   on; clocks / PCIe: the maximum the GPU reports (nvidia-smi clocks.max.sm, pcie.link.gen.max,
//   width.max).
// A finding names what the measured figure matches best: a P2P pair or a collective nearer (in log
// ratio) to the PCIe-only variant of the cluster than to the cluster is "at PCIe rate"; a
// multi-node collective nearer to the GPUDirect-RDMA-off variant is "staged through host memory"
// (cluster_variant.hpp). Thresholds sit between the healthy machines measured here
// (calibrate/profiles, ratios in check_rules()) and the faults they are meant to catch; they are
// stated per rule, not fitted.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scalescope/calibrate/profile.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::calib {

/// One row of the rule table.
struct CheckRule {
  std::string id;        ///< "p2p_nvlink", "coll_busbw", ...
  std::string figure;    ///< what is measured
  std::string expected;  ///< what it is compared with
  double threshold = 0;  ///< measured / expected below this is a finding
  std::string threshold_why;
  std::vector<std::string> causes;   ///< likely causes, most likely first
  std::vector<std::string> confirm;  ///< commands that confirm them ("command: what to look for")
};

/// The table, in report order.
const std::vector<CheckRule>& check_rules();
/// The rule of an id (asserts it exists).
const CheckRule& check_rule(const std::string& id);

/// One checked figure.
struct CheckRow {
  std::string rule;    ///< CheckRule::id
  std::string figure;  ///< "p2p 0->1 uni", "all_reduce n=4 at 1073741824 B", "HBM copy gpu0", ...
  double measured = 0;
  double expected = 0;
  std::string unit;           ///< "GB/s", "TFLOP/s", "MHz", "gen", "lanes"
  std::string expected_from;  ///< where the expectation comes from
  bool finding = false;
  double ratio() const { return expected > 0 ? measured / expected : 0.0; }
};

/// A figure beyond its rule's threshold, with what it matches and why it may be so.
struct Finding {
  std::string rule;
  std::string figure;
  std::string message;  ///< what was measured against what, and what it matches
  std::vector<std::string>
      causes;  ///< most likely first (an NCCL variable found in the profile's environment first)
  std::vector<std::string> confirm;
};

struct CheckReport {
  std::string profile;         ///< its name
  std::string cluster;         ///< the cluster's name
  std::string cluster_choice;  ///< how the cluster was chosen ("--cluster", or the automatic match)
  std::vector<CheckRow> rows;
  std::vector<Finding> findings;
  std::vector<std::string> notes;  ///< what could not be checked, and why
  bool clean() const { return findings.empty(); }
};

/// The cluster to check against: the document (its file's JSON) and a name for it.
struct CheckCluster {
  Json doc;
  std::string source;  ///< file or "<builtin:name>", for messages
  std::string choice;  ///< why this cluster (copied to the report)
};

/// Checks `profile` against the cluster (built with as many nodes as the profile's groups need).
/// Input errors: a cluster that does not load, a profile of more GPUs per node than the cluster
/// has.
Expected<CheckReport> check_profile(const Profile& profile, const CheckCluster& cluster);

/// The built-in cluster (topologies/) a profile was most likely measured on: same GPU family and SM
/// count as gpus[0], at least as many GPUs per node as the profile used; single-node files first,
/// then the fewest GPUs per node, then by name. An input error naming the GPU when none fits (give
/// --cluster).
Expected<CheckCluster> cluster_for_profile(const Profile& profile);
/// A cluster named or given as a file (as --cluster takes it).
Expected<CheckCluster> load_check_cluster(const std::string& name_or_path);

/// The report as JSON (rows, findings, notes, the rules used).
Json to_json(const CheckReport& report);
/// The report as text: one line per figure, then each finding with its causes and commands.
std::string to_text(const CheckReport& report);

}  // namespace scalescope::calib
