// Host-side cost of an eager training framework: the CPU time to issue one layer's kernels for one
// micro-batch (forward + backward), measured by validation/harness/host_dispatch.py and applied to
// the task graph by sim/host_dispatch.hpp. Without it, predictions assume the host is never the
// bottleneck (true for Megatron-style fused training on large layers, false for PyTorch eager with
// DTensor tensor parallelism on small ones).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scalescope/models/plan.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope::models {

struct FrameworkHostCost {
  std::string source;     ///< the file it came from
  std::string framework;  ///< e.g. "PyTorch 2.11.0+cu130 eager, validation/harness ..."
  Seconds module;           ///< per layer and micro-batch, plain modules (single, DDP, ZeRO, PP)
  Seconds tensor_parallel;  ///< per layer and micro-batch with tensor parallelism (DTensor)
  /// Optional: the tensor-parallel cost measured with N training processes on the host. DTensor's
  /// host time per layer grows with how many ranks share the host's CPUs, not with the TP degree:
  /// on one lease 8.3 ms with 2 processes (TP=2), 9.8 ms with 4 (TP=4 and TP=2 x DP=2 alike).
  std::map<int, Seconds> tensor_parallel_by_processes;
  /// Host time outside the layers, 0 when not measured (scalescope.host_dispatch/1 files give none; imported
  /// stack profiles do): embedding, LM head and loss of one micro-batch (forward + backward), and the
  /// optimizer step with zero_grad once per step (sim/host_dispatch.hpp).
  Seconds edge_per_microbatch{0.0};
  Seconds per_step{0.0};
  /// Optional: the host-bound step time of several processes of the same program, each relative to the
  /// one the costs above come from (their median). A host-bound step differs by 10-30% from process to
  /// process on one machine (validation/session14, validation/blind24/session15), and a step of N
  /// ranks that synchronise waits for the slowest of them.
  std::vector<double> process_samples{};
  /// Optional (< 0: not measured; imported stacks measure them): the share of `module` spent issuing a layer's
  /// forward, and of that the share issued after the forward's host synchronisation (HostCosts, sim/host_dispatch.hpp).
  double forward_fraction = -1.0;
  double after_sync_fraction = -1.0;
  std::string host_machine = "an unnamed host";  ///< the file's `host`: the machine whose CPU was measured
  /// Optional (0: not measured): host time per MoE layer and micro-batch for each routed expert the rank holds
  /// (experts / ep), beyond `module`. Transformer Engine's grouped linear layers quantize and launch per local
  /// expert, so their host time grows with them (validation/session41).
  Seconds per_local_expert{0.0};

  /// The host time of the slowest of `ranks` processes relative to the costs above: the expected
  /// maximum of `ranks` independent draws from `process_samples` (their empirical distribution:
  /// E[max] = sum_i x_(i) ((i/K)^N - ((i-1)/K)^N) over the K sorted samples). 1 for one rank or
  /// without samples; at least 1 (low outliers can pull the expected maximum of a few below the
  /// median the costs came from); at most the largest sample however many ranks.
  double slowest_of(int ranks) const;

  /// The cost that applies to `plan`'s layers when `processes_on_host` ranks run on each host:
  /// `module` without TP; with TP the cost measured at the process count nearest to it (ties: the
  /// larger), or `tensor_parallel` when none is given. With `per_local_expert`, each layer also gets
  /// per_local_expert x local_experts x moe_share: the rank's routed experts (experts / ep) in its MoE layers,
  /// averaged over all layers (`moe_share`: MoE layers / layers), since one cost applies to every layer.
  Seconds for_plan(const Plan& plan, int processes_on_host, int local_experts = 0, double moe_share = 0.0) const;
};

/// Reads a `scalescope.host_dispatch/1` file (keys: schema, framework, per_layer_microbatch_s
/// {module, tensor_parallel, optional tensor_parallel_by_processes {"<N>": s}} in seconds, > 0,
/// process counts integers >= 1; optional per_edge_microbatch_s, per_step_s, forward_share, after_sync_share,
/// process_samples as in a stack profile's `host` (read_host_extras); optional per_local_expert_s in [0, 0.1];
/// other documentation keys are kept out of the model).
Expected<FrameworkHostCost> load_framework_host_cost(const std::string& path);

/// The optional keys that a host_dispatch/1 file and a stack profile's `host` share: per_edge_microbatch_s and
/// per_step_s (seconds >= 0), forward_share and after_sync_share (in [0, 1]), process_samples (2 to 64 values in
/// [0.1, 10]). Throws InputError naming the key.
void read_host_extras(const JsonCursor& host, FrameworkHostCost& into);
/// The same from a parsed document (`path` names it in errors).
Expected<FrameworkHostCost> framework_host_cost_from_json(const Json& doc, const std::string& path);

}  // namespace scalescope::models
