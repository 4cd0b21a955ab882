// Internal: the state one `calibrate check` run shares between its parts (the cluster, its what-if
// variants, the report being filled) and the checks of each section of a profile.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/calibrate/profile_check.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/cluster_variant.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope::calib::checkimpl {

/// A cluster (the one checked against, or a variant of it) with the datasheet collective model on
/// it.
struct Priced {
  Cluster cluster;
  std::unique_ptr<CollectiveModel> model;
};

struct Ctx {
  Ctx(const Profile& p, const CheckCluster& in, int n, Cluster c)
      : profile(p), input(in), nodes(n), base{std::move(c), nullptr} {}
  const Profile& profile;
  const CheckCluster& input;
  int nodes = 1;
  Priced base;
  CheckReport report;
  std::vector<std::string>
      env_causes;  ///< NCCL variables that force a path, as causes ("NCCL_P2P_DISABLE=1 ...")

  /// The cluster with `variant` applied (built on first use, with the same node count); nullptr
  /// when the variant does not load (e.g. PCIe-only where GPUs have no PCIe path).
  const Priced* variant(const std::string& key, const ClusterVariant& v);

  /// Adds a row; a ratio below the rule's threshold also adds a finding with `message` (or a
  /// default one).
  void add(const std::string& rule, const std::string& figure, double measured, double expected,
           const std::string& unit, const std::string& expected_from,
           const std::string& message = "", std::vector<std::string> first_causes = {});

 private:
  std::vector<std::pair<std::string, std::unique_ptr<Priced>>> variants_;
};

/// Section checks (profile_check.cpp, profile_check_figures.cpp). Each adds rows, findings and
/// notes.
void check_environment(Ctx& ctx);
void check_topology(Ctx& ctx);
void check_p2p(Ctx& ctx);
void check_collectives(Ctx& ctx);
void check_memory(Ctx& ctx);
void check_gemm(Ctx& ctx);
void check_host_copies(Ctx& ctx);
void check_clocks(Ctx& ctx);

/// "%.*f".
std::string fmt(double v, int decimals);
/// Bottleneck of a route: "n0.gpu0->n0.nvswitch0 (nvlink x18, 478.1 GB/s)".
std::string describe_bottleneck(const Cluster& c, const std::vector<int>& route);
/// Number member of a JSON object, when present and a number (or a numeric string, as nvidia-smi's
/// CSV gives).
std::optional<double> number(const Json& obj, const char* key);

}  // namespace scalescope::calib::checkimpl
