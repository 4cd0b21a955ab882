// `scalescope simulate` as a library call: request checks, loading, prediction and the JSON report.
#include "scalescope/planner/simulate_run.hpp"

#include <cstdio>

#include "scalescope/planner/report_json.hpp"

namespace scalescope::planner {

namespace {

Json breakdown_json(const Breakdown& b) {
  using BP = BreakdownPart;
  Json comm = {{"tp_s", sig(b[BP::tp_comm].value)},    {"sp_s", sig(b[BP::sp_comm].value)},
               {"dp_s", sig(b[BP::dp_comm].value)},    {"zero_s", sig(b[BP::zero_comm].value)},
               {"pp_s", sig(b[BP::pp_comm].value)},    {"cp_s", sig(b[BP::cp_comm].value)},
               {"other_s", sig(b[BP::other_comm].value)}};
  if (b[BP::ep_comm].value > 0) comm["ep_s"] = sig(b[BP::ep_comm].value);  // MoE plans only
  return Json{{"compute_s", sig(b.compute().value)},
              {"forward_s", sig(b[BP::forward].value)},
              {"backward_s", sig(b[BP::backward].value)},
              {"recompute_s", sig(b[BP::recompute].value)},
              {"optimizer_s", sig(b[BP::optimizer].value)},
              {"other_compute_s", sig(b[BP::other_compute].value)},
              {"exposed_comm_s", comm},
              {"exposed_comm_total_s", sig(b.exposed_comm().value)},
              {"host_wait_s", sig(b[BP::host_wait].value)},
              {"bubble_s", sig(b[BP::bubble].value)}};
}

Json provenance_json(const SimulateRun& r) {
  const models::Prediction& p = r.prediction;
  Json inputs = Json::array();
  for (const auto& v : p.compute_inputs) {
    inputs.push_back({{"name", v.name}, {"value", sig(v.value)}, {"unit", v.unit},
                      {"provenance", std::string(models::to_string(v.provenance))}, {"source", v.source}});
  }
  double total = 0;
  for (const auto& s : p.compute_provenance) total += s.value;
  Json share = Json::object();
  for (int i = 0; i < models::kNumProvenances; ++i) {
    const double v = p.compute_provenance[static_cast<std::size_t>(i)].value;
    if (v > 0) share[std::string(models::to_string(static_cast<models::Provenance>(i)))] = sig(v / total, 4);
  }
  const CollectiveParams& c = r.setup->collectives.params();
  Json coll = {{"source", r.setup->collective_source},
               {"base_latency_us", c.base_latency_source},
               {"hop_latency_us", c.hop_latency_source},
               {"protocol_efficiency", c.protocol_efficiency_source},
               {"link_efficiency", c.link_efficiency_source},
               {"bus_efficiency", c.bus_efficiency_source},
               {"channels", c.channels_source}};
  return Json{{"compute", {{"source", r.setup->compute_source}, {"layer_time_share", share}, {"inputs", inputs}}},
              {"collectives", coll}};
}

std::string percent(double f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f %%", 100.0 * f);
  return buf;
}

}  // namespace

Expected<SimulateRun> run_simulate(const SimulateRequest& q, const StackApply& stack) {
  if (q.fidelity != "analytical" && q.fidelity != "flow")
    return input_error("", "--fidelity", "expected analytical | flow, got '" + q.fidelity + "'");
  if (q.attention != "flash" && q.attention != "cudnn" && q.attention != "unfused")
    return input_error("", "--attention", "expected flash | cudnn | unfused, got '" + q.attention + "'");
  if (q.intra_node != "analytical" && q.intra_node != "flow")
    return input_error("", "--intra-node", "expected analytical | flow, got '" + q.intra_node + "'");
  if (q.model.empty()) return input_error("", "--model", "a model name or file is required");
  if (q.cluster.empty()) return input_error("", "--cluster", "a cluster name or file is required");
  if (q.plan.empty() == !q.plan_for_model)
    return input_error("", "--plan", "give a plan (\"tp=..,pp=..,dp=..,gbs=..\" or a plan file) or --plan-from-megatron, one of them");
  SimulateRun r;
  r.fidelity = q.fidelity;
  auto model = models::load_model_by_name_or_path(q.model);
  if (!model) return model.error();
  r.model = std::move(model).value();
  auto plan = q.plan_for_model ? q.plan_for_model(r.model) : models::parse_plan_or_file(q.plan);
  if (!plan) return plan.error();
  r.plan = *plan;
  // The plan's own rules first (sizes and their products at 64 bits): a plan of 2^48 GPUs fails here,
  // before a cluster is built for it. predict() checks it again against the cluster's GPU count.
  if (auto check = models::validate(r.plan, r.model, 0); !check) return check.error();
  ClusterOptions copt;
  copt.nodes = q.nodes;
  copt.gpus = q.gpus;
  if (!q.nodes && !q.gpus) copt.gpus = r.plan.gpus();  // as many nodes as the plan needs
  calib::CalibrationOptions co;
  co.strict = q.strict;
  auto setup = load_setup(q.cluster, copt, q.calibration, co);
  if (!setup) return setup.error();
  r.setup = std::move(setup).value();
  if (stack) stack(r.setup->compute);

  models::PredictOptions po;
  po.fidelity = q.fidelity == "flow" ? Fidelity::flow : Fidelity::analytical;
  if (q.all_ranks) po.symmetric = false;
  po.rail_classes = !q.no_rail_classes;
  po.analytical_intra_node = q.intra_node == "analytical";
  po.build.per_layer_tasks = q.per_layer_tasks;
  po.build.costs.flash_attention = q.attention != "unfused";
  po.build.costs.dropout = q.attention == "unfused";
  po.build.costs.attention_backend = q.attention == "cudnn" ? models::AttentionBackend::cudnn : models::AttentionBackend::flash;
  po.record_task_times = q.record_task_times;
  po.power_cap = q.power_cap;
  auto pred = models::predict(r.model, r.plan, r.setup->cluster, r.setup->collectives, r.setup->compute, po);
  if (!pred) return pred.error();
  r.prediction = std::move(pred).value();
  return r;
}

std::string host_bound_note(const SimulateRun& r) {
  const Breakdown& b = r.prediction.sim.breakdown;
  const double share = b.total.value > 0 ? b[BreakdownPart::host_wait].value / b.total.value : 0.0;
  const auto& host = r.setup->compute.host_cost();
  if (share <= 0.10 || !host) return {};
  return "host-bound: " + percent(share) + " of the step waits for the host to launch kernels, priced with the host "
         "cost in " + host->source + "; host speed differed by up to 1.8x between leases of one "
         "machine kind (validation/REPORT.md), so measure it on the machine that will run the plan "
         "(validation/harness/host_dispatch.py)";
}

Json simulate_json(const SimulateRun& r) {
  const models::Prediction& p = r.prediction;
  const models::MemoryBreakdown& m = p.memory;
  const Cluster& cluster = r.setup->cluster;
  auto gib = [](Bytes b) { return sig(b.value / (1024.0 * 1024 * 1024)); };
  Json j = {{"model", r.model.name},
            {"cluster", cluster.name()},
            {"gpus", r.plan.gpus()},
            {"nodes", cluster.num_nodes()},
            {"plan", models::to_json(r.plan)},
            {"fidelity", r.fidelity},
            {"ranks_simulated", p.sim.ranks.size()},
            {"microbatches", r.plan.num_microbatches()},
            {"step_time_s", sig(p.step_time_s)},
            {"tokens_per_s", sig(p.tokens_per_s)},
            {"mfu", sig(p.mfu, 4)},
            {"hfu", sig(p.hfu, 4)},
            {"model_flops_per_step", sig(p.model_flops)},
            {"peak_tflops_per_gpu", sig(p.peak_tflops)},
            {"memory_peak_GiB", gib(m.total())},
            {"gpu_memory_GiB", gib(p.gpu_memory)},
            {"fits_memory", p.fits_memory},
            {"memory", {{"stage", m.stage}, {"weights_GiB", gib(m.weights)}, {"grads_GiB", gib(m.grads)},
                        {"optimizer_GiB", gib(m.optimizer)}, {"activations_GiB", gib(m.activations)},
                        {"embedding_logits_GiB", gib(m.embedding_logits)},
                        {"recompute_workspace_GiB", gib(m.recompute_workspace)},
                        {"zero3_gather_GiB", gib(m.zero3_gather)}, {"framework_copies_GiB", gib(m.framework_copies)},
                        {"overhead_GiB", gib(m.overhead)}}},
            {"critical_rank", p.sim.critical_rank},
            {"breakdown", breakdown_json(p.sim.breakdown)},
            {"provenance", provenance_json(r)},
            {"notes", p.check.notes}};
  if (m.optimizer_step.value > 0) j["memory"]["optimizer_step_GiB"] = gib(m.optimizer_step);
  if (p.power.modelled) {
    j["power_cap"] = {{"tensor_rate", sig(p.power.tensor_rate, 4)}, {"min_tensor_rate", sig(p.power.min_tensor_rate, 4)},
                      {"capped_ranks", p.power.capped_ranks}, {"draw_W", sig(p.power.draw_w, 4)},
                      {"uncapped_draw_W", sig(p.power.uncapped_draw_w, 4)}, {"capped_W", sig(p.power.capped_w, 4)},
                      {"idle_W", sig(p.power.idle_w, 4)}, {"working_s", sig(p.power.working_s, 6)},
                      {"source", p.power.source}};
  }
  if (!r.setup->gpu_note.empty()) j["notes"].push_back(r.setup->gpu_note);
  if (const std::string n = host_bound_note(r); !n.empty()) j["notes"].push_back(n);
  return j;
}

}  // namespace scalescope::planner
