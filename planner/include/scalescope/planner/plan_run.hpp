// One `scalescope plan` request as a library call: load the model, cluster and calibration, search the
// plans and the JSON report the CLI prints with --format json. Shared by the CLI, the sweeps and Python.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "scalescope/models/model_spec.hpp"
#include "scalescope/planner/search.hpp"
#include "scalescope/planner/setup.hpp"
#include "scalescope/planner/simulate_run.hpp"

namespace scalescope::planner {

struct PlanRequest {
  std::string model, cluster, calibration;
  std::string fix;  ///< "tp=8,zero=1,..." (PlanFilter)
  std::optional<int> nodes, gpus, seq;
  int gbs = 0;
  int top = 10;
  int flow_top = 3;
  int max_mbs = 8;
  int max_vpp = 8;
  int max_cp = 8;                     ///< largest context-parallel size tried (1: none)
  int max_ep = 0;                     ///< largest expert-parallel size tried (MoE models; 0: up to the experts)
  std::string precisions = "mixed";  ///< comma-separated: mixed, bf16, fp16, fp8
  /// The user's stack (e.g. a Megatron-LM command line read by the CLI) for the model and GPU count: its precision
  /// and flags are kept and only the layout is searched. Empty: precisions and overlap flags are searched.
  std::function<Expected<models::Plan>(const models::ModelSpec&, int gpus)> base_plan;
  /// Fine-tuning keys every plan takes ("lora_rank=32,lora_modules=qkv+proj+fc1+fc2,packed_doc_tokens=180";
  /// docs/plan-format.md); empty: pre-training.
  std::string fine_tune;
  bool cross_node_tp = false;
  bool exhaustive = false;
};

struct PlanRun {
  models::ModelSpec model;
  std::unique_ptr<EvalSetup> setup;
  SearchSpace space;
  int flow_top = 0;  ///< plans confirmed at flow fidelity (min(flow_top, top))
  SearchResult result;
};

/// Checks the request (errors name the option), loads the inputs, applies the stack and searches with
/// `options` (threads, progress, cancel; its top and flow_top are taken from the request).
Expected<PlanRun> run_plan(const PlanRequest& request, SearchOptions options = {}, const StackApply& stack = {});

/// `scalescope plan --format json`: model, seq_len, cluster, gpus, gbs, counts, plans (ranked), explanations.
Json plan_json(const PlanRun& run);

}  // namespace scalescope::planner
