// The software-stack options shared by `simulate`, `plan`, `scaling` and `capacity` (--framework,
// --memory-bandwidth-factor[-source], --host-cost, --no-interference) and how they configure a compute model.
#pragma once

#include <CLI/CLI.hpp>

#include "scalescope/planner/stack_options.hpp"

namespace scalescope::cli {

using planner::FrameworkOptions;
using planner::FrameworkSetup;
using planner::load_framework_setup;

inline void add_framework_options(CLI::App* sub, FrameworkOptions& o) {
  sub->add_option("--framework", o.framework,
                  "Software stack whose kernels, host cost and tensors are priced: a built-in stack (fused: "
                  "Megatron-style, the default; pytorch-eager: plain PyTorch with autocast, FSDP2 for zero=2/3, as "
                  "validation/harness runs it) or a stack profile file (scalescope.stack/1, e.g. from `scalescope import "
                  "torch-trace` of your own job). Several, comma-separated: each plan takes the first whose "
                  "`applies` holds; when that one is imported, the imported one traced nearest the plan's tokens per "
                  "micro-batch (docs/stack-profile.md)")
      ->default_str("fused");
  sub->add_option("--memory-bandwidth-factor,--eager-bandwidth-factor", o.bandwidth_factor,
                  "Fraction of the measured elementwise bandwidth that the stack's rows marked bandwidth_factor reach "
                  "(replaces the stack's own, which is 1 for the built-ins)");
  sub->add_option("--memory-bandwidth-factor-source,--eager-bandwidth-factor-source", o.bandwidth_factor_source,
                  "Where that factor comes from, for provenance (e.g. what it was fitted on)");
  sub->add_option("--host-cost", o.host_cost,
                  "Measured host (CPU) time to issue one layer's kernels per micro-batch (scalescope.host_dispatch/1, "
                  "e.g. validation/profiles/h200-torch/host_dispatch.json); replaces the stack's own host cost. The GPU "
                  "waits when the framework cannot launch work fast enough (eager PyTorch + DTensor TP). Host speed "
                  "differs between machines of one kind by up to 1.8x: measure it on the machine that will run");
  sub->add_flag("--no-interference", o.no_interference,
                "Ignore the profile's measured compute-communication interference (NVLink collectives and the compute "
                "beside them slowing each other): overlapped communication is then free, as before 2026-11-21");
}

}  // namespace scalescope::cli
