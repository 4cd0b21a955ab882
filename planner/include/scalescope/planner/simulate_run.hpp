// One `scalescope simulate` request as a library call: load the model, plan, cluster, calibration and
// software stack, predict one iteration, and the JSON report the CLI prints with --format json. The CLI,
// the sweeps and the Python package all call these, so their numbers are the same.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/planner/setup.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

/// Configures a compute model for a software stack (the CLI's --framework/--host-cost options, loaded by
/// their one loader before the call). Empty: the compute model as the calibration gives it.
using StackApply = std::function<void(models::ComputeModel&)>;

struct SimulateRequest {
  std::string model;        ///< catalog name, model JSON or HF config.json
  std::string cluster;      ///< topologies/ name or JSON file
  std::string plan;         ///< "tp=..,pp=..,dp=..,gbs=.." or a plan JSON file
  /// Instead of `plan`: the plan for the loaded model (e.g. read from a Megatron-LM command line by the CLI).
  std::function<Expected<models::Plan>(const models::ModelSpec&)> plan_for_model;
  std::string calibration;  ///< empty: datasheet parameters
  std::optional<int> nodes, gpus;  ///< cluster size (default: as many GPUs as the plan uses)
  std::string fidelity = "analytical";    ///< analytical | flow
  std::string attention = "flash";        ///< flash | cudnn | unfused
  std::string intra_node = "analytical";  ///< analytical | flow
  bool all_ranks = false;
  bool no_rail_classes = false;  ///< flow fidelity: every TP rank even where rank 0 stands for its rail peers
  bool strict = false;           ///< refuse a calibration measured on another GPU type
  bool per_layer_tasks = false;
  bool record_task_times = false;  ///< for a trace
  bool power_cap = true;           ///< models::PredictOptions::power_cap (a profile `power` section's clock)
};

struct SimulateRun {
  models::ModelSpec model;
  models::Plan plan;
  std::unique_ptr<EvalSetup> setup;
  std::string fidelity;
  models::Prediction prediction;
};

/// Checks the request (errors name the option: "--fidelity", "--plan", ...), loads its inputs, applies the
/// stack and predicts. Bad input comes back as an input error naming the file and JSON path.
Expected<SimulateRun> run_simulate(const SimulateRequest& request, const StackApply& stack = {});

/// The note printed when the host bounds the step (> 10% waits for kernel launches); empty otherwise.
std::string host_bound_note(const SimulateRun& run);

/// `scalescope simulate --format json`: model, cluster, gpus, plan, step_time_s, tokens_per_s, mfu, memory,
/// breakdown, provenance, notes.
Json simulate_json(const SimulateRun& run);

}  // namespace scalescope::planner
