// The stack rows of one layer as the cost model prices them (`scalescope simulate --kernels`): for each row of the
// software stack that runs in a layer's forward or backward, on one rank and one micro-batch, its kernels, their
// time as charged on the stream, FLOPs, bytes and where the cost came from (measured, fitted, datasheet).
#pragma once

#include <string>
#include <vector>

#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {

struct KernelLine {
  std::string phase;  ///< "forward" or "backward"
  std::string name;   ///< the stack row's name
  RowKind kind = RowKind::memory;
  int kernels = 0;
  Seconds time;        ///< all its kernels, as charged on the stream (launch floor or measured gap included)
  Seconds device;      ///< all its kernels' GPU time, before the launch floor
  double flops = 0.0;  ///< all its kernels
  Bytes bytes;         ///< all its kernels (memory-bound and attention rows)
  Provenance provenance = Provenance::assumed;
};

/// The rows of one layer of kind `kind` (a transformer layer: `moe_layer` for an MoE one) that run at `plan`, in
/// the stack's order, priced with `options` as layer_cost prices them (plan_layer_options gives the plan's data
/// types). Rows that are not the stack's (the FP8 casts of fp8_costs.hpp) are not listed; a sliding-window model's
/// rows are those of a windowed layer.
std::vector<KernelLine> layer_kernel_lines(const ModelSpec& spec, const Plan& plan, const ComputeModel& model,
                                           const CostOptions& options, LayerKind kind, bool moe_layer = false);

/// One kind of layer a model has: its kind, whether it is an MoE layer, how many layers, and a label.
struct LayerKindUse {
  LayerKind kind = LayerKind::transformer;
  bool moe = false;
  int layers = 0;
  std::string label;  ///< "transformer layer", "MoE transformer layer", "Mamba-2 layer", ...
};
/// The kinds of layer of `spec`, in the order transformer, MoE transformer, Mamba-2, attention, MLP, MoE.
std::vector<LayerKindUse> layer_kinds_of(const ModelSpec& spec);

}  // namespace scalescope::models
