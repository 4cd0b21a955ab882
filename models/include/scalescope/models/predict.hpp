// One training iteration of a plan, predicted: build the task graph, simulate it, and summarise
// step time, throughput, MFU, memory and the time breakdown with the provenance of the inputs.
//
//   tokens_per_s = gbs * seq_len / step_time
//   mfu          = model FLOPs per step / (step_time * GPUs * peak bf16), model FLOPs = flops_per_token
//                  (counts.hpp: weight matmuls, QK^T and AV counted over the full s x s as in Narayanan et
//                  al. 2021 and PaLM, LM head; forward + backward, NO recompute) x gbs * seq_len
//   hfu          = the same with the recompute FLOPs added (what the GPUs execute)
//   memory       = peak_memory (memory.hpp) with the build's flash-attention choice; fits when its total
//                  is at most the GPU memory of the cluster
//   breakdown    = the critical rank's (simulator.hpp): compute (forward + backward + recompute),
//                  optimizer, exposed communication per kind, pipeline bubble (idle incl. waiting)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/framework_host.hpp"
#include "scalescope/models/memory.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope::models {

/// True when TP-rank-0 ranks stand exactly for their TP peers at flow fidelity: the cluster is
/// rail_symmetric(), each TP group lies inside one node, and intra-node collectives are analytical.
bool rail_classes_exact(const Plan& plan, const Cluster& cluster, bool analytical_intra_node);

struct PredictOptions {
  Fidelity fidelity = Fidelity::analytical;
  /// Simulate one representative pipeline (default for analytical) or every rank (default for flow).
  std::optional<bool> symmetric;
  /// Flow fidelity: intra-node collectives and transfers at their analytical time (NVLink carries no
  /// inter-node traffic, so this is exact unless two intra-node collectives share a GPU's links).
  bool analytical_intra_node = true;
  /// Every-rank flow fidelity: simulate the TP-rank-0 ranks only, standing for their peers
  /// (BuildOptions::tp_classes), when rail_classes_exact() says that changes nothing. Default on;
  /// off simulates every rank.
  bool rail_classes = true;
  BuildOptions build;  ///< its `symmetric` and `tp_classes` are overridden by the fields above
  MemoryOptions memory;
  std::vector<SimObserver*> observers;
  bool record_task_times = false;
  /// Eager-framework host cost: when set, every rank's kernels are issued by a host thread at this
  /// cost per layer and micro-batch (sim/host_dispatch.hpp) and the GPU may wait for it. Implies
  /// BuildOptions::per_layer_tasks. Unset: the compute model's host_cost(), if any.
  std::optional<FrameworkHostCost> host;
  /// Compute-communication interference (sim/simulator.hpp). Unset: the compute model's interference()
  /// (measured by the profile's `interference` section, none without one).
  std::optional<Interference> interference;
  /// With a profile `power` section: each rank's tensor-core kernels run at the rate its GPU's capped clock allows
  /// (PowerCapEstimate); off: at the profile's burst rates, as without one.
  bool power_cap = true;
};

/// What the power cap does to a step (docs/power.md): simulated once at the profile's rates, each rank's energy E
/// over its working time W (the step less its idle bubble: the clock recovers while nothing runs) gives the draw
/// idle + E / W; where that exceeds the capped draw, its tensor-core kernels (device time T_t) run at
///   r = T_t / (E / (capped - idle) - (W - T_t))
/// of the profile's rates (at most 1) and the step is simulated again with them stretched.
struct PowerCapEstimate {
  bool modelled = false;        ///< the profile has a power model and power_cap was on
  double tensor_rate = 1.0;     ///< the critical rank's tensor kernels' rate / the profile's
  double min_tensor_rate = 1.0;  ///< the lowest over the simulated ranks
  int capped_ranks = 0;         ///< simulated ranks whose draw reached the cap
  double draw_w = 0.0;          ///< the critical rank's modelled draw over its working time, after the stretch
  double uncapped_draw_w = 0.0;  ///< the same at the profile's rates (what it would draw without a cap)
  double idle_w = 0.0, capped_w = 0.0;
  double working_s = 0.0;       ///< the critical rank's working time W of the first pass
  std::string source;
};

struct Prediction {
  TaskGraph graph;
  SimResult sim;
  PlanCheck check;  ///< validate()'s notes
  double step_time_s = 0;
  double tokens_per_s = 0;
  double model_flops = 0;     ///< per step, without recompute
  double hardware_flops = 0;  ///< per step, with recompute
  double mfu = 0, hfu = 0;
  double peak_tflops = 0;     ///< bf16 dense peak per GPU used for MFU
  /// The most MFU and HFU can reach: 1, or the fp8 over the bf16 dense peak for precision=fp8 plans, whose
  /// layer GEMMs run on the FP8 tensor cores (MFU stays relative to the bf16 peak, as published).
  double mfu_ceiling = 1.0;
  MemoryBreakdown memory;
  Bytes gpu_memory;
  bool fits_memory = false;
  /// Compute time of one micro-batch through one layer (fwd + bwd + recompute) split by provenance.
  std::array<Seconds, kNumProvenances> compute_provenance{};
  std::vector<SourcedValue> compute_inputs;
  PowerCapEstimate power;
};

/// The power cap's rate for each simulated rank of `graph` after a simulation `sim` at the profile's rates
/// (PowerCapEstimate); stretches the graph's compute tasks by it and returns the estimate. `pm` is the profile's.
PowerCapEstimate apply_power_cap(TaskGraph& graph, const SimResult& sim, const PowerModel& pm);

/// Largest task graph predict() builds, in micro-batch x layer-task units per simulated pipeline
/// (about 0.9 kB each): beyond it the plan is refused before anything is allocated.
inline constexpr double kMaxTaskUnits = 2097152;

/// The task graph's size in those units for a plan built with options `bo` (its symmetric, tp_classes and
/// per_layer_tasks as predict() sets them): micro-batches x (layers, or pp stages) x the pipelines simulated (one
/// when symmetric; else dp x cp replicas of every TP rank, or of TP rank 0 alone under the rail classes).
double task_graph_units(const ModelSpec& model, const Plan& plan, const BuildOptions& bo);

/// Longest step time a prediction may report: 10^9 s (32 years); the engine's clock saturates at
/// 2^63 ns, so anything near it is a pinned clock, not a result.
inline constexpr double kMaxStepTimeS = 1e9;

/// Why a prediction cannot be trusted, or nullopt: step time not in (0, kMaxStepTimeS], MFU or HFU
/// above mfu_ceiling (100% of the bf16 peak; the fp8 peak for FP8 plans), negative or non-finite memory. predict() returns such a result as a runtime Error.
std::optional<std::string> implausible_result(const Prediction& p);

/// Validates the plan against the model and cluster, builds, simulates and summarises.
/// Fails (runtime Error) when implausible_result() finds the result implausible.
Expected<Prediction> predict(const ModelSpec& model, const Plan& plan, const Cluster& cluster,
                             const CollectiveModel& collectives, const ComputeModel& compute,
                             const PredictOptions& options = {});

}  // namespace scalescope::models
