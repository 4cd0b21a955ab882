// The software-stack options of a prediction (the CLI's --framework, --memory-bandwidth-factor[-source],
// --host-cost, --no-interference) and how they configure a compute model: loaded once, applied to any number.
#pragma once

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/framework_host.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "scalescope/sim/error.hpp"

namespace scalescope::planner {

struct FrameworkOptions {
  std::string framework = "fused";
  std::optional<double> bandwidth_factor;
  std::string bandwidth_factor_source;
  std::string host_cost;  ///< scalescope.host_dispatch/1 file; empty: the stack's own, else none
  bool no_interference = false;
};

/// The options checked and loaded once; apply() configures any number of compute models.
struct FrameworkSetup {
  std::vector<std::shared_ptr<const models::StackProfile>> stacks;
  std::optional<models::FrameworkHostCost> host;
  bool no_interference = false;

  void apply(models::ComputeModel& c) const {
    c.set_stacks(stacks);
    if (host) c.set_host_cost(host);
    if (no_interference) c.set_interference({}, "switched off by --no-interference");
  }
};

inline Expected<FrameworkSetup> load_framework_setup(const FrameworkOptions& o) {
  FrameworkSetup f;
  auto stacks = models::load_stacks(o.framework);
  if (!stacks) return stacks.error();
  for (auto& s : *stacks) {
    if (o.bandwidth_factor) {  // the option replaces the stack's factor (e.g. one fitted by validation/make_report.py)
      if (!(*o.bandwidth_factor > 0.0) || !std::isfinite(*o.bandwidth_factor)) {
        return input_error("", "--memory-bandwidth-factor", "expected a positive number");
      }
      auto copy = std::make_shared<models::StackProfile>(*s);
      copy->memory_bandwidth_factor = *o.bandwidth_factor;
      copy->memory_bandwidth_factor_source = o.bandwidth_factor_source;
      s = std::move(copy);
    }
  }
  f.stacks = std::move(stacks).value();
  f.no_interference = o.no_interference;
  if (!o.host_cost.empty()) {
    auto h = models::load_framework_host_cost(o.host_cost);
    if (!h) return h.error();
    f.host = std::move(h).value();
  }
  return f;
}

}  // namespace scalescope::planner
