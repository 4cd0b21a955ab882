// Internal pieces of the plan -> task-graph builder: the shared per-build context and the emitter of
// one rank's tasks (see builder.hpp for what is emitted).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/counts.hpp"
#include "scalescope/models/cp_costs.hpp"

namespace scalescope::models::detail {

/// Everything that is the same for every rank of a build.
struct BuildContext {
  const ModelSpec* spec = nullptr;
  const Plan* plan = nullptr;
  const ComputeModel* compute = nullptr;
  BuildOptions options;
  int m = 1;  ///< micro-batches per pipeline
  int V = 1;  ///< virtual pipeline stages (pp * vpp)
  PipelineLayout layout;
  std::vector<int> first_layer;  ///< per virtual stage: index of its first layer in the model
  LayerCost layer;      ///< a dense layer
  LayerCost moe_layer;  ///< an MoE layer (MoE models)
  EdgeCost edge;
  LayerCost cp_blocks;     ///< context-parallel attention beyond the rank's own block (cp_costs.hpp)
  CpExchange cp_exchange;  ///< and its exchange, per layer
  /// zero=1 as Megatron-Core's distributed optimizer (not eager PyTorch's ZeroRedundancyOptimizer): buckets
  /// only on the first model chunk of the first stage (one bucket per other chunk), reduce-scatters
  /// overlapped with the backward with overlap_grad_reduce, parameter all-gathers in the next forward
  /// with overlap_param_gather (builder_overlap.cpp).
  bool dist_opt = false;
  double param_gather_elem = 2;  ///< bytes per parameter of the ZeRO-1/2 parameter all-gathers
  double act_bytes = 0;  ///< S = mbs * seq * hidden * 2 (TP collective of a matmul output)
  /// TP collective of the residual stream (S; x2 for eager autocast, whose norms and residual are fp32)
  double residual_bytes = 0;
  double pp_bytes = 0;   ///< activation bytes sent between stages (S, or S/tp with sp; x2 for eager fp32)
  double grad_elem = 4;  ///< gradient bytes per element
  /// ZeRO-2/3 run as PyTorch FSDP2 (eager framework; validation/harness/parallel.py): parameters sharded at
  /// rest and gathered for every micro-batch's forward (zero=3: again for its backward), never ahead of
  /// the first unit of a micro-batch.
  bool fsdp2 = false;
  /// The host reads the dispatcher's split sizes back in every MoE layer's forward (StackProfile::moe_host_sync):
  /// per-layer MoE forward (and full-recompute) tasks are marked as host synchronisation points.
  bool moe_host_sync = false;
  /// zero=0 (and zero=1 as ZeroRedundancyOptimizer over DDP) as PyTorch DDP without gradient_as_bucket_view
  /// (StackProfile::ddp_grad_copies): the gradients copied into the buckets before their reduction, and back after
  /// the last one.
  bool ddp_grad_copies = false;
  /// Per-tensor kernels (StackProfile::grad_tensors_per_layer; 0 bytes: not known, one kernel per copy): a layer's
  /// weight matrices' average gradient bytes and its vectors (norm weights, biases: hidden wide).
  double grad_matrix_bytes = 0, grad_vector_bytes = 0, grad_vectors_per_layer = 0;
  double layer_params = 0, embed_params = 0, head_params = 0;  ///< per tensor-parallel rank (a dense layer)
  /// An MoE layer on one rank: all its parameters, and of them the routed experts, whose gradients are reduced
  /// (and ZeRO-sharded) over the expert-data-parallel group instead of dp x cp.
  double moe_layer_params = 0, moe_expert_params = 0;
  std::vector<double> stage_params;  ///< parameters one tensor-parallel rank of each stage holds
  std::vector<double> stage_expert_params;  ///< of them, routed experts
  /// Expert parallelism, per MoE layer and pass (forward: dispatch + combine): the all-to-all (alltoall
  /// dispatcher) or all-gather / reduce-scatter (allgather dispatcher) bytes over the EP group, and the
  /// expert-TP all-gather / reduce-scatter bytes over the ETP group (etp > 1); nccl-tests sizes.
  double ep_bytes = 0, etp_bytes = 0;
  bool is_moe_layer(int index) const { return spec->is_moe_layer(index); }
  double tie_bytes = 0;              ///< tied-embedding gradient all-reduce size
  double bucket_bytes = 0;
  /// A parameter bucket in forward order: its parameters and the first forward piece that uses them
  /// (0 = embedding on the first chunk, then the layers, then the head).
  struct GatherBucket {
    double params = 0;
    double expert_params = 0;  ///< of params: routed experts (gathered over the expert-data-parallel group)
    int first_piece = 0;
  };
  /// overlap_param_gather: per virtual stage, its buckets in forward order (gathered back to back when
  /// the first forward of that chunk starts; each piece of it waits for its bucket).
  std::vector<std::vector<GatherBucket>> gather_buckets;
  /// Gradient bucket cap of virtual stage v: Megatron's distributed optimizer buckets only chunk 0.
  double bucket_cap(int v) const { return dist_opt && v != 0 ? 1e300 : bucket_bytes; }
  std::vector<std::vector<ScheduleStep>> order;  ///< per stage
  /// PyTorch's interleaved program per stage (torch_interleaved_program) when the kernels are eager
  /// PyTorch's and the schedule is interleaved: its order places the PP sends and receives of a rank
  /// on one stream. Empty otherwise (four PP streams, each transfer next to its unit).
  std::vector<std::vector<TorchPipelineAction>> torch_program;
};

/// Kinds of collective instance keys (RankEmitter::key).
enum CollectiveKind : int {
  kKindTp = 1, kKindDp = 2, kKindTie = 3, kKindGather = 4, kKindCp = 5, kKindEp = 6, kKindEdp = 7, kKindEdpGather = 8,
  kKindEtp = 9
};

/// How a unit's gradients reach the gradient-sync stream.
enum class SyncMode { none, overlap, after_unit, after_backward };

/// Emits the tasks of one rank (stage, dp_rank, tp_rank) into a graph.
class RankEmitter {
 public:
  RankEmitter(const BuildContext& ctx, TaskGraph& graph, int stage, int dp_rank, int tp_rank, int cp_rank = 0);
  void emit();

