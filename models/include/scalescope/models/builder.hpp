// Plan -> task graph: the per-rank tasks of one training iteration (DP, TP, SP, PP with GPipe / 1F1B /
// interleaved schedules, ZeRO 1-3, recompute, gradient accumulation) for the simulator.
//
// Rank layout (Megatron-Core order tp-cp-dp-pp): tp innermost, then cp, then dp, then pp:
//     rank = tp_rank + tp * (cp_rank + cp * (dp_rank + dp * stage))
// so a tensor-parallel group is tp consecutive GPUs (inside a node when tp <= GPUs per node) and a
// context-parallel group the cp ranks tp apart.
//
// Streams per rank: 0 compute (compute and the TP/SP collectives, which sit on its critical path as in
// Megatron without TP overlap), 1 gradient sync (DP all-reduce / ZeRO reduce-scatter and all-gather,
// tied-embedding all-reduce), 2 / 3 PP send / recv of activations, 4 / 5 PP send / recv of gradients,
// 6 ZeRO-3 parameter all-gathers (prefetch; ZeRO-1 with overlap_param_gather), 7 context-parallel K/V
// exchanges beside the attention blocks (cp_comm=p2p), 8 TP/SP collectives beside their GEMMs
// (tp_comm_overlap), 9 MoE token exchanges beside the layers (moe_a2a_overlap). Exception: eager-PyTorch kernels with the interleaved
// schedule run PyTorch's own program (torch_interleaved_program), every PP transfer on stream 2 in its order.
//
// Per micro-batch and model chunk: a forward unit (recv activations, compute, TP collectives, send)
// and a backward unit (recv gradients, recompute, compute, TP collectives, send), ordered on the
// compute stream by the schedule (pipeline_order). What each unit contains:
//  - TP without sp: 2 all-reduces per layer forward and 2 backward of mbs*seq*hidden*2 bytes (full
//    recompute repeats the forward ones); the vocab-parallel embedding adds one forward all-reduce and
//    the LM head input one backward all-reduce. With sp: an all-gather + reduce-scatter pair in place
//    of each all-reduce (same nccl-tests size), embedding reduce-scatter / all-gather, head all-gather /
//    reduce-scatter. The 3 small all-reduces of the vocab-parallel cross entropy are left out.
//  - PP: activations (fwd) and their gradients (bwd) of mbs*seq*hidden*2 bytes (/tp with sp) go from
//    each rank to the same (dp, tp) rank of the next / previous stage.
//  - Context parallelism (cp > 1): every piece is priced for the rank's seq/cp tokens and the attention
//    beyond the rank's own block runs as cp_costs.hpp says, with its exchange over the CP group (ranks
//    tp apart): p2p on stream 7 beside the blocks (a zero-length join waits for both), allgather / a2a
//    on the compute stream. Activations, PP sends and TP collectives carry seq/cp tokens.
//  - tp_comm_overlap (needs sp): a layer block's all-gathers and reduce-scatters run on stream 8 beside
//    its compute (Transformer Engine userbuffers split them into tp chunks pipelined with the GEMM
//    chunks); the last reduce-scatter chunk (1/tp of the bytes) stays exposed on the compute stream,
//    after both. Embedding and head collectives are not overlapped.
//  - Gradient sync over the dp x cp group (grads of g = 4 bytes per element for precision=mixed and fp8,
//    fp32 main grads as in Megatron-LM and PyTorch DDP with fp32 parameters; 2 for bf16, fp16 and
//    grad_reduce_in_fp32=false), buckets of bucket_MB
//    MiB (PyTorch DDP's bucket_cap_mb is in MiB) filled in backward order (LM head, layers last to
//    first, embedding) per model chunk; buckets close at layer boundaries once they reach the cap,
//    so a layer bigger than the cap makes a bucket of its own (DDP gives an oversized tensor its own
//    bucket). With overlap, a bucket is launched when the backward task that completes it ends.
//      zero=0: all-reduce on the last micro-batch only (gradient accumulation; DDP no_sync).
//      zero=1: Megatron-Core's distributed optimizer: with overlap_grad_reduce each bucket is reduce-
//              scattered when the last micro-batch's backward completes it (buckets only on the first
//              model chunk of the first stage, one per other chunk: Megatron's rule), else all after the
//              backward; sharded optimizer step; all-gather of the 16-bit parameters (2 bytes, 1 with
//              fp8_params) per bucket after the step, or with overlap_param_gather back to back on stream
//              6 from the start of each chunk's first forward, each piece of it waiting for its bucket
//              (Megatron dispatches the next bucket's gather when a forward pre-hook waits on the
//              current one, long before the GPU gets there). Eager PyTorch's ZeRO-1
//              (ZeroRedundancyOptimizer) keeps the reduce-scatter after the backward.
//      zero=2: reduce-scatter in buckets during the backward of EVERY micro-batch (the gradients are
//              sharded, so they cannot be accumulated whole, as in DeepSpeed), then as zero=1.
//      zero=3: as zero=2, plus an all-gather of each layer's bf16 parameters before its forward and
//              again before its backward (every micro-batch), prefetched one layer ahead on stream 6:
//              the gather of use u waits for the compute of use u-2 (two layers' buffers).
//    overlap=false: the gradient sync of a unit (zero 2/3) or of the iteration (zero 0/1) starts after
//    its backward.
//  - Mixture of experts (docs/moe.md): an MoE layer's compute is the stack's MoE rows (router, permutation,
//    grouped expert GEMMs, shared experts); its TP collectives are the attention's pair and the shared experts'
//    pair (the routed experts work on the rank's sequence-parallel tokens). Expert layout inside a stage's
//    W = tp*cp*dp ranks, local index r = tp_rank + tp (cp_rank + cp dp_rank) = etp_rank + etp (ep_rank + ep
//    edp_rank) (Megatron-Core's expert rank order): the EP group is the ep ranks etp apart, the ETP group etp
//    consecutive ranks, the expert-data-parallel (EDP) group the edp = W / (ep etp) ranks etp*ep apart. Per MoE
//    layer and pass (forward, backward, full recompute): alltoall dispatcher: an all-to-all of the rank's routed
//    token copies Tr top_k h 2 x imbalance bytes over the EP group to dispatch and one to combine (nccl-tests
//    size: the rank's send buffer); allgather dispatcher: an all-gather of ep Tr h 2 bytes and a reduce-
//    scatter of the same; etp > 1: an all-gather and a reduce-scatter of etp x the dispatched bytes over the
//    ETP group. On the compute stream after the block (merged over its MoE layers like the TP collectives), or
//    with moe_a2a_overlap beside it on stream 9, joined before the next task. The routed experts' gradients
//    fill buckets of their own, reduced (zero=0) or reduce-scattered (zero>=1) over the EDP group, their ZeRO
//    shards and all-gathers too; the optimizer updates the dense parameters / (dp cp) and the experts / edp.
//  - Tied embeddings with pp > 1: all-reduce of the embedding gradient (V/tp*h*g bytes) between the
//    first and last stage (same dp, tp rank) after the backward.
//  - Optimizer: one task after the rank's gradient sync (optimizer_cost over its parameters, /dp with
//    ZeRO), then the ZeRO-1/2 parameter all-gathers. The step ends when every rank is done.
// Granularity (what is merged, to keep 1,000-GPU graphs small): a unit is ONE compute task for all its
// layers (plus embedding / head) followed by ONE collective per op with the summed bytes of its TP
// collectives, since on the compute stream compute and TP collectives run back to back either way.
// This drops the fixed latency of the merged collectives (k collectives of S cost k*(a + S/B), one of
// kS costs a + kS/B). A unit is split per layer where the gradient sync needs the per-layer readiness
// (the micro-batch that syncs gradients with overlap, every unit under ZeRO-3) or when
// BuildOptions::per_layer_tasks is set.
#pragma once

