// Host-side cost of an eager training framework: the CPU time to issue one layer's kernels for one
// micro-batch (forward + backward), measured by validation/harness/host_dispatch.py and applied to
// the task graph by sim/host_dispatch.hpp. Without it, predictions assume the host is never the
// bottleneck (true for Megatron-style fused training on large layers, false for PyTorch eager with
// DTensor tensor parallelism on small ones).
#pragma once

#include <string>

#include "scalescope/models/plan.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope::models {

struct FrameworkHostCost {
  std::string source;     ///< the file it came from
  std::string framework;  ///< e.g. "PyTorch 2.11.0+cu130 eager, validation/harness ..."
  Seconds module;           ///< per layer and micro-batch, plain modules (single, DDP, ZeRO, PP)
  Seconds tensor_parallel;  ///< per layer and micro-batch with tensor parallelism (DTensor)

  /// The cost that applies to `plan`'s layers.
  Seconds for_plan(const Plan& plan) const { return plan.tp > 1 ? tensor_parallel : module; }
};

/// Reads a `scalescope.host_dispatch/1` file (keys: schema, framework, per_layer_microbatch_s
/// {module, tensor_parallel} in seconds, > 0; other documentation keys are kept out of the model).
Expected<FrameworkHostCost> load_framework_host_cost(const std::string& path);

}  // namespace scalescope::models
