// RankEmitter pieces of today's dense training stacks: layer blocks with TP communication overlap,
// context-parallel attention with its exchange, and the distributed optimizer's parameter all-gathers in
// the next forward (what is emitted and why: builder.hpp).
#include "builder_impl.hpp"

namespace scalescope::models::detail {

TaskId RankEmitter::layer_block(Phase phase, const char* name, const PhaseCost& cost, int layers, const TpOps& layer_ops,
                                const TpOps& edge_ops, bool split, TaskLabels labels, TaskId dep, int moe_layers) {
  const Plan& p = *c_.plan;
  // MoE token exchange beside the block (moe_a2a_overlap), from when its compute can start; else after it.
  std::vector<TaskId> ep_beside;
  if (moe_layers > 0 && p.moe_a2a_overlap) {
    const TaskId before = last_compute_;
    ep_beside = ep_comm(phase, moe_layers, true, before, labels);
    if (dep != kNoTask) {
      for (TaskId t : ep_beside) g_.precede(dep, t);
    }
  }
  const auto finish_ep = [&] {
    if (moe_layers <= 0) return;
    if (!p.moe_a2a_overlap) {
      ep_comm(phase, moe_layers, false, kNoTask, labels);
      return;
    }
    if (ep_beside.empty()) return;
    const TaskId join = g_.add_delay(rank_, kStreamCompute, TaskCategory::other, "ep overlap join", Seconds(0.0), labels);
    for (TaskId t : ep_beside) g_.precede(t, join);
    last_compute_ = join;
  };
  const TaskCategory cat = phase == Phase::forward    ? TaskCategory::forward
                           : phase == Phase::backward ? TaskCategory::backward
                                                      : TaskCategory::recompute;
  auto bytes = [&](const std::array<int, 2>& n) { return n[0] * c_.act_bytes + n[1] * c_.residual_bytes; };
  const bool overlap = p.tp_comm_overlap && p.tp > 1;
  std::vector<TaskId> beside;
  if (overlap) {
    // The layers' all-gathers and reduce-scatters beside their GEMMs, from when the compute can start.
    const TaskId before = last_compute_;
    auto side = [&](CollOp op, const std::array<int, 2>& n, const char* what) {
      if (bytes(n) <= 0.0) return;
      const TaskId t = g_.add_collective(rank_, kStreamTpOverlap, TaskCategory::sp_comm, what, op, tp_group_,
                                         Bytes(bytes(n)), key(kKindTp, tp_group_index(), tp_seq_), labels);
      if (before != kNoTask) g_.precede(before, t);
      if (dep != kNoTask) g_.precede(dep, t);
      beside.push_back(t);
    };
    side(CollOp::all_gather, layer_ops.all_gather, "sp all-gather (overlapped)");
    side(CollOp::reduce_scatter, layer_ops.reduce_scatter, "sp reduce-scatter (overlapped)");
  }
  const TaskId t = compute(cat, name, cost, labels, dep);
  cp_attention(phase, layers, labels);
  if (!overlap) {
    TpOps ops = layer_ops;
    ops += edge_ops;
    tp_comm(ops, split, labels, kNoTask);
    finish_ep();
    return t;
  }
  // The last reduce-scatter chunk leaves after the last GEMM chunk: 1/tp of the bytes, exposed.
  const double tail = bytes(layer_ops.reduce_scatter) / p.tp;
  TaskId join = kNoTask;
  if (tail > 0.0) {
    join = g_.add_collective(rank_, kStreamCompute, TaskCategory::sp_comm, "sp reduce-scatter (last chunk)",
                             CollOp::reduce_scatter, tp_group_, Bytes(tail), key(kKindTp, tp_group_index(), tp_seq_), labels);
    g_.precede(last_compute_, join);
  } else if (!beside.empty()) {
    join = g_.add_delay(rank_, kStreamCompute, cat, "tp overlap join", Seconds(0.0), labels);
  }
  for (TaskId b : beside) g_.precede(b, join);
  if (join != kNoTask) last_compute_ = join;
  TpOps rest = edge_ops;  // embedding / head collectives and any all-reduce stay on the compute stream
  rest.all_reduce[0] += layer_ops.all_reduce[0];
  rest.all_reduce[1] += layer_ops.all_reduce[1];
  tp_comm(rest, split, labels, kNoTask);
  finish_ep();
  return t;
}

std::vector<TaskId> RankEmitter::ep_comm(Phase phase, int moe_layers, bool beside, TaskId before, TaskLabels labels) {
  const Plan& p = *c_.plan;
  std::vector<TaskId> out;
  if (moe_layers <= 0) return out;
  (void)phase;  // every pass moves the same tensors: the backward the gradients of the forward's exchanges
  const int stream = beside ? kStreamEp : kStreamCompute;
  TaskId dep = before;
  const double n = moe_layers;
  auto emit = [&](CollOp op, GroupId group, double bytes, std::uint64_t k, const char* what) {
    const TaskId t = g_.add_collective(rank_, stream, TaskCategory::ep_comm, what, op, group, Bytes(bytes * n), k, labels);
    if (dep != kNoTask) g_.precede(dep, t);
    dep = kNoTask;
    if (!beside) last_compute_ = t;
    out.push_back(t);
  };
  const bool a2a = p.moe_dispatcher != MoeDispatcher::allgather;  // alltoall and flex exchange all-to-all
  // Dispatch: tokens to the EP ranks of their experts, then (etp > 1) gathered over the expert-TP ranks;
  // combine: the reverse. Merged over the block's MoE layers like its TP collectives (builder.hpp).
  if (p.ep > 1) {
    emit(a2a ? CollOp::alltoall : CollOp::all_gather, ep_group_, c_.ep_bytes, key(kKindEp, ep_group_index_, ep_seq_),
         a2a ? "ep dispatch all-to-all" : "ep dispatch all-gather");
  }
  if (p.etp > 1) {
    emit(CollOp::all_gather, etp_group_, c_.etp_bytes, key(kKindEtp, etp_group_index_, etp_seq_), "etp all-gather");
    emit(CollOp::reduce_scatter, etp_group_, c_.etp_bytes, key(kKindEtp, etp_group_index_, etp_seq_),
         "etp reduce-scatter");
  }
  if (p.ep > 1) {
    emit(a2a ? CollOp::alltoall : CollOp::reduce_scatter, ep_group_, c_.ep_bytes, key(kKindEp, ep_group_index_, ep_seq_),
         a2a ? "ep combine all-to-all" : "ep combine reduce-scatter");
  }
  return out;
}

void RankEmitter::cp_attention(Phase phase, int layers, TaskLabels labels) {
  const Plan& p = *c_.plan;
  const PhaseCost& blocks = phase == Phase::forward    ? c_.cp_blocks.forward
                            : phase == Phase::backward ? c_.cp_blocks.backward
                                                       : c_.cp_blocks.recompute;
  if (p.cp <= 1 || layers <= 0 || blocks.kernels == 0) return;
  const TaskCategory cat = phase == Phase::forward    ? TaskCategory::forward
                           : phase == Phase::backward ? TaskCategory::backward
                                                      : TaskCategory::recompute;
  const CpExchange& ex = c_.cp_exchange;
  const bool fwd = phase != Phase::backward;
  const CollOp op = fwd ? ex.forward_op : ex.backward_op;
  const Bytes bytes = (fwd ? ex.forward_bytes : ex.backward_bytes) * static_cast<double>(layers);
  const auto group_index = static_cast<std::uint32_t>((stage_ * p.dp + dp_rank_) * p.tp + tp_rank_);
  const char* what = p.cp_comm == CpComm::p2p ? "cp k/v ring" : p.cp_comm == CpComm::a2a ? "cp all-to-all" : "cp k/v all-gather";
  if (!ex.overlapped) {
    const TaskId x = g_.add_collective(rank_, kStreamCompute, TaskCategory::cp_comm, what, op, cp_group_, bytes,
                                       key(kKindCp, group_index, cp_seq_), labels);
    if (last_compute_ != kNoTask) g_.precede(last_compute_, x);
    last_compute_ = x;
    compute(cat, "cp attention", blocks * layers, labels, kNoTask);
    return;
  }
  const TaskId before = last_compute_;
  const TaskId x = g_.add_collective(rank_, kStreamCp, TaskCategory::cp_comm, what, op, cp_group_, bytes,
                                     key(kKindCp, group_index, cp_seq_), labels);
  if (before != kNoTask) g_.precede(before, x);
  compute(cat, "cp attention", blocks * layers, labels, kNoTask);
  const TaskId join = g_.add_delay(rank_, kStreamCompute, cat, "cp join", Seconds(0.0), labels);
  g_.precede(x, join);
  last_compute_ = join;
}

std::vector<TaskId> RankEmitter::first_forward_gathers(int v, TaskLabels labels) {
  std::vector<TaskId> by_piece;
  if (c_.gather_buckets.empty()) return by_piece;
  const auto group_index = static_cast<std::uint32_t>(stage_ * c_.plan->tp + tp_rank_);
  for (const BuildContext::GatherBucket& b : c_.gather_buckets[static_cast<std::size_t>(v)]) {
    TaskId t = g_.add_collective(rank_, kStreamZeroGather, TaskCategory::zero_comm, "zero all-gather params",
                                 CollOp::all_gather, dp_group_, Bytes((b.params - b.expert_params) * c_.param_gather_elem),
                                 key(kKindGather, group_index, gather_seq_), labels);
    if (b.expert_params > 0.0 && c_.plan->edp() > 1) {
      t = g_.add_collective(rank_, kStreamZeroGather, TaskCategory::zero_comm, "zero all-gather expert params",
                            CollOp::all_gather, edp_group_, Bytes(b.expert_params * c_.param_gather_elem),
                            key(kKindEdpGather, edp_group_index_, edp_gather_seq_), labels);
    }
    if (by_piece.size() <= static_cast<std::size_t>(b.first_piece)) by_piece.resize(static_cast<std::size_t>(b.first_piece) + 1, kNoTask);
    by_piece[static_cast<std::size_t>(b.first_piece)] = t;
  }
  return by_piece;
}

}  // namespace scalescope::models::detail
