// The software-stack options shared by `simulate` and `scaling` (--framework, --eager-bandwidth-factor[-source],
// --host-cost, --no-interference) and how they configure a compute model.
#pragma once

#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/framework_host.hpp"
#include "scalescope/sim/error.hpp"

namespace scalescope::cli {

struct FrameworkOptions {
  std::string framework = "fused";
  double eager_factor = 1.0;
  std::string eager_factor_source;
  std::string host_cost;  ///< scalescope.host_dispatch/1 file; empty: the host is never the bottleneck
  bool no_interference = false;
};

/// The options checked and loaded once; apply() configures any number of compute models.
struct FrameworkSetup {
  models::KernelFramework framework = models::KernelFramework::fused;
  double eager_factor = 1.0;
  std::string eager_factor_source;
  std::optional<models::FrameworkHostCost> host;
  bool no_interference = false;

  void apply(models::ComputeModel& c) const {
    c.set_framework(framework);
    if (eager_factor != 1.0 || !eager_factor_source.empty()) c.set_eager_bandwidth_factor(eager_factor, eager_factor_source);
    c.set_host_cost(host);
    if (no_interference) c.set_interference({}, "switched off by --no-interference");
  }
};

inline Expected<FrameworkSetup> load_framework_setup(const FrameworkOptions& o) {
  FrameworkSetup f;
  auto fw = models::parse_framework(o.framework);
  if (!fw) return fw.error();
  f.framework = *fw;
  if (!(o.eager_factor > 0.0)) return input_error("", "--eager-bandwidth-factor", "expected a positive number");
  f.eager_factor = o.eager_factor;
  f.eager_factor_source = o.eager_factor_source;
  f.no_interference = o.no_interference;
  if (!o.host_cost.empty()) {
    auto h = models::load_framework_host_cost(o.host_cost);
    if (!h) return h.error();
    f.host = std::move(h).value();
  }
  return f;
}

inline void add_framework_options(CLI::App* sub, FrameworkOptions& o) {
  sub->add_option("--framework", o.framework,
                  "Software stack whose memory-bound kernels are priced: fused (Megatron-style, default) or "
                  "pytorch-eager (plain PyTorch: autocast, FSDP2 bf16 for zero=3; what validation/harness runs)")
      ->default_str("fused");
  sub->add_option("--eager-bandwidth-factor", o.eager_factor,
                  "pytorch-eager: fraction of the measured elementwise bandwidth its memory-bound kernels reach "
                  "(default 1: the hand-counted bytes as they are)");
  sub->add_option("--eager-bandwidth-factor-source", o.eager_factor_source,
                  "Where that factor comes from, for provenance (e.g. what it was fitted on)");
  sub->add_option("--host-cost", o.host_cost,
                  "Measured host (CPU) time to issue one layer's kernels per micro-batch (scalescope.host_dispatch/1, "
                  "e.g. validation/profiles/h200-torch/host_dispatch.json): the GPU waits when the framework cannot "
                  "launch work fast enough (eager PyTorch + DTensor TP). Host speed differs between machines of one kind "
                  "by up to 1.8x: measure it on the machine that will run (validation/harness/host_dispatch.py)");
  sub->add_flag("--no-interference", o.no_interference,
                "Ignore the profile's measured compute-communication interference (NVLink collectives and the compute "
                "beside them slowing each other): overlapped communication is then free, as before 2026-11-21");
}

}  // namespace scalescope::cli
