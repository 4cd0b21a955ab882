// FP8 training through Transformer Engine (precision=fp8): the kernels it adds to a transformer layer
// and the memory it adds or saves. The GEMMs themselves run at the profile's measured fp8_e4m3 rates
// (datasheet fp8 peak otherwise): layer_costs with CostOptions::dtype = "fp8"; attention and the LM head
// stay bf16 (Megatron-Core's defaults: no FP8 dot-product attention, output layer not in FP8).
//
// Per layer, micro-batch and tensor-parallel rank; t tokens of the rank (mbs * seq / cp), h hidden (a
// GEMM input is whole t x h: sequence parallelism gathers it first), q, k the query and kv widths per
// rank, f ffn per rank, F1 = f (gelu) or 2f (swiglu). Hopper FP8 GEMMs take TN
// operands only, so a wgrad needs the transposes of X and dY: each cast writes an FP8 copy and its
// transpose (TE fp8_cast_transpose_fused):
//   cast_transpose of a bf16 tensor: read 2 + write 1 + 1 = 4 bytes per element.
//   forward: qkv and fc1 inputs (t x h each) come out of TE's LayerNormLinear already in FP8 with
//            delayed scaling (the norm kernel casts): their transposes only, read 1 + write 1 = 2 B/elem;
//            out-proj input (t x q) and fc2 input (t x f): 4 B/elem.
//   backward: the output gradient of every GEMM: qkv t x (q + 2k), out-proj t x h, fc1 t x F1,
//            fc2 t x h: 4 B/elem.
//   weights: the linear weights of the rank, cast once per iteration (TE caches them over the
//            micro-batches: is_first_microbatch): 4 B/param, charged 1/m per micro-batch; none with
//            fp8_params (the optimizer writes the FP8 weights).
//   scaling recipes:
//     delayed:    the casts above + one amax-history / scale update kernel per forward and backward
//                 (multi-tensor, launch-bound).
//     tensorwise: current scaling: an amax pass reads every cast tensor first (+2 B/elem), and the
//                 norm no longer casts (qkv/fc1 inputs: 4 + 2 B/elem like the others).
//     blockwise:  scales per 1x128 / 128x128 block computed inside the casts: 4 B/elem + one fp32
//                 scale per 128 elements per copy (+2 x 4/128 B/elem); norm not fused.
//     mxfp8:      4 B/elem (row- and column-wise copies) + one e8m0 scale per 32 elements per copy
//                 (+2/32 B/elem); norm not fused. (MXFP8 GEMMs are Blackwell's; priced at the fp8 rate.)
//   Not modelled (small): the delayed-scaling amax all-reduce per micro-batch (a few KB over the
//   amax group) and current scaling's one-float TP all-reduces before FP8 all-gathers.
// Memory:
//   weights: the FP8 copy and transpose of each linear weight kept for the iteration: +2 B/param
//            (fp8_params: the primary weight is FP8 with its transpose, 2 B in place of the bf16 2 B).
//   activations: TE saves the FP8 inputs of the linears for the wgrad: the qkv and fc1 inputs
//            (Korthikanti's 2 x 2sbh) at 1 B -> save 2sbh (/tp with sp); the out-proj input 2sbq/tp
//            -> sbq/tp; the fc2 input (activation output, 2sbf/tp) -> sbf/tp.
//   The distributed optimizer all-gathers FP8 parameters with fp8_params (1 B instead of 2).
// MoE layers (docs/moe.md): the same casts for the attention, the shared experts (t tokens, their width / tp)
// and the routed experts (the x = Tr top_k etp imbalance token copies the rank's experts process, width
// Fe / etp; their inputs are the permuted tokens, not a norm output, so no norm fusion); the weight casts cover
// the rank's E / ep experts; FP8 activations save the routed experts' permuted inputs and fc2 inputs.
// Transformer Engine's grouped linear quantizes each local expert's rows and weights apart (split_quantize, one
// quantizer per expert): with E_r = E / ep > 1 every routed-expert cast is E_r kernels of 1/E_r of the bytes,
// each at the elementwise rate of its size and the launch floor, and with current scaling each part's amax is a
// kernel of its own before its cast. One profiled step of Megatron-Core 0.16.1 + TE 2.20.2 with 16 local experts
// (validation/session40) ran 408 amax and 336 cast kernels in 4 layers: 102 amax a layer = 16 experts x (fc1 and
// fc2 inputs, their output gradients, their two weights) + the 6 of attention's qkv and out-proj.
// Hybrid layers (docs/hybrid.md) cast the linears of their one block: a Mamba-2 layer in_proj (input t x h out of
// the norm, output gradient t x (2 d_i + 2 G N + n)/tp) and out_proj (input t x d_i/tp, output gradient t x h); an
// attention layer qkv and out-proj; an MLP layer fc1 and fc2; an MoE layer its shared and routed experts. The dense
// kinds' mean prices the non-MoE layers, as layer_cost does.
// Sources: Transformer Engine 2.x pytorch/module/{layernorm_linear,linear}.py (cast_transpose,
// is_first_microbatch weight caching), Megatron-Core fp8 recipes (--fp8-recipe), Micikevicius et al.
// 2022 "FP8 Formats for Deep Learning" (E4M3 forward, E5M2 gradients in the hybrid format).
#pragma once

