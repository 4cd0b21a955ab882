// Context parallelism (Megatron-Core --context-parallel-size with Transformer Engine attention): what one
// CP rank computes and exchanges per transformer layer, for the plan -> task-graph builder.
//
// Each sequence of s tokens is cut into 2 cp chunks and CP rank r keeps chunks r and 2cp-1-r (the load
// balancing of TE / Megatron's get_batch_on_this_cp_rank: every rank gets the same number of unmasked
// query-key pairs under the causal mask). Everything but the attention sees the rank's s/cp tokens:
// layer_cost / edge_cost of cp_rank_spec() (the model with seq_len s/cp), whose attention kernel is the
// causal attention of the rank's own tokens (step 0 below). b = mbs, H = heads / tp, d head size,
// k = kv width / tp, t = b s / cp tokens of the rank, e = 2 bytes (bf16):
//   p2p (TE AttnFuncWithCPAndKVP2P): cp steps. Step i = 1..cp-1 attends to the K/V of rank r - i:
//     either both query chunks against that rank's first K/V chunk or the second query chunk against both
//     K/V chunks, (s/cp) x (s/2cp) query-key pairs without a mask: forward FLOPs 4 b H d s^2 / (2 cp^2),
//     backward 2.5x; each step also corrects the running output (read the partial and the new output,
//     write one: 3 t q e bytes) and, backward, accumulates dQ and dK/dV (2 (t q + t k) e bytes). The
//     rank's attention over all steps is the causal attention of the whole sequence / cp.
//     Exchange: while block i is computed the next K/V block arrives: 2 t k e bytes per step forward,
//     cp - 1 steps; backward K/V and the dK/dV accumulators travel (2x). Priced as an all-gather over the
//     CP group of cp x one block (NCCL's ring all-gather moves the same bytes over the same ring), on its
//     own stream beside the blocks: it is exposed only where it is longer than they are.
//   allgather (TE AttnFuncWithCPAndKVAllGather): the same blocks; K/V all-gathered before the attention
//     (cp x 2 t k e bytes) and dK/dV reduce-scattered after its backward, both exposed.
//   a2a (Ulysses): all-to-all of Q, K, V from sequence to head sharding before the attention and of the
//     output back after it (per-rank buffers t (q + 2k) e and t q e); backward dO, then dQ, dK, dV; all
//     exposed. The attention is that of the whole sequence with H / cp heads: (cp - 1) x the step-0
//     FLOPs more, at the rate of that shape.
// The weights' gradients are reduced over dp x cp ranks (each CP rank saw other tokens), and the
// distributed optimizer shards over them. Memory per CP rank: activations of s/cp tokens; p2p keeps two
// K/V receive buffers (2 x 2 t k e).
#pragma once

#include "scalescope/models/layer_costs.hpp"
#include "scalescope/sim/collective_types.hpp"

namespace scalescope::models {

/// The model as one CP rank sees it: seq_len / cp tokens per sequence (the plan must be valid).
ModelSpec cp_rank_spec(const ModelSpec& spec, const Plan& plan);

/// The CP exchange of one layer and micro-batch: collectives over the CP group (nccl-tests sizes).
struct CpExchange {
  CollOp forward_op = CollOp::all_gather, backward_op = CollOp::all_gather;
  Bytes forward_bytes, backward_bytes;
  /// true (p2p): beside the attention blocks on its own stream; false: before / after them, exposed.
  bool overlapped = false;
};

/// Attention beyond the rank's own causal block (steps 1..cp-1, or Ulysses' extra heads) and the
/// exchange, for one layer and micro-batch (header comment). Empty when cp = 1.
struct CpLayerCost {
  LayerCost blocks;
  CpExchange exchange;
};
CpLayerCost cp_layer_cost(const ModelSpec& spec, const Plan& plan, const ComputeModel& model, const CostOptions& options = {});

/// Bytes of the p2p K/V receive buffers (two blocks) on a rank; 0 unless cp > 1 with cp_comm=p2p.
Bytes cp_buffer_bytes(const ModelSpec& spec, const Plan& plan);

}  // namespace scalescope::models
