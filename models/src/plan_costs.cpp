// Priced pieces of a plan: layer, context-parallel blocks and edges (see plan_costs.hpp).
#include "scalescope/models/plan_costs.hpp"

#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {

CostOptions plan_layer_options(const ModelSpec& spec, const Plan& plan, const ComputeModel& model,
                               const CostOptions& options) {
  CostOptions layer_options = options;
  if (plan.fp8()) {
    layer_options.attention_dtype = options.attention_type();
    layer_options.dtype = "fp8";
    const bool split_only = plan.fp8_recipe == Fp8Recipe::blockwise || plan.fp8_recipe == Fp8Recipe::mxfp8;
    if (model.stack_for(spec, plan).fp8_fast_fprop && !split_only) layer_options.forward_dtype = "fp8_fast";
  }
  return layer_options;
}

PlanPieceCosts plan_piece_costs(const ModelSpec& spec, const Plan& plan, const ComputeModel& model,
                                const CostOptions& options) {
  const ModelSpec local = cp_rank_spec(spec, plan);
  const CostOptions layer_options = plan_layer_options(local, plan, model, options);
  PlanPieceCosts c;
  c.layer = layer_cost(local, plan, model, layer_options);
  const LayerCost fp8 = fp8_layer_cost(local, plan, model, plan.num_microbatches());
  c.layer.forward += fp8.forward;
  c.layer.backward += fp8.backward;
  c.layer.recompute += fp8.recompute;
  if (spec.is_moe()) {
    c.moe_layer = layer_cost(local, plan, model, layer_options, true);
    const LayerCost fp8_moe = fp8_layer_cost(local, plan, model, plan.num_microbatches(), true);
    c.moe_layer.forward += fp8_moe.forward;
    c.moe_layer.backward += fp8_moe.backward;
    c.moe_layer.recompute += fp8_moe.recompute;
  }
  c.cp = cp_layer_cost(spec, plan, model, layer_options);
  c.edge = edge_cost(local, plan, model, options);
  return c;
}

}  // namespace scalescope::models