#include <vector>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/task_graph.hpp"

namespace scalescope::models {

struct BuildOptions {
  /// Only one representative pipeline (the pp ranks with tp_rank = 0 and dp_rank = 0): the symmetric
  /// fast path of the simulator (absent DP/TP peers are assumed identical).
  bool symmetric = true;
  /// With symmetric off: only the ranks of tensor-parallel rank 0 (every stage and data-parallel
  /// rank), standing for their TP peers, which run the same tasks on their own GPUs and rails. Exact
  /// at flow fidelity when the cluster is rail_symmetric(), the TP groups lie inside nodes and
  /// intra-node collectives are analytical: the absent peers' traffic would use other rails only.
  bool tp_classes = false;
  /// One compute task per layer and one collective per TP operation everywhere (finer traces, exact
  /// collective latencies, more tasks).
  bool per_layer_tasks = false;
  /// Give each compute task the time-weighted interference factors of its kernels (PhaseCost::
  /// interference(); TaskGraph::set_interference) when the compute model has per-kernel curves.
  bool task_interference = true;
  CostOptions costs;
};

/// Streams of every rank (see the header comment).
enum BuilderStream : int {
  kStreamCompute = 0, kStreamGradSync = 1, kStreamSendFwd = 2, kStreamRecvFwd = 3,
  kStreamSendBwd = 4, kStreamRecvBwd = 5, kStreamZeroGather = 6, kStreamCp = 7, kStreamTpOverlap = 8, kStreamEp = 9
};

/// Global rank of (stage, dp_rank, tp_rank, cp_rank) in the Megatron layout above.
int plan_rank(const Plan& plan, int stage, int dp_rank, int tp_rank, int cp_rank = 0);

/// One entry of a stage's compute order: forward or backward of (model chunk, micro-batch).
struct ScheduleStep {
  bool forward = true;
  int chunk = 0;
  int microbatch = 0;
  bool operator==(const ScheduleStep&) const = default;
};

/// The order in which stage `stage` runs its forward and backward passes:
///  gpipe: every forward (micro-batch 0..m-1), then every backward (0..m-1).
///  1f1b: min(pp - stage - 1, m) warm-up forwards, then one forward and one backward alternately,
///        then the remaining backwards (Megatron-LM forward_backward_pipelining_without_interleaving).
///  interleaved: Megatron-LM forward_backward_pipelining_with_interleaving: warm-up
///        (pp - stage - 1) * 2 + (vpp - 1) * pp (all m*vpp when m == pp), chunk of virtual step k =
///        (k mod pp*vpp) / pp (reversed for backward), micro-batch = (k / (pp*vpp)) * pp + k mod pp.
std::vector<ScheduleStep> pipeline_order(Schedule schedule, int pp, int vpp, int stage, int microbatches);

/// One entry of PyTorch's program for a pipeline rank under ScheduleInterleaved1F1B (torch 2.11
/// torch.distributed.pipelining, run by _PipelineScheduleRuntime): a compute unit, or the send or
/// receive of the activation (forward) or gradient (backward) of (local chunk, micro-batch) of that
/// rank: for a send the chunk whose output it sends, for a receive the chunk that consumes it.
struct TorchPipelineAction {
  enum class Kind : std::uint8_t { compute, send, recv };
  Kind kind = Kind::compute;
  ScheduleStep step;
  bool operator==(const TorchPipelineAction&) const = default;
};

/// PyTorch's interleaved-1F1B program of every rank (index = pipeline rank), as torch builds it:
///  1. compute order with idle slots (_get_1f1b_rank_ops): `rank` idle slots, then warm-up forwards,
///     w = min((vpp - 1) * r + 2 (pp - 1 - rank), m vpp) with r = m / max(1, m / pp) micro-batches per
///     round, followed by (vpp pp + 2 (pp - 1 - rank)) - (w + rank) idle slots; then a forward and a
///     backward per step; then an idle slot and a backward per step. Forward step k runs local chunk
///     (k / r) mod vpp, backward step k chunk vpp - 1 - ((k - w) / r) mod vpp, micro-batches in order
///     per chunk.
///  2. lowering (_prepare_schedule_with_comms): the idle slots are dropped, FSDP unshard / reshard
///     actions (at most 3 active chunks) and a grad-reduce action after each chunk's last backward are
///     added (no work without FSDP, but each takes a turn below);
///  3. communication (_add_send_recv): ranks take turns in rank order, each placing its next action
///     when its input is there (the receive is already placed, or the producing unit ran on the same
///     rank; other actions always) and appending right after a compute unit the send of its output,
///     while the matching receive is appended to the consumer rank's program at that moment. Without
///     the idle slots, receives land early: rank 0 posts the receive of chunk pp's input right after
///     its first send.
/// At run time every send and receive of a rank goes, in program order, to ONE NCCL stream (batched
/// P2P uses the group's communicator): a receive posted early holds up the sends behind it (seen in the
/// measured traces, validation/h200x4-interleaved/profile/: rank 1's second forward waits for rank 0's
/// fourth). The program is identical to torch 2.11's for the 12 (pp, vpp, m) compared.
/// Needs microbatches to be a multiple of max(1, microbatches / pp) (torch raises otherwise).
std::vector<std::vector<TorchPipelineAction>> torch_interleaved_program(int pp, int vpp, int microbatches);

/// The task graph of one iteration. Checks the plan with validate(plan, model, cluster.num_gpus()).
Expected<TaskGraph> build_task_graph(const ModelSpec& model, const Plan& plan, const Cluster& cluster,
                                     const ComputeModel& compute, const BuildOptions& options = {});

}  // namespace scalescope::models
