// The priced pieces of one micro-batch of a plan on one tensor- and context-parallel rank, as the task-
// graph builder and the planner's bound use them:
//   layer = layer_cost(cp_rank_spec) with the plan's GEMM data type (fp8 for precision=fp8, attention and
//           the LM head in bf16) + fp8_layer_cost (casts, transposes, scale updates);
//   cp    = cp_layer_cost: the context-parallel attention beyond the rank's own block and its exchange
//           (kept apart: the builder runs the p2p exchange beside these blocks);
//   edge  = edge_cost(cp_rank_spec): embedding, LM head and loss of the rank's tokens, in bf16;
//   moe_layer = the same as `layer` for an MoE layer (MoE models; empty otherwise): the stack's rows with
//           `when: moe_layer` (router, permutation, grouped expert GEMMs, shared experts) + its FP8 casts.
#pragma once

#include "scalescope/models/cp_costs.hpp"
#include "scalescope/models/fp8_costs.hpp"

namespace scalescope::models {

struct PlanPieceCosts {
  LayerCost layer;
  LayerCost moe_layer;
  CpLayerCost cp;
  EdgeCost edge;
};

/// The cost options the plan's layers are priced with: `options` with the plan's GEMM data types (fp8 GEMMs with
/// bf16 attention for precision=fp8, the forward ones with fast accumulation where the stack says so).
CostOptions plan_layer_options(const ModelSpec& spec, const Plan& plan, const ComputeModel& model,
                               const CostOptions& options = {});

/// The pieces of `plan` (validated) for `spec` priced by `model` (header comment).
PlanPieceCosts plan_piece_costs(const ModelSpec& spec, const Plan& plan, const ComputeModel& model,
                                const CostOptions& options = {});

}  // namespace scalescope::models
