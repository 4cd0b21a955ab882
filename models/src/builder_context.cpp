// build_task_graph: checks the plan, prices the pieces once, and emits every (or one representative
// pipeline of) rank(s) into a task graph.
#include <algorithm>
#include <cmath>

#include "builder_impl.hpp"
#include "scalescope/models/builder.hpp"
#include "scalescope/models/moe_costs.hpp"
#include "scalescope/models/pipeline_layout.hpp"
#include "scalescope/models/plan_costs.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {

namespace {

/// Megatron-Core's parameter buckets of every virtual stage in forward order (BuildContext::GatherBucket):
/// the pieces are filled in backward order (head, layers last to first, embedding) and a bucket closes at
/// a piece boundary once its gradient bytes reach the chunk's cap, as the gradient sync closes them.
std::vector<std::vector<detail::BuildContext::GatherBucket>> gather_buckets(const detail::BuildContext& c) {
  std::vector<std::vector<detail::BuildContext::GatherBucket>> out;
  for (int v = 0; v < c.V; ++v) {
    const bool first = v == 0, last = v == c.V - 1;
    const int pieces = (first ? 1 : 0) + c.layout.layers_per_chunk[static_cast<std::size_t>(v)] + (last ? 1 : 0);
    std::vector<detail::BuildContext::GatherBucket> backward_order;
    double acc = 0.0;
    double experts = 0.0;
    const int first_layer = c.first_layer[static_cast<std::size_t>(v)] - (first ? 1 : 0);  // layer of piece i
    for (int i = pieces - 1; i >= 0; --i) {
      const bool moe = !(last && i == pieces - 1) && !(first && i == 0) && c.is_moe_layer(first_layer + i);
      acc += last && i == pieces - 1 ? c.head_params
             : first && i == 0        ? c.embed_params
             : moe                    ? c.moe_layer_params
                                      : c.layer_params;
      if (moe) experts += c.moe_expert_params;
      if (acc * c.grad_elem >= c.bucket_cap(v) || i == 0) {
        backward_order.push_back({acc, experts, i});
        acc = 0.0;
        experts = 0.0;
      }
    }
    out.emplace_back(backward_order.rbegin(), backward_order.rend());
  }
  return out;
}

}  // namespace

