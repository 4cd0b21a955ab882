// Plan -> task graph: the per-build context and the emitter of one rank's forward/backward units,
// TP collectives, PP transfers, gradient sync (DDP buckets, ZeRO 1-3) and optimizer step.
#include "scalescope/models/builder.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>

#include "builder_impl.hpp"

namespace scalescope::models {

namespace detail {

namespace {

std::uint32_t tag(int virtual_stage, bool forward) {
  return static_cast<std::uint32_t>(virtual_stage * 2 + (forward ? 0 : 1));
}

std::int32_t layer_label(int layer) { return layer; }

}  // namespace

RankEmitter::RankEmitter(const BuildContext& ctx, TaskGraph& graph, int stage, int dp_rank, int tp_rank, int cp_rank)
    : c_(ctx), g_(graph), stage_(stage), dp_rank_(dp_rank), tp_rank_(tp_rank), cp_rank_(cp_rank) {
  const Plan& p = *c_.plan;
  rank_ = plan_rank(p, stage, dp_rank, tp_rank, cp_rank);
  if (p.pp > 1) {
    prev_ = plan_rank(p, (stage + p.pp - 1) % p.pp, dp_rank, tp_rank, cp_rank);
    next_ = plan_rank(p, (stage + 1) % p.pp, dp_rank, tp_rank, cp_rank);
  }
  // A stage's groups of one kind run their collectives in lockstep: the TP groups of its dp x cp ranks,
  // the DP (x CP) groups of its tp ranks, the CP groups of its dp x tp ranks. Declared as siblings, they
  // share links at analytical fidelity. Sibling index i enumerates the other coordinates.
  auto tp_group_of = [&](int i) {
    std::vector<int> ranks;
    for (int t = 0; t < p.tp; ++t) ranks.push_back(plan_rank(p, stage, i / p.cp, t, i % p.cp));
    return g_.intern_group(ranks);
  };
  auto dp_group_of = [&](int t) {  // gradients are reduced over dp x cp (Megatron's dp-cp group)
    std::vector<int> ranks;
    for (int d = 0; d < p.dp; ++d) {
      for (int c = 0; c < p.cp; ++c) ranks.push_back(plan_rank(p, stage, d, t, c));
    }
    return g_.intern_group(ranks);
  };
  auto cp_group_of = [&](int i) {
    std::vector<int> ranks;
    for (int c = 0; c < p.cp; ++c) ranks.push_back(plan_rank(p, stage, i / p.tp, i % p.tp, c));
    return g_.intern_group(ranks);
  };
  auto declare = [&](GroupId self, int count, auto group_of) {
    if (count < 2 || !g_.concurrent(self).empty()) return;  // declared by an earlier rank of the stage
    std::vector<GroupId> siblings;
    for (int i = 0; i < count; ++i) {
      if (const GroupId s = group_of(i); s != self) siblings.push_back(s);
    }
    g_.set_concurrent(self, std::move(siblings));
  };
  tp_group_ = tp_group_of(dp_rank * p.cp + cp_rank);
  dp_group_ = dp_group_of(tp_rank);
  cp_group_ = cp_group_of(dp_rank * p.tp + tp_rank);
  if (p.tp > 1) declare(tp_group_, p.dp * p.cp, tp_group_of);
  if (p.dp * p.cp > 1) declare(dp_group_, p.tp, dp_group_of);
  if (p.cp > 1) declare(cp_group_, p.dp * p.tp, cp_group_of);
  if (!c_.spec->is_moe()) return;
  // Expert layout inside the stage (Megatron-Core's expert rank order etp-ep-edp over the stage's W = tp*cp*dp
  // ranks, local index r = tp_rank + tp (cp_rank + cp dp_rank)): r = etp_rank + etp (ep_rank + ep edp_rank).
  const int W = p.tp * p.cp * p.dp, edp = p.edp(), base = W * stage;
  const int r = tp_rank + p.tp * (cp_rank + p.cp * dp_rank);
  const int etp_rank = r % p.etp, ep_rank = (r / p.etp) % p.ep, edp_rank = r / (p.etp * p.ep);
  auto local = [&](int t, int e, int d) { return base + t + p.etp * (e + p.ep * d); };
  auto ep_group_of = [&](int i) {  // i = etp_rank + etp * edp_rank
    std::vector<int> ranks;
    for (int e = 0; e < p.ep; ++e) ranks.push_back(local(i % p.etp, e, i / p.etp));
    return g_.intern_group(ranks);
  };
  auto etp_group_of = [&](int i) {  // i = ep_rank + ep * edp_rank
    std::vector<int> ranks;
    for (int t = 0; t < p.etp; ++t) ranks.push_back(local(t, i % p.ep, i / p.ep));
    return g_.intern_group(ranks);
  };
  auto edp_group_of = [&](int i) {  // i = etp_rank + etp * ep_rank
    std::vector<int> ranks;
    for (int d = 0; d < edp; ++d) ranks.push_back(local(i % p.etp, i / p.etp, d));
    return g_.intern_group(ranks);
  };
  const int ep_i = etp_rank + p.etp * edp_rank, etp_i = ep_rank + p.ep * edp_rank, edp_i = etp_rank + p.etp * ep_rank;
  ep_group_ = ep_group_of(ep_i);
  etp_group_ = etp_group_of(etp_i);
  edp_group_ = edp_group_of(edp_i);
  ep_group_index_ = static_cast<std::uint32_t>(base + ep_i);
  etp_group_index_ = static_cast<std::uint32_t>(base + etp_i);
  edp_group_index_ = static_cast<std::uint32_t>(base + edp_i);
  if (p.ep > 1) declare(ep_group_, W / p.ep, ep_group_of);
  if (p.etp > 1) declare(etp_group_, W / p.etp, etp_group_of);
  if (edp > 1) declare(edp_group_, p.ep * p.etp, edp_group_of);
}

RankEmitter::LayerSpan RankEmitter::span(int first, int count) const {
  LayerSpan s;
  s.moe = c_.spec->moe_layers_in(first, count);
  s.dense = count - s.moe;
  return s;
}

PhaseCost RankEmitter::LayerSpan::cost(const LayerCost& dense_cost, const LayerCost& moe_cost, Phase phase) const {
  const auto of = [&](const LayerCost& l) -> const PhaseCost& {
    return phase == Phase::forward ? l.forward : phase == Phase::backward ? l.backward : l.recompute;
  };
  if (moe == 0) return of(dense_cost) * dense;
  if (dense == 0) return of(moe_cost) * moe;
  PhaseCost c = of(dense_cost) * dense;
  c += of(moe_cost) * moe;
  return c;
}

RankEmitter::TpOps RankEmitter::span_ops(const LayerSpan& s, bool forward) const {
  TpOps ops = tp_ops(Piece::layer, forward) * s.dense;
  if (s.moe > 0) ops += tp_ops(Piece::moe_layer, forward) * s.moe;
  return ops;
}

std::uint64_t RankEmitter::key(int kind, std::uint32_t group_index, std::uint32_t& seq) const {
  return (static_cast<std::uint64_t>(kind) << 56) | (static_cast<std::uint64_t>(group_index) << 32) | seq++;
}

SyncMode RankEmitter::sync_mode(int microbatch, int group) const {
  const Plan& p = *c_.plan;
  if ((group > 0 ? group : p.dp * p.cp) == 1) return SyncMode::none;
  if (p.zero <= 1) {
    if (microbatch != c_.m - 1) return SyncMode::none;
    return (p.zero == 0 || c_.dist_opt) && p.overlap ? SyncMode::overlap : SyncMode::after_backward;
  }
  return p.overlap ? SyncMode::overlap : SyncMode::after_unit;
}

bool RankEmitter::split_unit(int microbatch, bool forward) const {
  const Plan& p = *c_.plan;
  if (c_.options.per_layer_tasks || (p.zero == 3 && p.dp > 1) || (forward && c_.fsdp2)) return true;
  if (forward) return microbatch == 0 && !c_.gather_buckets.empty();  // waits per bucket (overlap_param_gather)
  return sync_mode(microbatch) == SyncMode::overlap;
}

TaskId RankEmitter::compute(TaskCategory cat, const char* name, const PhaseCost& cost, TaskLabels labels, TaskId dep) {
  const TaskId t = g_.add_compute(rank_, kStreamCompute, cat, name, cost.time, labels, Flops(cost.flops), cost.bytes);
  if (c_.options.task_interference && c_.compute->per_kernel_interference() && cost.time.value > 0.0) {
    const KernelInterference f = cost.interference();
    g_.set_interference(t, f.slowed, f.slows);
  }
  if (c_.compute->power() && (cost.energy > 0.0 || cost.tensor_time.value > 0.0)) {
    g_.set_power(t, std::max(cost.energy, 0.0), std::max(cost.tensor_time.value, 0.0));
  }
  if (dep != kNoTask) g_.precede(dep, t);
  last_compute_ = t;
  return t;
}

RankEmitter::TpOps RankEmitter::tp_ops(Piece piece, bool forward) const {
  const Plan& p = *c_.plan;
  TpOps ops;
  if (p.tp == 1) return ops;
  constexpr int out = 0, res = 1;  // matmul output / residual stream (TpOps)
  switch (piece) {
    case Piece::layer:      // attention and MLP: a column-parallel input, a row-parallel output each
    case Piece::moe_layer: {  // attention and the shared experts; the routed experts work on the rank's tokens
      // Hybrid layers (docs/hybrid.md) run one block: a Mamba-2 mixer, attention or an MLP has one pair, an MoE
      // block only its shared experts'.
      const int shared = c_.spec->moe.shared_width() > 0 ? 1 : 0;
      const int n = c_.spec->is_hybrid() ? (piece == Piece::layer ? 1 : shared)
                                         : (piece == Piece::layer ? 2 : 1 + shared);
      if (n == 0) break;
      if (!p.sp) {
        (forward ? ops.all_reduce[out] : ops.all_reduce[res]) = n;
      } else if (forward) {
        ops.all_gather[res] = n;
        ops.reduce_scatter[out] = n;
      } else {
        ops.all_gather[out] = n;
        ops.reduce_scatter[res] = n;
      }
      break;
    }
    case Piece::embedding:  // vocab-parallel: the output is summed (scattered with sp)
      if (forward) (p.sp ? ops.reduce_scatter : ops.all_reduce)[res] = 1;
      else if (p.sp) ops.all_gather[res] = 1;
      break;
    case Piece::head:  // column-parallel over the vocabulary
      if (forward && p.sp) ops.all_gather[res] = 1;
      if (!forward) (p.sp ? ops.reduce_scatter : ops.all_reduce)[res] = 1;
      break;
  }
  return ops;
}

TaskId RankEmitter::tp_comm(const TpOps& ops, bool split, TaskLabels labels, TaskId dep) {
  const std::uint32_t group_index = tp_group_index();
  auto emit = [&](CollOp op, double bytes, TaskCategory cat, const char* name) {
    const TaskId t = g_.add_collective(rank_, kStreamCompute, cat, name, op, tp_group_, Bytes(bytes),
                                       key(kKindTp, group_index, tp_seq_), labels);
    if (dep != kNoTask) g_.precede(dep, t);
    dep = kNoTask;
    last_compute_ = t;
  };
  auto count = [](const std::array<int, 2>& n) { return n[0] + n[1]; };
  auto bytes = [&](const std::array<int, 2>& n) { return n[0] * c_.act_bytes + n[1] * c_.residual_bytes; };
  if (!split) {
    if (count(ops.all_reduce)) emit(CollOp::all_reduce, bytes(ops.all_reduce), TaskCategory::tp_comm, "tp all-reduce");
    if (count(ops.all_gather)) emit(CollOp::all_gather, bytes(ops.all_gather), TaskCategory::sp_comm, "sp all-gather");
    if (count(ops.reduce_scatter)) {
      emit(CollOp::reduce_scatter, bytes(ops.reduce_scatter), TaskCategory::sp_comm, "sp reduce-scatter");
    }
    return last_compute_;
  }
  // One piece: every collective of one kind carries the same tensor kind, so bytes / count each.
  int ar = count(ops.all_reduce), ag = count(ops.all_gather), rs = count(ops.reduce_scatter);
  const double ar_each = ar ? bytes(ops.all_reduce) / ar : 0.0, ag_each = ag ? bytes(ops.all_gather) / ag : 0.0;
  const double rs_each = rs ? bytes(ops.reduce_scatter) / rs : 0.0;
  for (; ar > 0; --ar) emit(CollOp::all_reduce, ar_each, TaskCategory::tp_comm, "tp all-reduce");
  for (; ag > 0 && rs > 0; --ag, --rs) {
    emit(CollOp::all_gather, ag_each, TaskCategory::sp_comm, "sp all-gather");
    emit(CollOp::reduce_scatter, rs_each, TaskCategory::sp_comm, "sp reduce-scatter");
  }
  for (; ag > 0; --ag) emit(CollOp::all_gather, ag_each, TaskCategory::sp_comm, "sp all-gather");
  for (; rs > 0; --rs) emit(CollOp::reduce_scatter, rs_each, TaskCategory::sp_comm, "sp reduce-scatter");
  return last_compute_;
}

TaskId RankEmitter::zero_gather(double params, TaskLabels labels, double expert_params) {
  const std::uint32_t group_index = static_cast<std::uint32_t>(stage_ * c_.plan->tp + tp_rank_);
  TaskId t = g_.add_collective(rank_, kStreamZeroGather, TaskCategory::zero_comm, "zero gather params",
                               CollOp::all_gather, dp_group_, Bytes((params - expert_params) * 2.0),
                               key(kKindGather, group_index, gather_seq_), labels);
  if (uses_.size() >= 2) g_.precede(uses_[uses_.size() - 2], t);
  if (expert_params > 0.0 && c_.plan->edp() > 1) {  // the routed experts, over their own data-parallel group
    t = g_.add_collective(rank_, kStreamZeroGather, TaskCategory::zero_comm, "zero gather expert params",
                          CollOp::all_gather, edp_group_, Bytes(expert_params * 2.0),
                          key(kKindEdpGather, edp_group_index_, edp_gather_seq_), labels);
    if (uses_.size() >= 2) g_.precede(uses_[uses_.size() - 2], t);
  }
  return t;
}

TaskId RankEmitter::copy_task(const char* name, double bytes, TaskLabels labels, TaskId dep) {
  PhaseCost cost;
  const ComputeModel& m = *c_.compute;
  if (c_.grad_matrix_bytes > 0.0) {
    // One kernel per parameter tensor, each moving twice its gradient: the copied gradients hold the stage's
    // vectors (hidden wide, about the launch floor each; its layers' and the final norm's) in proportion to their
    // bytes, and weight matrices of a layer's average size for the rest (the embedding and head count as several).
    const Plan& p = *c_.plan;
    double layers = 0.0;
    for (int v = stage_; v < c_.V; v += p.pp) layers += c_.layout.layers_per_chunk[static_cast<std::size_t>(v)];
    const double stage_vectors = layers * c_.grad_vectors_per_layer + (stage_ == p.pp - 1 ? 1.0 + c_.spec->bias : 0.0);
    const double stage_bytes = c_.stage_params[static_cast<std::size_t>(stage_)] * c_.grad_elem;
    const double grads = bytes / 2.0;
    const double vectors = stage_bytes > 0.0 ? std::round(std::min(1.0, grads / stage_bytes) * stage_vectors) : 0.0;
    const double vector_bytes = 2.0 * c_.grad_vector_bytes;
    const double rest = std::max(0.0, bytes - vectors * vector_bytes);
    const double matrices = std::max(1.0, std::round(rest / (2.0 * c_.grad_matrix_bytes)));
    PhaseCost vec, mat;
    vec.add_kernel(m, m.memory_bound(Bytes(vector_bytes)), 0.0, Bytes(vector_bytes));
    mat.add_kernel(m, m.memory_bound(Bytes(rest / matrices)), 0.0, Bytes(rest / matrices));
    cost = mat * matrices;
    if (vectors > 0.0) cost += vec * vectors;
  } else {
    cost.add_kernel(m, m.memory_bound(Bytes(bytes)), 0.0, Bytes(bytes));
  }
  return compute(TaskCategory::other, name, cost, TaskLabels{-1, -1, labels.stage}, dep);
}

TaskId RankEmitter::grad_sync(double bytes, TaskId dep, TaskLabels labels, bool experts) {
  const Plan& p = *c_.plan;
  const std::uint32_t group_index = static_cast<std::uint32_t>(stage_ * p.tp + tp_rank_);
  const bool ddp = p.zero == 0;
  if (c_.ddp_grad_copies) {  // the bucket's gradients, read and written scaled by 1/world, before its all-reduce
    dep = copy_task("ddp copy grads into bucket", 2.0 * bytes, labels, dep);
    ddp_copied_ += bytes;
  }
  const std::uint64_t k = experts ? key(kKindEdp, edp_group_index_, edp_seq_) : key(kKindDp, group_index, dp_seq_);
  const char* name = experts ? (ddp ? "dp all-reduce expert grads" : "zero reduce-scatter expert grads")
                             : (ddp ? "dp all-reduce grads" : "zero reduce-scatter grads");
  const TaskId t = g_.add_collective(rank_, kStreamGradSync, ddp ? TaskCategory::dp_comm : TaskCategory::zero_comm,
                                     name, ddp ? CollOp::all_reduce : CollOp::reduce_scatter,
                                     experts ? edp_group_ : dp_group_, Bytes(bytes), k, labels);
  if (dep != kNoTask) g_.precede(dep, t);
  last_sync_ = t;
  return t;
}

void RankEmitter::flush_one(bool experts, TaskId ready, TaskLabels labels) {
  double& acc = experts ? expert_acc_ : bucket_acc_;
  if (acc <= 0.0) return;
  const Bucket b{acc, experts};
  if (record_shards_) shard_buckets_.push_back(b);
  switch (experts ? expert_mode_ : mode_) {
    case SyncMode::none: break;
    case SyncMode::overlap: grad_sync(acc, ready, labels, experts); break;
    case SyncMode::after_unit: unit_buckets_.push_back(b); break;
    case SyncMode::after_backward: deferred_buckets_.push_back(b); break;
  }
  acc = 0.0;
}

void RankEmitter::flush_bucket(TaskId ready, TaskLabels labels) {
  flush_one(false, ready, labels);
  flush_one(true, ready, labels);
}

void RankEmitter::grads_ready(double bytes, TaskId ready, TaskLabels labels, double expert_bytes) {
  // Dense gradients fill the dense buckets; the routed experts' fill their own (Megatron-Core keeps expert
  // parameters in separate buffers, reduced over the expert-data-parallel group).
  if (mode_ != SyncMode::none) {
    bucket_acc_ += bytes - expert_bytes;
    if (bucket_acc_ >= cap_) flush_one(false, ready, labels);
  }
  if (expert_mode_ != SyncMode::none && expert_bytes > 0.0) {
    expert_acc_ += expert_bytes;
    if (expert_acc_ >= cap_) flush_one(true, ready, labels);
  }
}

void RankEmitter::forward_unit(const ScheduleStep& s) {
  const Plan& p = *c_.plan;
  const int v = s.chunk * p.pp + stage_;
  const bool first = v == 0, last = v == c_.V - 1;
  const int L = c_.layout.layers_per_chunk[static_cast<std::size_t>(v)];
  const int L0 = c_.first_layer[static_cast<std::size_t>(v)];
  const TaskLabels lab{s.microbatch, -1, static_cast<std::int16_t>(stage_)};
  TaskId dep = first ? kNoTask : pp_recv(s, v, lab);
  if (split_unit(s.microbatch, true)) {
    const bool gathers = (p.zero == 3 && p.dp > 1) || c_.fsdp2;
    // overlap_param_gather: this chunk's parameter buckets, gathered for its first forward.
    const std::vector<TaskId> bucket_gathers = s.microbatch == 0 ? first_forward_gathers(v, lab) : std::vector<TaskId>{};
    int piece_index = 0;
    // FSDP2 gathers a unit's parameters from its pre-forward hook, and a gather waits for the last
    // reduce-scatter issued before it (torch 2.11 FSDPParamGroup.unshard: reduce_scatter_state), so
    // nothing of a micro-batch is gathered before the unit before it and that unit's last reduce-scatter
    // have finished (validation/h200-session8/x2-fsdp: ~2 ms per micro-batch on llama-1b, 2 GPUs).
    std::array<TaskId, 2> boundary{kNoTask, kNoTask};
    if (c_.fsdp2) boundary = {last_compute_, last_sync_};
    // FSDP2's root unit (embedding, final norm, head) is gathered whole before the embedding.
    const double root = (first ? c_.embed_params : 0.0) + (last ? c_.head_params : 0.0);
    auto piece = [&](Piece kind, const PhaseCost& cost, double params, int layer, const char* name,
                     double expert_params = 0.0) {
      TaskLabels l = lab;
      l.layer = static_cast<std::int16_t>(layer);
      if (c_.fsdp2 && kind == Piece::embedding) params = root;
      if (c_.fsdp2 && kind == Piece::head && first) params = 0.0;  // gathered with the embedding
      const TaskId gather = gathers && params > 0.0 ? zero_gather(params, l, expert_params) : kNoTask;
      for (TaskId& b : boundary) {
        if (gather != kNoTask && b != kNoTask) g_.precede(b, gather);
        b = kNoTask;
      }
      const std::size_t index = static_cast<std::size_t>(piece_index++);
      const TaskId bucket = index < bucket_gathers.size() ? bucket_gathers[index] : kNoTask;
      TaskId t;
      if (kind == Piece::layer || kind == Piece::moe_layer) {
        // With the host's synchronisation in the MoE layer, the rows issued after it are a task of their own
        // after the token exchange, the host waiting for the first part (StackRow::after_sync).
        const bool sync = kind == Piece::moe_layer && c_.moe_host_sync;
        const PhaseCost& after = c_.moe_layer.forward_after_sync;
        const bool split = sync && after.kernels > 0;
        t = layer_block(Phase::forward, name, split ? c_.moe_layer.forward_before_sync : cost, 1, tp_ops(kind, true), {},
                        true, l, dep, kind == Piece::moe_layer ? 1 : 0);
        if (sync) g_.mark_host_sync(t);
        if (split) compute(TaskCategory::forward, "moe layer fwd after sync", after, l, kNoTask);
      } else {
        t = compute(TaskCategory::forward, name, cost, l, dep);
        tp_comm(tp_ops(kind, true), true, l, kNoTask);
      }
      if (gather != kNoTask) g_.precede(gather, t);
      if (bucket != kNoTask) g_.precede(bucket, t);
      if (gathers) uses_.push_back(t);
      dep = kNoTask;
    };
    if (first) piece(Piece::embedding, c_.edge.embedding_forward, c_.embed_params, -1, "embedding fwd");
    for (int i = 0; i < L; ++i) {
      if (c_.is_moe_layer(L0 + i)) {
        piece(Piece::moe_layer, c_.moe_layer.forward, c_.moe_layer_params, layer_label(L0 + i), "moe layer fwd",
              c_.moe_expert_params);
      } else {
        piece(Piece::layer, c_.layer.forward, c_.layer_params, layer_label(L0 + i), "layer fwd");
      }
    }
    if (last) piece(Piece::head, c_.edge.head_forward, c_.head_params, -1, "head fwd");
  } else {
    const LayerSpan sp = span(L0, L);
    PhaseCost cost = sp.cost(c_.layer, c_.moe_layer, Phase::forward);
    TpOps edge_ops;
    if (first) {
      cost += c_.edge.embedding_forward;
      edge_ops += tp_ops(Piece::embedding, true);
    }
    if (last) {
      cost += c_.edge.head_forward;
      edge_ops += tp_ops(Piece::head, true);
    }
    layer_block(Phase::forward, "forward", cost, L, span_ops(sp, true), edge_ops, false, lab, dep, sp.moe);
  }
  if (!last) pp_send(s, v, lab);
}

void RankEmitter::backward_unit(const ScheduleStep& s) {
  const Plan& p = *c_.plan;
  const int v = s.chunk * p.pp + stage_;
  const bool first = v == 0, last = v == c_.V - 1;
  const int L = c_.layout.layers_per_chunk[static_cast<std::size_t>(v)];
  const int L0 = c_.first_layer[static_cast<std::size_t>(v)];
  const TaskLabels lab{s.microbatch, -1, static_cast<std::int16_t>(stage_)};
  mode_ = sync_mode(s.microbatch);
  expert_mode_ = c_.spec->is_moe() ? sync_mode(s.microbatch, p.edp()) : SyncMode::none;
  const bool syncs = mode_ != SyncMode::none || expert_mode_ != SyncMode::none;
  const bool recompute = p.recompute == Recompute::full || c_.layer.recompute.kernels > 0 ||
                         c_.moe_layer.recompute.kernels > 0;
  // ZeRO-1/2 gather the updated shards after the step; FSDP2 (ZeRO-2 here) at the next forward instead,
  // Megatron's distributed optimizer too with overlap_param_gather.
  record_shards_ = (p.zero == 1 || (p.zero == 2 && !c_.fsdp2)) && s.microbatch == c_.m - 1;
  bucket_acc_ = 0.0;
  expert_acc_ = 0.0;
  cap_ = c_.bucket_cap(v);
  TaskId dep = last ? kNoTask : pp_recv(s, v, lab);
  const double g = c_.grad_elem;
  if (split_unit(s.microbatch, false)) {
    const bool zero3 = p.zero == 3 && p.dp > 1;
    // FSDP2: the root unit is not resharded after forward (no gather here) and reduce-scatters its
    // gradients once, after its last piece; every other unit right after its own backward.
    double root_grads = 0.0;
    auto piece = [&](Piece kind, const LayerCost* layer, const PhaseCost& cost, double params, int layer_index,
                     const char* name, double expert_params = 0.0) {
      TaskLabels l = lab;
      l.layer = static_cast<std::int16_t>(layer_index);
      const bool is_layer = layer != nullptr;
      const int moe = kind == Piece::moe_layer ? 1 : 0;
      const bool root = c_.fsdp2 && !is_layer;
      const TaskId gather = zero3 && !root ? zero_gather(params, l, expert_params) : kNoTask;
      if (is_layer && recompute) {
        const TaskId r = layer_block(Phase::recompute, "layer recompute", layer->recompute, 1,
                                     p.recompute == Recompute::full ? tp_ops(kind, true) : TpOps{}, {}, true, l, dep,
                                     p.recompute == Recompute::full ? moe : 0);
        if (gather != kNoTask) g_.precede(gather, r);
        if (moe > 0 && p.recompute == Recompute::full && c_.moe_host_sync) g_.mark_host_sync(r);
        dep = kNoTask;
      }
      TaskId t;
      if (is_layer) {
        t = layer_block(Phase::backward, name, cost, 1, tp_ops(kind, false), {}, true, l, dep, moe);
      } else {
        t = compute(TaskCategory::backward, name, cost, l, dep);
        tp_comm(tp_ops(kind, false), true, l, kNoTask);
      }
      if (gather != kNoTask) g_.precede(gather, t);
      if (zero3) uses_.push_back(t);
      dep = kNoTask;
      if (root) {
        root_grads += params * g;
        return;
      }
      grads_ready(params * g, t, l, expert_params * g);
      if (c_.fsdp2) flush_bucket(t, l);
    };
    if (last) piece(Piece::head, nullptr, c_.edge.head_backward, c_.head_params, -1, "head bwd");
    for (int i = L - 1; i >= 0; --i) {
      if (c_.is_moe_layer(L0 + i)) {
        piece(Piece::moe_layer, &c_.moe_layer, c_.moe_layer.backward, c_.moe_layer_params, layer_label(L0 + i),
              "moe layer bwd", c_.moe_expert_params);
      } else {
        piece(Piece::layer, &c_.layer, c_.layer.backward, c_.layer_params, layer_label(L0 + i), "layer bwd");
      }
    }
    if (first) piece(Piece::embedding, nullptr, c_.edge.embedding_backward, c_.embed_params, -1, "embedding bwd");
    if (root_grads > 0.0) grads_ready(root_grads, last_compute_, lab);
  } else {
    const LayerSpan sp = span(L0, L);
    if (recompute) {
      layer_block(Phase::recompute, "recompute", sp.cost(c_.layer, c_.moe_layer, Phase::recompute), L,
                  p.recompute == Recompute::full ? span_ops(sp, true) : TpOps{}, {}, false, lab, dep,
                  p.recompute == Recompute::full ? sp.moe : 0);
      dep = kNoTask;
    }
    PhaseCost cost = sp.cost(c_.layer, c_.moe_layer, Phase::backward);
    TpOps edge_ops;
    if (first) {
      cost += c_.edge.embedding_backward;
      edge_ops += tp_ops(Piece::embedding, false);
    }
    if (last) {
      cost += c_.edge.head_backward;
      edge_ops += tp_ops(Piece::head, false);
    }
    const TaskId t =
        layer_block(Phase::backward, "backward", cost, L, span_ops(sp, false), edge_ops, false, lab, dep, sp.moe);
    // Merged units sync only after the unit or the whole backward: feed the pieces in backward order
    // so that the buckets close at the same layer boundaries as in split units.
    if (syncs) {
      if (last) grads_ready(c_.head_params * g, t, lab);
      for (int i = L - 1; i >= 0; --i) {
        if (c_.is_moe_layer(L0 + i)) {
          grads_ready(c_.moe_layer_params * g, t, lab, c_.moe_expert_params * g);
        } else {
          grads_ready(c_.layer_params * g, t, lab);
        }
      }
      if (first) grads_ready(c_.embed_params * g, t, lab);
    }
  }
  flush_bucket(last_compute_, lab);
  for (const Bucket& b : unit_buckets_) grad_sync(b.bytes, last_compute_, lab, b.experts);
  unit_buckets_.clear();
  if (!first) pp_send(s, v, lab);
}

TaskId RankEmitter::add_pp_recv(const ScheduleStep& s, int v, int stream, TaskLabels lab) {
  return s.forward ? g_.add_recv(rank_, stream, TaskCategory::pp_comm, "pp recv activations", prev_, Bytes(c_.pp_bytes),
                                 tag(v, true), lab)
                   : g_.add_recv(rank_, stream, TaskCategory::pp_comm, "pp recv gradients", next_, Bytes(c_.pp_bytes),
                                 tag(v, false), lab);
}

void RankEmitter::add_pp_send(const ScheduleStep& s, int v, int stream, TaskId after, TaskLabels lab) {
  const TaskId send = s.forward ? g_.add_send(rank_, stream, TaskCategory::pp_comm, "pp send activations", next_,
                                              Bytes(c_.pp_bytes), tag(v + 1, true), lab)
                                : g_.add_send(rank_, stream, TaskCategory::pp_comm, "pp send gradients", prev_,
                                              Bytes(c_.pp_bytes), tag(v - 1, false), lab);
  g_.precede(after, send);
}

TaskId RankEmitter::pp_recv(const ScheduleStep& s, int v, TaskLabels lab) {
  if (!c_.torch_program.empty()) {
    const auto it = placed_recv_.find({s.forward, s.chunk, s.microbatch});
    assert(it != placed_recv_.end() && "torch program: a unit runs before its receive is placed");
    return it->second;
  }
  return add_pp_recv(s, v, s.forward ? kStreamRecvFwd : kStreamRecvBwd, lab);
}

void RankEmitter::pp_send(const ScheduleStep& s, int v, TaskLabels lab) {
  if (!c_.torch_program.empty()) {
    unit_end_[{s.forward, s.chunk, s.microbatch}] = last_compute_;
    return;
  }
  add_pp_send(s, v, s.forward ? kStreamSendFwd : kStreamSendBwd, last_compute_, lab);
}

// Every send and receive of the rank on one stream (kStreamSendFwd), in the program's order: PyTorch
// posts them to the process group's one NCCL communicator, whose stream runs them in posting order.
void RankEmitter::emit_torch_program() {
  const Plan& p = *c_.plan;
  for (const TorchPipelineAction& a : c_.torch_program[static_cast<std::size_t>(stage_)]) {
    const ScheduleStep& s = a.step;
    const int v = s.chunk * p.pp + stage_;
    const TaskLabels lab{s.microbatch, -1, static_cast<std::int16_t>(stage_)};
    switch (a.kind) {
      case TorchPipelineAction::Kind::compute:
        if (s.forward) {
          forward_unit(s);
        } else {
          backward_unit(s);
        }
        break;
      case TorchPipelineAction::Kind::send:
        add_pp_send(s, v, kStreamSendFwd, unit_end_.at({s.forward, s.chunk, s.microbatch}), lab);
        break;
      case TorchPipelineAction::Kind::recv:
        placed_recv_[{s.forward, s.chunk, s.microbatch}] = add_pp_recv(s, v, kStreamSendFwd, lab);
        break;
    }
  }
}

void RankEmitter::emit() {
  const Plan& p = *c_.plan;
  if (!c_.torch_program.empty()) {
    emit_torch_program();
  } else {
    for (const ScheduleStep& s : c_.order[static_cast<std::size_t>(stage_)]) {
      if (s.forward) {
        forward_unit(s);
      } else {
        backward_unit(s);
      }
    }
  }
  const TaskId final_backward = last_compute_;
  const TaskLabels lab{-1, -1, static_cast<std::int16_t>(stage_)};
  for (const Bucket& b : deferred_buckets_) grad_sync(b.bytes, final_backward, lab, b.experts);
  if (c_.spec->tied_embeddings && c_.tie_bytes > 0.0 && p.pp > 1 && (stage_ == 0 || stage_ == p.pp - 1)) {
    const int ends[2] = {plan_rank(p, 0, dp_rank_, tp_rank_, cp_rank_), plan_rank(p, p.pp - 1, dp_rank_, tp_rank_, cp_rank_)};
    std::uint32_t seq = 0;
    const TaskId t = g_.add_collective(rank_, kStreamGradSync, TaskCategory::other, "tied embedding all-reduce",
                                       CollOp::all_reduce, std::span<const int>(ends, 2), Bytes(c_.tie_bytes),
                                       key(kKindTie, static_cast<std::uint32_t>((dp_rank_ * p.cp + cp_rank_) * p.tp + tp_rank_), seq), lab);
    g_.precede(final_backward, t);
    last_sync_ = t;
  }
  // The rank's optimizer updates its shard: dense parameters over dp x cp, routed experts over their own
  // data-parallel group (edp).
  const double shard = (p.zero >= 1 && p.dp * p.cp > 1) ? static_cast<double>(p.dp * p.cp) : 1.0;
  const double expert_shard = (p.zero >= 1 && p.edp() > 1) ? static_cast<double>(p.edp()) : 1.0;
  const double experts = c_.stage_expert_params[static_cast<std::size_t>(stage_)];
  const double updated = experts > 0.0
                             ? (c_.stage_params[static_cast<std::size_t>(stage_)] - experts) / shard + experts / expert_shard
                             : c_.stage_params[static_cast<std::size_t>(stage_)] / shard;
  const PhaseCost opt = optimizer_cost(updated, *c_.spec, p, *c_.compute, c_.options.costs);
  // DDP copies the reduced buckets back into the gradients after the last all-reduce, before the step.
  const TaskId grads = ddp_copied_ > 0.0 ? copy_task("ddp copy grads from buckets", 2.0 * ddp_copied_, lab, last_sync_)
                                         : last_sync_;
  const TaskId step = compute(TaskCategory::optimizer, "optimizer step", opt, lab, grads);
  if ((p.zero == 1 || p.zero == 2) && c_.gather_buckets.empty()) {
    const std::uint32_t group_index = static_cast<std::uint32_t>(stage_ * p.tp + tp_rank_);
    TaskId dep = step;
    for (const Bucket& b : shard_buckets_) {
      if (b.experts ? p.edp() == 1 : p.dp * p.cp == 1) continue;
      const TaskId t = g_.add_collective(
          rank_, kStreamGradSync, TaskCategory::zero_comm, b.experts ? "zero all-gather expert params" : "zero all-gather params",
          CollOp::all_gather, b.experts ? edp_group_ : dp_group_, Bytes(b.bytes * c_.param_gather_elem / c_.grad_elem),
          b.experts ? key(kKindEdp, edp_group_index_, edp_seq_) : key(kKindDp, group_index, dp_seq_), lab);
      if (dep != kNoTask) g_.precede(dep, t);
      dep = kNoTask;
    }
  }
}

}  // namespace detail

}  // namespace scalescope::models
