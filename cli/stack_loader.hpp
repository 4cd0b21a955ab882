// The software stack of a prediction as a planner::StackApply, through the one --framework loader
// (framework_options.hpp): used by `simulate`, `sweep` and the Python package alike.
#pragma once

#include <string>

#include "framework_options.hpp"
#include "scalescope/planner/simulate_run.hpp"

namespace scalescope::cli {

inline Expected<planner::StackApply> load_stack(const FrameworkOptions& options) {
  auto s = load_framework_setup(options);
  if (!s) return s.error();
  return planner::StackApply([setup = std::move(s).value()](models::ComputeModel& c) { setup.apply(c); });
}

/// A stack by name alone (a sweep's "stacks"), with the other stack options at their defaults.
inline Expected<planner::StackApply> load_stack_by_name(const std::string& name) {
  FrameworkOptions o;
  o.framework = name;
  return load_stack(o);
}

}  // namespace scalescope::cli
