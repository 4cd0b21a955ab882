// predict(): build + simulate + summarise one iteration (formulas in predict.hpp).
#include "scalescope/models/predict.hpp"

#include <algorithm>

#include "scalescope/models/counts.hpp"
#include "scalescope/models/plan_costs.hpp"
#include "scalescope/sim/host_dispatch.hpp"

namespace scalescope::models {

Expected<Prediction> predict(const ModelSpec& model, const Plan& plan, const Cluster& cluster,
                             const CollectiveModel& collectives, const ComputeModel& compute,
                             const PredictOptions& o) {
  auto check = validate(plan, model, cluster.num_gpus());
  if (!check) return check.error();
  BuildOptions bo = o.build;
  bo.symmetric = o.symmetric.value_or(o.fidelity == Fidelity::analytical);
  const std::optional<FrameworkHostCost>& host = o.host ? o.host : compute.host_cost();
  if (host) bo.per_layer_tasks = true;  // host dispatch is per layer (sim/host_dispatch.hpp)
  if (o.interference) bo.task_interference = false;  // the caller's factors, for every task
  auto graph = build_task_graph(model, plan, cluster, compute, bo);
  if (!graph) return graph.error();
  if (host) {
    const int processes_on_host = std::min(plan.tp * plan.pp * plan.dp, cluster.gpus_per_node());
    add_host_dispatch(*graph, host->for_plan(plan, processes_on_host), graph->stream_bound());
  }
  SimOptions so;
  so.fidelity = o.fidelity;
  so.observers = o.observers;
  so.record_task_times = o.record_task_times;
  so.analytical_intra_node = o.analytical_intra_node;
  so.interference = o.interference.value_or(compute.interference());
  auto sim = simulate(*graph, cluster, collectives, so);
  if (!sim) return sim.error();

  Prediction p;
  p.check = std::move(check).value();
  p.graph = std::move(graph).value();
  p.sim = std::move(sim).value();
  p.step_time_s = p.sim.step_time.value;
  const double tokens = static_cast<double>(plan.gbs) * model.seq_len;
  p.tokens_per_s = p.step_time_s > 0 ? tokens / p.step_time_s : 0.0;
  FlopOptions fo;
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

  MemoryOptions mo = o.memory;
  // The eager kernels' program keeps eager PyTorch's tensors (memory.hpp, torch_amp).
  if (compute.framework() == KernelFramework::pytorch_eager) mo.framework = Framework::torch_amp;
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
  return p;
}

}  // namespace scalescope::models