#include "scalescope/models/layer_costs.hpp"

namespace scalescope::models {

/// Whether `stack` was imported from a trace of an FP8 program (its trace symbols have fp8 = 1: the import saw
/// FP8 GEMMs). Its anchored rows and memory then hold that program's own FP8 casts, copies and saved inputs,
/// so the Transformer Engine pieces below are not added to it (they would count them twice).
bool fp8_measured_in_stack(const StackProfile& stack);

/// The kernels precision=fp8 adds to one layer, one micro-batch, one TP rank (header comment). `spec`
/// has the rank's sequence (seq_len / cp); weight casts are spread over `microbatches`. Empty unless
/// plan.fp8(), and empty for a stack whose trace ran FP8 (fp8_measured_in_stack).
LayerCost fp8_layer_cost(const ModelSpec& spec, const Plan& plan, const ComputeModel& model, int microbatches,
                         bool moe_layer = false);
/// The same for one layer of kind `kind` (LayerKind::moe: an MoE block; transformer: as above with `moe_layer`).
LayerCost fp8_layer_cost_of(const ModelSpec& spec, const Plan& plan, const ComputeModel& model, int microbatches,
                            LayerKind kind, bool moe_layer = false);

/// Linear weights of one layer of kind `kind` that one rank casts to FP8: a transformer layer (dense, or with `moe_layer`
/// an MoE layer's attention, shared experts and its E / ep routed experts / etp), or a hybrid model's Mamba-2,
/// attention, MLP or MoE layer.
double fp8_linear_params_of(const ModelSpec& spec, const Plan& plan, LayerKind kind, bool moe_layer = false);

/// The routed experts' linear weights a rank holds: its E / ep experts' fc1 and fc2 over etp (0: a dense model).
double routed_expert_weights(const ModelSpec& spec, const Plan& plan);

/// Extra bytes of FP8 weight copies for `linear_params` linear weights held by a rank (0 unless fp8).
Bytes fp8_weight_copy_bytes(double linear_params, const Plan& plan);

/// Activation bytes one layer saves per micro-batch by keeping FP8 linear inputs (0 unless fp8 or with
/// full recompute, which keeps only the layer input). `spec` has the rank's sequence.
Bytes fp8_activation_saving(const ModelSpec& spec, const Plan& plan, bool moe_layer = false,
                            LayerKind kind = LayerKind::transformer);

/// Bytes per parameter the distributed optimizer all-gathers after its step: 1 with fp8_params, else 2.
double param_gather_bytes_per_element(const Plan& plan);

}  // namespace scalescope::models