 private:
  /// TP collectives of one unit or piece, counted by the tensor they carry: index 0 a matmul output or its
  /// gradient (compute dtype, BuildContext::act_bytes), index 1 the residual stream or its gradient (a
  /// column-parallel input, the embedding output; BuildContext::residual_bytes).
  struct TpOps {
    std::array<int, 2> all_reduce{}, all_gather{}, reduce_scatter{};
    TpOps operator*(int k) const {
      TpOps r = *this;
      for (auto* a : {&r.all_reduce, &r.all_gather, &r.reduce_scatter}) {
        for (int& n : *a) n *= k;
      }
      return r;
    }
    TpOps& operator+=(const TpOps& o) {
      for (int w = 0; w < 2; ++w) {
        all_reduce[w] += o.all_reduce[w];
        all_gather[w] += o.all_gather[w];
        reduce_scatter[w] += o.reduce_scatter[w];
      }
      return *this;
    }
  };
  enum class Piece { embedding, layer, moe_layer, head };
  enum class Phase { forward, backward, recompute };

  void forward_unit(const ScheduleStep& s);
  void backward_unit(const ScheduleStep& s);
  /// The rank's units and PP transfers in the order of c_.torch_program.
  void emit_torch_program();
  /// The receive a unit waits for: a new one on its PP stream, or (torch program) the one placed before.
  TaskId pp_recv(const ScheduleStep& s, int v, TaskLabels lab);
  /// After a unit: its send, or (torch program) remember the unit's end for the send placed later.
  void pp_send(const ScheduleStep& s, int v, TaskLabels lab);
  /// The PP receive / send of unit `s` (virtual stage v) on `stream`; the send waits for `after`.
  TaskId add_pp_recv(const ScheduleStep& s, int v, int stream, TaskLabels lab);
  void add_pp_send(const ScheduleStep& s, int v, int stream, TaskId after, TaskLabels lab);
  /// How a unit's gradients are synchronised over a group of `group` ranks (0: dp x cp).
  SyncMode sync_mode(int microbatch, int group = 0) const;
  bool split_unit(int microbatch, bool forward) const;

