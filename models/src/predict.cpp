// predict(): build + simulate + summarise one iteration (formulas in predict.hpp).
#include "scalescope/models/predict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/fp8_costs.hpp"
#include "scalescope/models/pipeline_layout.hpp"
#include "scalescope/models/plan_costs.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "scalescope/sim/host_dispatch.hpp"

namespace scalescope::models {

bool rail_classes_exact(const Plan& plan, const Cluster& cluster, bool analytical_intra_node) {
  // Expert parallelism exchanges tokens across TP ranks (the EP group spans them): the absent peers' traffic
  // would not stay on their own rails. Context parallelism does too unless TP fills the node: then the CP peers of
  // a GPU are the GPUs of its local index on other nodes (rank order tp-cp-dp-pp), on its own rail; with a smaller
  // TP they sit on other rails of the same node, and the PCIe / CPU paths between rails are shared.
  const bool cp_on_rail = plan.cp == 1 || plan.tp == cluster.gpus_per_node();
  return analytical_intra_node && plan.tp > 1 && cp_on_rail && plan.ep * plan.etp == 1 && cluster.rail_symmetric() &&
         cluster.gpus_per_node() % plan.tp == 0;
}

double task_graph_units(const ModelSpec& model, const Plan& plan, const BuildOptions& bo) {
  // The rail classes simulate TP rank 0 for the others (builder_context: tp_count).
  const double tp_simulated = bo.tp_classes ? 1.0 : static_cast<double>(plan.tp);
  return static_cast<double>(plan.num_microbatches()) * (bo.per_layer_tasks ? model.layers : plan.pp) *
         (bo.symmetric ? 1.0 : tp_simulated * plan.dp * plan.cp);
}

namespace {

/// A note when a rank's attention runs over more than twice the longest measured row's tokens: the rate is then held
/// at the nearest rows', and on an H200 FlashAttention-2 and cuDNN ran 1.2-1.6x that rate at 8K-32K tokens against
/// a grid of <= 4,096 (validation/attention/longseq24).
void note_attention_beyond_rows(PlanCheck& check, const ModelSpec& model, const Plan& plan,
                                const ComputeModel& compute) {
  const std::int64_t longest = compute.longest_attention_seq();
  const std::int64_t rank_seq = model.seq_len / std::max(1, plan.cp);
  if (longest <= 0 || plan.packed_doc_tokens > 0 || rank_seq <= 2 * longest) return;
  check.notes.push_back(
      "attention over " + std::to_string(rank_seq) + " tokens per rank is priced from measured rows of at most " +
      std::to_string(longest) + " tokens, held at their rate (at 8K-32K tokens the kernels ran 1.2-1.6x the rate of "
      "a 4,096-token grid on an H200: validation/attention/longseq24); measure the plan's shapes: scalescope "
      "calibrate run --model " + model.name + " --seq " + std::to_string(model.seq_len) + " --tp " +
      std::to_string(plan.tp) + " --cp " + std::to_string(plan.cp) + " --mbs " + std::to_string(plan.mbs));
}

/// A note when an imported stack (one with a trace) prices a plan whose tokens per micro-batch (`T` = b s) are more
/// than twice or less than half the traced ones: traced kernels are moved by the ratio of the calibration's rates at
/// the two shapes, and those rates grew with size faster than two programs' kernels did in their training steps
/// (moved 2-8x on an H200: 4-7% fast; from traces at the plans' own size: 2%; validation/session24).
void note_trace_far_from_plan(PlanCheck& check, const ModelSpec& model, const Plan& plan, const StackProfile& stack) {
  const double traced = stack.traced_tokens();
  const double planned = static_cast<double>(plan.mbs) * model.seq_len;
  if (!(traced > 0.0) || !(planned > 0.0) || (planned <= 2.0 * traced && planned >= 0.5 * traced)) return;
  char times[32];
  std::snprintf(times, sizeof times, "%.1fx", planned / traced);
  check.notes.push_back(
      "the stack '" + stack.name + "' was traced at " + std::to_string(std::llround(traced)) +
      " tokens per micro-batch; this plan runs " + std::to_string(std::llround(planned)) + " (" + times +
      "): its kernels are moved by the calibration's rates, whose efficiency grew with size faster than training "
      "kernels' did (two programs moved 2-8x on an H200 were predicted 4-7% fast, from traces at their own size "
      "within 2%: validation/session24); a trace nearer the plan's shape predicts it better, and with several "
      "(--framework a.json,b.json) each plan takes the nearest");
}

/// A note when an FP8 plan's casts are priced as Transformer Engine's (fp8_costs.hpp: fused cast-transpose kernels)
/// for a stack that is neither the built-in Megatron/TE one nor traced from an FP8 program: an eager PyTorch FP8
/// program (torch._scaled_mm, its amax, scale, clamp and convert passes and transpose copies as separate kernels:
/// validation/programs/fp8_linear.py) ran 20-35% slower than that pricing on an H200, and its own one-shape trace
/// predicted it within 9% (validation/session36).
void note_fp8_casts_not_measured(PlanCheck& check, const Plan& plan, const StackProfile& stack) {
  if (!plan.fp8() || stack.source == "<builtin:fused>" || fp8_measured_in_stack(stack)) return;
  check.notes.push_back(
      "FP8 casts are priced as Transformer Engine's fused cast-transpose kernels, which the stack '" + stack.name +
      "' may not run: an eager PyTorch FP8 program (torch._scaled_mm with unfused casts) ran 20-35% slower than that "
      "on an H200 (validation/session36); import a trace of your own FP8 step (scalescope import torch-trace) to "
      "price its casts");
}

}  // namespace

Expected<Prediction> predict(const ModelSpec& model_in, const Plan& plan, const Cluster& cluster,
                             const CollectiveModel& collectives, const ComputeModel& compute,
                             const PredictOptions& o) {
  const ModelSpec model = with_plan_seq(model_in, plan);
  auto check = validate(plan, model, cluster.num_gpus());
  if (!check) return check.error();
  if (!compute.has_stack_for(model, plan)) {
    std::string names;
    for (const auto& s : compute.stacks()) names += (names.empty() ? "" : ", ") + s->source;
    return input_error("--framework", "", "none of the stacks (" + names + ") applies to the plan " + to_string(plan) +
                                              " (each stack's properties.applies)");
  }
  const StackProfile& stack = compute.stack_for(model, plan);
  if (model.is_hybrid() && !stack.hybrid) {
    return input_error("--framework", "", "the stack '" + stack.name + "' (" + stack.source +
                                              ") has no rows for hybrid layers (properties.hybrid: Mamba-2 mixers and "
                                              "single-block layers); model '" + model.name +
                                              "' has a hybrid_pattern: use --framework fused");
  }
  if (model.is_moe() && !stack.moe) {
    return input_error("--framework", "", "the stack '" + stack.name + "' (" + stack.source +
                                              ") has no rows for MoE layers (properties.moe); model '" + model.name +
                                              "' has experts: price it with a stack that has them, e.g. fused");
  }
  if (model.sliding_window > 0 && !stack.fine_tuning) {
    return input_error("--framework", "", "the stack '" + stack.name + "' (" + stack.source +
                                              ") prices attention over whole sequences (properties.fine_tuning: no "
                                              "`doc` span); model '" + model.name +
                                              "' has sliding-window layers: use --framework fused");
  }
  if ((plan.lora_rank > 0 || plan.packed_doc_tokens > 0) && !stack.fine_tuning) {
    return input_error("--framework", "", "the stack '" + stack.name + "' (" + stack.source +
                                              ") does not price fine-tuning plans (properties.fine_tuning: its rows "
                                              "have every weight gradient and attention over whole sequences); plan " +
                                              to_string(plan) + " sets lora_rank or packed_doc_tokens: use --framework fused");
  }
  BuildOptions bo = o.build;
  bo.symmetric = o.symmetric.value_or(o.fidelity == Fidelity::analytical);
  bo.tp_classes = !bo.symmetric && o.fidelity == Fidelity::flow && o.rail_classes &&
                  rail_classes_exact(plan, cluster, o.analytical_intra_node);
  // Host cost: the caller's, else the compute model's (--host-cost), else the one the stack measured, else the
  // stack's host time per kernel times the kernels of the plan's rows.
  std::optional<FrameworkHostCost> host = o.host ? o.host : compute.host_cost() ? compute.host_cost() : stack.host;
  if (!host && stack.host_per_kernel_s) {
    const PlanPieceCosts pieces = plan_piece_costs(model, plan, compute, o.build.costs);
    const LayerCost& l = pieces.layer;
    const LayerCost& cp = pieces.cp.blocks;
    const EdgeCost& e = pieces.edge;
    const double k = *stack.host_per_kernel_s;
    FrameworkHostCost h;
    h.source = stack.host_source;
    h.framework = stack.name + " (" + std::to_string(k * 1e6).substr(0, 5) + " us per kernel)";
    h.module = Seconds(k * (l.forward.kernels + l.backward.kernels + l.recompute.kernels + cp.forward.kernels +
                            cp.backward.kernels + cp.recompute.kernels));
    h.tensor_parallel = h.module;
    h.edge_per_microbatch = Seconds(k * (e.embedding_forward.kernels + e.embedding_backward.kernels +
                                         e.head_forward.kernels + e.head_backward.kernels));
    h.per_step = Seconds(k * 2.0);  // zero_grad and one fused optimizer launch per parameter group
    host = h;
  }
  // A step of several ranks waits at its collectives for the slowest rank's host: with the host-bound timing of
  // several processes (stack host.process_samples), the expected slowest of the plan's ranks sets every host cost.
  const double slowest = host ? host->slowest_of(plan.gpus()) : 1.0;
  if (host && slowest != 1.0) {
    for (Seconds* t : {&host->module, &host->tensor_parallel, &host->edge_per_microbatch, &host->per_step}) {
      *t = Seconds(t->value * slowest);
    }
    for (auto& [processes, cost] : host->tensor_parallel_by_processes) cost = Seconds(cost.value * slowest);
  }
  if (host) {
    // The optimizer's kernels run while its host issues the next ones: only the host time beyond the step's
    // optimizer GPU time is exposed (the optimizer is one task here, which would serialize the two).
    const double params = static_cast<double>(
        params_per_tp_rank(model, layout_of(model, plan), 0, plan.tp, o.build.costs.vocab_multiple, plan.ep, plan.etp)
            .total());
    const double shard = plan.zero >= 1 && plan.dp * plan.cp > 1 ? plan.dp * plan.cp : 1.0;
    const Seconds gpu = optimizer_cost(params / shard, model, plan, compute, o.build.costs).time;
    host->per_step = host->per_step > gpu ? host->per_step - gpu : Seconds(0.0);
  }
  if (host) bo.per_layer_tasks = true;  // host dispatch is per layer (sim/host_dispatch.hpp)
  if (o.interference) bo.task_interference = false;  // the caller's factors, for every task
  // Memory and time grow with (micro-batches x layer tasks x simulated pipelines); measured ~0.9 kB and
  // ~8 us per unit (llama3-8b, 65,536 micro-batches x 32 layer tasks: 1.9 GB, 17 s). Refused above the limit.
  const double units = task_graph_units(model, plan, bo);
  if (units > kMaxTaskUnits)
    return input_error("plan", "gbs",
                       "the task graph would hold " + std::to_string(static_cast<long long>(units)) +
                           " micro-batch x layer tasks (limit " + std::to_string(static_cast<long long>(kMaxTaskUnits)) +
                           ", about 2 GB): use fewer micro-batches (larger mbs or dp), no per-layer tasks or host cost, "
                           "or analytical fidelity");
  auto graph = build_task_graph(model, plan, cluster, compute, bo);
  if (!graph) return graph.error();
  if (host) {
    const int processes_on_host = std::min(plan.gpus(), cluster.gpus_per_node());
    const int local_experts = model.moe.enabled() ? model.moe.experts / std::max(1, plan.ep) : 0;
    const double moe_share = model.layers > 0 ? static_cast<double>(model.moe_layers()) / model.layers : 0.0;
    add_host_dispatch(*graph, HostCosts{host->for_plan(plan, processes_on_host, local_experts, moe_share),
                                        host->edge_per_microbatch,
                                        host->per_step, compute.host_sync_latency(), host->forward_fraction,
                                        host->after_sync_fraction},
                      graph->stream_bound());
  }
  SimOptions so;
  so.fidelity = o.fidelity;
  so.observers = o.observers;
  so.record_task_times = o.record_task_times;
  so.analytical_intra_node = o.analytical_intra_node;
  so.interference = o.interference.value_or(compute.interference());
  auto sim = simulate(*graph, cluster, collectives, so);
  if (!sim) return sim.error();
  PowerCapEstimate power;
  if (o.power_cap && compute.power() && graph->has_task_power()) {
    power = apply_power_cap(*graph, *sim, *compute.power());
    if (power.capped_ranks > 0) {
      sim = simulate(*graph, cluster, collectives, so);
      if (!sim) return sim.error();
    }
  }

  Prediction p;
  p.check = std::move(check).value();
  note_attention_beyond_rows(p.check, model, plan, compute);
  note_trace_far_from_plan(p.check, model, plan, stack);
  note_fp8_casts_not_measured(p.check, plan, stack);
  p.graph = std::move(graph).value();
  p.sim = std::move(sim).value();
  p.step_time_s = p.sim.step_time.value;
  const double tokens = static_cast<double>(plan.gbs) * model.seq_len;
  p.tokens_per_s = p.step_time_s > 0 ? tokens / p.step_time_s : 0.0;
  FlopOptions fo;
  fo.attention_span = plan.packed_doc_tokens;
  fo.frozen_base = plan.lora_rank > 0;
  if (plan.lora_rank > 0) {
    Plan whole = plan;  // the adapters of a whole layer (tp = 1)
    whole.tp = 1;
    fo.adapter_params = lora_params_per_layer(model, whole);
  }
  p.model_flops = flops_per_token(model, fo).total() * tokens;
  // Hardware FLOPs: what the kernels execute; selective recompute with flash attention recomputes
  // nothing beyond what the flash backward kernel does anyway (layer_costs.hpp).
  fo.recompute = plan.recompute == Recompute::selective && o.build.costs.flash_attention ? Recompute::none
                                                                                         : plan.recompute;
  p.hardware_flops = flops_per_token(model, fo).total() * tokens;
  p.peak_tflops = compute.peak("bf16").value / 1e12;
  const double denom = p.step_time_s * plan.gpus() * compute.peak("bf16").value;
  p.mfu = denom > 0 ? p.model_flops / denom : 0.0;
  p.hfu = denom > 0 ? p.hardware_flops / denom : 0.0;
  if (plan.fp8()) p.mfu_ceiling = std::max(1.0, compute.peak("fp8").value / compute.peak("bf16").value);

  MemoryOptions mo = o.memory;
  if (!mo.stack) {  // the program whose kernels run keeps that program's tensors
    for (const auto& s : compute.stacks())
      if (s.get() == &stack) mo.stack = s;
  }
  mo.flash_attention = o.build.costs.flash_attention;
  mo.dropout = o.build.costs.dropout;
  p.memory = peak_memory(model, plan, mo);
  p.gpu_memory = cluster.gpu_spec().memory;
  p.fits_memory = p.memory.fits(p.gpu_memory);

  const LayerCost lc = plan_piece_costs(model, plan, compute, o.build.costs).layer;
  for (std::size_t i = 0; i < p.compute_provenance.size(); ++i) {
    p.compute_provenance[i] = lc.forward.by_provenance[i] + lc.backward.by_provenance[i] + lc.recompute.by_provenance[i];
  }
  p.compute_inputs = compute.inputs();
  p.power = power;
  if (power.modelled) {
    char text[160];
    std::snprintf(text, sizeof text, "the critical rank draws %.0f W at the profile's rates against %.0f W capped",
                  power.uncapped_draw_w, power.capped_w);
    p.compute_inputs.push_back({"power_cap_tensor_rate", power.tensor_rate, "x profile rates", Provenance::fitted,
                                std::string(text) + " (docs/power.md; " + power.source + ")"});
  }
  if (!model.mamba.enabled()) {  // the profile's Mamba-2 rows price nothing of a model without Mamba-2 layers
    std::erase_if(p.compute_inputs, [](const SourcedValue& v) { return v.name == "mamba_shapes"; });
  }
  if (host && !o.host && !compute.host_cost()) {  // the stack's own host cost (compute.inputs() names --host-cost)
    p.compute_inputs.push_back({"host_per_layer_microbatch", host->module.value * 1e3, "ms",
                                stack.host ? Provenance::measured : Provenance::fitted,
                                host->source + " (" + host->framework + ")"});
  }
  if (host && !host->process_samples.empty()) {
    p.compute_inputs.push_back({"host_slowest_of_ranks", slowest, "x", Provenance::measured,
                                "expected slowest of " + std::to_string(plan.gpus()) + " ranks' hosts, from " +
                                    std::to_string(host->process_samples.size()) + " processes' host-bound timings (" +
                                    host->source + ")"});
  }
  if (auto bad = implausible_result(p)) return runtime_error(*bad);
  return p;
}

PowerCapEstimate apply_power_cap(TaskGraph& graph, const SimResult& sim, const PowerModel& pm) {
  PowerCapEstimate est;
  est.modelled = true;
  est.idle_w = pm.idle_w;
  est.capped_w = pm.capped_w;
  est.source = pm.source;
  const int ranks = graph.rank_bound();
  std::vector<double> energy(static_cast<std::size_t>(ranks), 0.0), tensor(static_cast<std::size_t>(ranks), 0.0);
  const std::span<const Task> tasks = graph.tasks();
  for (TaskId t = 0; t < tasks.size(); ++t) {
    if (tasks[t].kind != TaskKind::compute) continue;
    const TaskGraph::TaskPower w = graph.power(t);
    energy[static_cast<std::size_t>(tasks[t].rank)] += w.energy_j;
    tensor[static_cast<std::size_t>(tasks[t].rank)] += w.tensor_s;
  }
  std::vector<double> rate(static_cast<std::size_t>(ranks), 1.0);
  const double headroom = pm.capped_w - pm.idle_w;  // > 0 (the profile loader checks it)
  constexpr double kLowestRate = 0.05;  // a guard: the measured GEMM alone ran at 0.85 of its bursts
  for (const RankStats& rs : sim.ranks) {
    const auto r = static_cast<std::size_t>(rs.rank);
    const double working = rs.breakdown.total.value - rs.breakdown[BreakdownPart::bubble].value;
    if (!(working > 0.0)) continue;
    const double needed = energy[r] / headroom - (working - tensor[r]);  // the tensor time that keeps the cap
    if (tensor[r] > 0.0 && needed > tensor[r]) {
      rate[r] = std::max(kLowestRate, tensor[r] / needed);
      ++est.capped_ranks;
    }
    est.min_tensor_rate = std::min(est.min_tensor_rate, rate[r]);
    if (rs.rank == sim.critical_rank) {
      est.tensor_rate = rate[r];
      est.working_s = working;
      est.uncapped_draw_w = pm.idle_w + energy[r] / working;
      est.draw_w = pm.idle_w + energy[r] / (working + tensor[r] * (1.0 / rate[r] - 1.0));
    }
  }
  if (est.capped_ranks == 0) return est;
  for (TaskId t = 0; t < tasks.size(); ++t) {
    if (tasks[t].kind != TaskKind::compute) continue;
    const double k = rate[static_cast<std::size_t>(tasks[t].rank)];
    const double stretch = graph.power(t).tensor_s * (1.0 / k - 1.0);
    if (stretch > 0.0) graph.set_compute_duration(t, Seconds(tasks[t].amount + stretch));
  }
  return est;
}

std::optional<std::string> implausible_result(const Prediction& p) {
  // A result outside these bounds comes from inputs beyond what the models cover or from a bug; it
  // stops with an error instead of being printed (docs/plausible-ranges.md).
  const std::string why = " (inputs outside the modelled ranges, docs/plausible-ranges.md, or a bug)";
  if (!std::isfinite(p.step_time_s) || p.step_time_s <= 0 || p.step_time_s > kMaxStepTimeS)
    return "predicted step time " + std::to_string(p.step_time_s) + " s is not in (0, 1e9] s" + why;
  if (!(p.mfu <= p.mfu_ceiling + 1e-9) || !(p.hfu <= p.mfu_ceiling + 1e-9))
    return "predicted MFU " + std::to_string(100 * p.mfu) + "% / HFU " + std::to_string(100 * p.hfu) + "% exceeds " +
           (p.mfu_ceiling > 1.0 ? std::to_string(100 * p.mfu_ceiling) + "% of the bf16 peak (the fp8 peak)"
                                : std::string("100% of the bf16 peak")) +
           why;
  const MemoryBreakdown& m = p.memory;
  for (const Bytes b : {m.weights, m.grads, m.optimizer, m.activations, m.embedding_logits, m.recompute_workspace,
                        m.zero3_gather, m.framework_copies, m.overhead, m.total()})
    if (!std::isfinite(b.value) || b.value < 0)
      return "predicted memory " + std::to_string(b.value) + " bytes is negative or not finite" + why;
  return std::nullopt;
}

}  // namespace scalescope::models
