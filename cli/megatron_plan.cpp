// --plan-from-megatron: world size from the command line, warnings on stderr (megatron_plan.hpp).
#include "megatron_plan.hpp"

#include <cstdio>

#include "scalescope/sim/cluster.hpp"

namespace scalescope::cli {

Expected<models::Plan> plan_from_megatron_flags(const std::string& command, const std::string& flags,
                                                const models::ModelSpec& model, const std::string& cluster,
                                                std::optional<int> gpus, std::optional<int> nodes) {
  int world = gpus.value_or(0);
  if (!gpus && nodes) {
    auto c = load_cluster_by_name_or_path(cluster, ClusterOptions{nodes, {}});
    if (!c) return c.error();
    world = c->num_gpus();
  }
  auto imported = models::plan_from_megatron(flags, model, world);
  if (!imported) return imported.error();
  if (!imported->ignored.empty()) {
    std::string list;
    for (const auto& f : imported->ignored) list += (list.empty() ? "" : ", ") + f;
    std::fprintf(stderr, "scalescope %s: warning: --plan-from-megatron ignored %zu flag(s) that set nothing here: %s\n",
                 command.c_str(), imported->ignored.size(), list.c_str());
  }
  for (const auto& n : imported->notes) std::fprintf(stderr, "scalescope %s: note: %s\n", command.c_str(), n.c_str());
  std::fprintf(stderr, "scalescope %s: plan from Megatron flags: %s\n", command.c_str(), models::to_string(imported->plan).c_str());
  return imported->plan;
}

}  // namespace scalescope::cli