Expected<TaskGraph> build_task_graph(const ModelSpec& spec_in, const Plan& plan, const Cluster& cluster,
                                     const ComputeModel& compute, const BuildOptions& options) {
  const ModelSpec spec = with_plan_seq(spec_in, plan);
  if (auto check = validate(plan, spec, cluster.num_gpus()); !check) return check.error();
  if (plan.fp8() && !cluster.gpu_spec().peak.fp8) {
    return input_error("plan", "precision", "precision=fp8 needs FP8 tensor cores; the cluster's GPU '" +
                                                cluster.gpu_spec().model + "' has no fp8 peak");
  }

  detail::BuildContext c;
  c.spec = &spec;
  c.plan = &plan;
  c.compute = &compute;
  c.options = options;
  c.m = plan.num_microbatches();
  c.V = plan.pp * plan.vpp;
  c.layout = layout_of(spec, plan);
  int first = 0;
  for (int layers : c.layout.layers_per_chunk) {
    c.first_layer.push_back(first);
    first += layers;
  }
  PlanPieceCosts pieces = plan_piece_costs(spec, plan, compute, options.costs);
  c.layer = std::move(pieces.layer);
  c.moe_layer = std::move(pieces.moe_layer);
  c.edge = std::move(pieces.edge);
  c.cp_blocks = std::move(pieces.cp.blocks);
  c.cp_exchange = pieces.cp.exchange;
  c.act_bytes = static_cast<double>(plan.mbs) * (spec.seq_len / plan.cp) * spec.hidden * 2.0;
  // The stack says how wide its residual stream is (eager PyTorch under autocast keeps it fp32;
  // validation/harness/parallel.py): PP sends it, and the TP collectives of the column-parallel inputs and the
  // embedding output carry it (torch.profiler on H200: the backward all-reduces of TP=2 llama-1b are f32).
  const StackProfile& stack = compute.stack_for(spec, plan);
  const std::vector<double> sym = stack.bind(spec, plan, options.costs.flash_attention, options.costs.dropout,
                                             options.costs.vocab_multiple);
  const double residual = stack.residual_bytes.eval(sym);
  c.residual_bytes = c.act_bytes * (std::isfinite(residual) && residual > 0.0 ? residual : 2.0) / 2.0;
  c.pp_bytes = plan.sp ? c.residual_bytes / plan.tp : c.residual_bytes;
  c.grad_elem = grad_bytes_per_element(plan);
  c.fsdp2 = stack.fsdp2.eval(sym) != 0.0;
  c.moe_host_sync = spec.is_moe() && !stack.moe_host_sync.empty() && stack.moe_host_sync.eval(sym) != 0.0;
  // DDP's reducer runs for zero=0 and under PyTorch's ZeroRedundancyOptimizer (zero=1 without Megatron-Core's
  // distributed optimizer), which steps a shard of the parameters DDP reduced.
  c.ddp_grad_copies = (plan.zero == 0 || (plan.zero == 1 && !stack.distributed_optimizer)) &&
                      stack.ddp_grad_copies.eval(sym) != 0.0;
  const int vm = options.costs.vocab_multiple;
  const StageParams first_stage = params_per_tp_rank(spec, c.layout, 0, plan.tp, vm, plan.ep, plan.etp);
  const StageParams last_stage = params_per_tp_rank(spec, c.layout, plan.pp - 1, plan.tp, vm, plan.ep, plan.etp);
  // MoE and hybrid models: a non-MoE layer (of a hybrid model, the mean of its Mamba-2, attention and MLP layers).
  c.layer_params =
      static_cast<double>(spec.is_moe() || spec.is_hybrid() ? first_stage.dense_layer : first_stage.largest_layer);
  // A layer's T parameter tensors are M weight matrices and V vectors: 2 norm weights, 2 norm biases with
  // layernorm and biases, and one bias per matrix with biases: T = M + 2 + 2 [layernorm and bias] + [bias] M.
  const double tensors = stack.grad_tensors_per_layer.eval(sym);
  if (std::isfinite(tensors) && tensors >= 1.0) {
    const double bias = spec.bias ? 1.0 : 0.0, ln_bias = spec.bias && spec.norm == NormKind::layernorm ? 2.0 : 0.0;
    const double matrices = std::max(1.0, std::round((tensors - 2.0 - ln_bias) / (1.0 + bias)));
    c.grad_vectors_per_layer = std::max(0.0, tensors - matrices);
    c.grad_vector_bytes = spec.hidden * c.grad_elem;
    const double layer_grad_bytes = c.layer_params * c.grad_elem;
    c.grad_matrix_bytes = std::max(c.grad_vector_bytes,
                                   (layer_grad_bytes - c.grad_vectors_per_layer * c.grad_vector_bytes) / matrices);
  }
  c.moe_layer_params = static_cast<double>(first_stage.moe_layer);
  c.moe_expert_params = static_cast<double>(first_stage.moe_layer_experts);
  c.embed_params = static_cast<double>(first_stage.embedding);
  c.head_params = static_cast<double>(last_stage.head);
  for (int s = 0; s < plan.pp; ++s) {
    const StageParams st = params_per_tp_rank(spec, c.layout, s, plan.tp, vm, plan.ep, plan.etp);
    c.stage_params.push_back(static_cast<double>(st.total()));
    c.stage_expert_params.push_back(static_cast<double>(st.experts));
  }
  if (spec.is_moe()) {
    // Per MoE layer and pass (builder.hpp): the rank's Tr tokens (its sequence shard of mbs x seq / cp), top_k
    // copies each in bf16, the busiest rank's share (imbalance) setting the exchange's pace.
    const double tr = static_cast<double>(plan.mbs) * (spec.seq_len / plan.cp) / (plan.sp ? plan.tp : 1);
    const double token = tr * moe_imbalance(spec, plan) * spec.hidden * 2.0;
    c.ep_bytes = plan.moe_dispatcher == MoeDispatcher::allgather
                     ? plan.ep * tr * spec.hidden * 2.0
                     : token * moe_dispatch_copies(spec, plan, cluster.gpus_per_node());
    c.etp_bytes = plan.etp * token * spec.moe.top_k;
  }
  c.tie_bytes = static_cast<double>(padded_vocab(spec.vocab, plan.tp, vm) / plan.tp) * spec.hidden * c.grad_elem;
  if (plan.lora_rank > 0) {
    // LoRA: only the adapters train. Their gradients fill the buckets, the optimizer steps them, the distributed
    // optimizer gathers them; the frozen embedding, head and base weights have none (validate(): dense models,
    // zero <= 2, so nothing gathers frozen weights either).
    c.layer_params = lora_params_per_layer(spec, plan);
    c.embed_params = c.head_params = c.moe_layer_params = c.moe_expert_params = c.tie_bytes = 0.0;
    for (int s = 0; s < plan.pp; ++s) {
      c.stage_params[static_cast<std::size_t>(s)] = c.layer_params * c.layout.layers_on_stage(s);
      c.stage_expert_params[static_cast<std::size_t>(s)] = 0.0;
    }
    c.grad_matrix_bytes = 0.0;  // one copy kernel per bucket (per-tensor copies price base-weight tensors)
  }
  c.bucket_bytes = plan.bucket_MB * 1024.0 * 1024.0;
  c.dist_opt = plan.zero == 1 && stack.distributed_optimizer;
  c.param_gather_elem = param_gather_bytes_per_element(plan);
  if (c.dist_opt && plan.overlap_param_gather && plan.dp * plan.cp > 1) c.gather_buckets = gather_buckets(c);
  for (int s = 0; s < plan.pp; ++s) c.order.push_back(pipeline_order(plan.schedule, plan.pp, plan.vpp, s, c.m));
  // A stack that pipelines with torch.distributed.pipelining (validation/harness) runs its interleaved program.
  // validate() has made m a multiple of pp, which is what torch needs too.
  if (stack.torch_pipelining && plan.schedule == Schedule::interleaved && plan.pp > 1) {
    c.torch_program = torch_interleaved_program(plan.pp, plan.vpp, c.m);
  }

  TaskGraph g;
  g.set_stream_name(kStreamCompute, "compute");
  g.set_stream_name(kStreamGradSync, "grad-sync");
  g.set_stream_name(kStreamSendFwd, "pp-send-fwd");
  if (!c.torch_program.empty()) g.set_stream_name(kStreamSendFwd, "pp-p2p");  // every PP transfer (torch program)
  g.set_stream_name(kStreamRecvFwd, "pp-recv-fwd");
  g.set_stream_name(kStreamSendBwd, "pp-send-bwd");
  g.set_stream_name(kStreamRecvBwd, "pp-recv-bwd");
  g.set_stream_name(kStreamZeroGather, "zero-gather");
  if (plan.cp > 1) g.set_stream_name(kStreamCp, "cp-exchange");
  if (plan.tp_comm_overlap) g.set_stream_name(kStreamTpOverlap, "tp-overlap");
  if (plan.moe_a2a_overlap && spec.is_moe()) g.set_stream_name(kStreamEp, "ep-exchange");
  const int dp_count = options.symmetric ? 1 : plan.dp;
  const int tp_count = options.symmetric || options.tp_classes ? 1 : plan.tp;
  const int cp_count = options.symmetric ? 1 : plan.cp;
  // Rough size: per unit a compute task, a few collectives and a transfer.
  const std::size_t per_rank = c.order.empty() ? 0 : c.order[0].size() * 5 + 64;
  const std::size_t ranks = static_cast<std::size_t>(plan.pp) * dp_count * tp_count * cp_count;
  g.reserve(per_rank * ranks, per_rank * ranks);
  for (int s = 0; s < plan.pp; ++s) {
    for (int d = 0; d < dp_count; ++d) {
      for (int t = 0; t < tp_count; ++t) {
        for (int k = 0; k < cp_count; ++k) detail::RankEmitter(c, g, s, d, t, k).emit();
      }
    }
  }
  return g;
}

}  // namespace scalescope::models