  TaskId compute(TaskCategory cat, const char* name, const PhaseCost& cost, TaskLabels labels, TaskId dep);
  /// DDP's gradient copies: memory-bound work moving `bytes` (read + written) on the compute stream after `dep`, one
  /// kernel per parameter tensor where the stack gives grad_tensors_per_layer (else one kernel), outside the host's
  /// per-layer and per-micro-batch issue costs.
  TaskId copy_task(const char* name, double bytes, TaskLabels labels, TaskId dep);
  /// `layers` layers' compute `cost` (plus the unit's edge pieces in it), the context-parallel blocks and
  /// exchange (cp_attention), then the TP collectives `layer_ops` + `edge_ops` as tp_comm() emits them;
  /// with tp_comm_overlap the layers' SP collectives run beside the compute on their own stream and only
  /// their last reduce-scatter chunk (1/tp of its bytes) waits on the compute stream, after them. Returns
  /// the compute task (builder_overlap.cpp).
  TaskId layer_block(Phase phase, const char* name, const PhaseCost& cost, int layers, const TpOps& layer_ops,
                     const TpOps& edge_ops, bool split, TaskLabels labels, TaskId dep, int moe_layers = 0);
  /// Expert-parallel token exchange of `moe_layers` MoE layers in one pass (builder.hpp): on the compute stream
  /// after `before`, or with moe_a2a_overlap on the EP stream beside the block that starts after `before`
  /// (returned, for the block's join).
  std::vector<TaskId> ep_comm(Phase phase, int moe_layers, bool beside, TaskId before, TaskLabels labels);
  /// The compute cost, TP collectives and parameters of layers [first, first + count) of the model.
  struct LayerSpan {
    int dense = 0, moe = 0;
    PhaseCost cost(const LayerCost& dense_cost, const LayerCost& moe_cost, Phase phase) const;
  };
  LayerSpan span(int first, int count) const;
  TpOps span_ops(const LayerSpan& s, bool forward) const;
  /// The context-parallel attention blocks of `layers` layers and their exchange (cp_costs.hpp): p2p on
  /// the CP stream beside the blocks, joined before the next compute-stream task; allgather / a2a before
  /// the blocks on the compute stream.
  void cp_attention(Phase phase, int layers, TaskLabels labels);
  /// overlap_param_gather: the parameter all-gathers of virtual stage v for its first forward, in
  /// forward order on the gather stream; returns them by bucket.
  std::vector<TaskId> first_forward_gathers(int v, TaskLabels labels);
  /// TP collectives on the compute stream: one task per operation (split) or one per op kind with
  /// the summed bytes (merged). Returns the last task emitted.
  TaskId tp_comm(const TpOps& ops, bool split, TaskLabels labels, TaskId dep);
  TpOps tp_ops(Piece piece, bool forward) const;
  /// ZeRO-3 / FSDP gather of `params` before a use; `expert_params` of them over the expert-data-parallel group.
  TaskId zero_gather(double params, TaskLabels labels, double expert_params = 0.0);
  /// Gradients of `bytes` ready at `ready`; `expert_bytes` of them belong to routed experts (own buckets,
  /// reduced over the expert-data-parallel group).
  void grads_ready(double bytes, TaskId ready, TaskLabels labels, double expert_bytes = 0.0);
  /// Closes the open dense and expert buckets (the unit's sync modes mode_, expert_mode_).
  void flush_bucket(TaskId ready, TaskLabels labels);
  void flush_one(bool experts, TaskId ready, TaskLabels labels);
  TaskId grad_sync(double bytes, TaskId dep, TaskLabels labels, bool experts = false);
  std::uint64_t key(int kind, std::uint32_t group_index, std::uint32_t& seq) const;
  /// Index of the rank's TP group among all TP groups (stage, dp rank, cp rank).
  std::uint32_t tp_group_index() const {
    return static_cast<std::uint32_t>((stage_ * c_.plan->dp + dp_rank_) * c_.plan->cp + cp_rank_);
  }

  const BuildContext& c_;
  TaskGraph& g_;
  int stage_, dp_rank_, tp_rank_, cp_rank_, rank_;
  int prev_ = -1, next_ = -1;  ///< ranks of the previous / next stage (same dp, tp), -1 at the ends (pp=1)
  GroupId tp_group_ = 0, dp_group_ = 0, cp_group_ = 0;  ///< dp_group_: the dp x cp ranks that reduce gradients
  /// Expert groups (MoE): the EP ranks exchanging tokens, the expert-TP ranks splitting an expert, the
  /// expert-data-parallel ranks reducing the experts' gradients (layout etp-ep-edp inside a stage).
  GroupId ep_group_ = 0, etp_group_ = 0, edp_group_ = 0;
  std::uint32_t ep_group_index_ = 0, etp_group_index_ = 0, edp_group_index_ = 0;
  std::uint32_t tp_seq_ = 0, dp_seq_ = 0, gather_seq_ = 0, cp_seq_ = 0, ep_seq_ = 0, etp_seq_ = 0, edp_seq_ = 0,
                edp_gather_seq_ = 0;
  SyncMode mode_ = SyncMode::none, expert_mode_ = SyncMode::none;  ///< of the unit being emitted
  double cap_ = 0;  ///< gradient bucket cap of the unit being emitted (BuildContext::bucket_cap)
  /// A gradient bucket being filled (dense over dp x cp, or routed experts over edp).
  struct Bucket {
    double bytes = 0.0;
    bool experts = false;
  };
  double bucket_acc_ = 0;                 ///< dense gradient bytes waiting for the current bucket
  double expert_acc_ = 0;                 ///< expert gradient bytes waiting for the current expert bucket
  std::vector<Bucket> unit_buckets_;      ///< buckets to launch at the end of the current unit
  std::vector<Bucket> deferred_buckets_;  ///< buckets to launch after the whole backward
  std::vector<Bucket> shard_buckets_;     ///< ZeRO-1/2: buckets whose parameters are gathered after the step
  bool record_shards_ = false;
  std::vector<TaskId> uses_;              ///< ZeRO-3: compute tasks that used gathered parameters, in order
  TaskId last_sync_ = kNoTask;            ///< last task on the gradient-sync stream
  double ddp_copied_ = 0;                 ///< gradient bytes copied into DDP buckets (ddp_grad_copies)
  TaskId last_compute_ = kNoTask;         ///< last task on the compute stream
  /// Torch program: placed receives and finished units, by (forward, local chunk, micro-batch).
  std::map<std::tuple<bool, int, int>, TaskId> placed_recv_, unit_end_;
};

}  // namespace scalescope::models::detail
