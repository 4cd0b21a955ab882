// `scalescope simulate`: one training iteration of a model under a parallel plan on a cluster:
// step time, tokens/s, MFU, memory, time breakdown and the provenance of the numbers used.
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include <iostream>

#include "framework_options.hpp"
#include "megatron_plan.hpp"
#include "scalescope/calibrate/hardware.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/sim/trace.hpp"

namespace scalescope::cli {

namespace {

struct SimulateOptions {
  std::string model, cluster, plan, megatron, calibration, trace;
  FrameworkOptions stack;
  std::optional<int> nodes, gpus;
  std::string fidelity = "analytical";
  std::string attention = "flash";
  std::string intra_node = "analytical";
  bool all_ranks = false;
  bool per_layer = false;
  bool strict = false;
  Format format = Format::text;
};

/// v rounded to `digits` significant digits (stable text across compilers for golden files).
double sig(double v, int digits = 6) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

struct Loaded {
  models::ModelSpec model;
  models::Plan plan;
  std::optional<Cluster> cluster;
  CollectiveParams params = datasheet_collective_params();
  std::string collective_source = "built-in datasheet parameters";
  std::optional<models::ComputeModel> compute;
  std::string compute_source = "datasheet roofline";
  std::string gpu_note;
};

Expected<Loaded> load(const SimulateOptions& o) {
  Loaded l;
  if (o.model.empty()) return input_error("", "--model", "a model name or file is required");
  if (o.cluster.empty()) return input_error("", "--cluster", "a cluster name or file is required");
  if (o.plan.empty() == o.megatron.empty()) {
    return input_error("", "--plan", "give a plan (\"tp=..,pp=..,dp=..,gbs=..\" or a plan file) or --plan-from-megatron, one of them");
  }
  auto model = models::load_model_by_name_or_path(o.model);
  if (!model) return model.error();
  l.model = std::move(model).value();
  if (o.megatron.empty()) {
    auto plan = models::parse_plan_or_file(o.plan);
    if (!plan) return plan.error();
    l.plan = *plan;
  } else {
    auto plan = plan_from_megatron_flags("simulate", o.megatron, l.model, o.cluster, o.gpus, o.nodes);
    if (!plan) return plan.error();
    l.plan = *plan;
  }
  // The plan's own rules first (sizes and their products at 64 bits): a plan of 2^48 GPUs fails here,
  // before a cluster is built for it. predict() checks it again against the cluster's GPU count.
  if (auto check = models::validate(l.plan, l.model, 0); !check) return check.error();
  ClusterOptions copt;
  copt.nodes = o.nodes;
  copt.gpus = o.gpus;
  if (!o.nodes && !o.gpus) copt.gpus = l.plan.gpus();  // as many nodes as the plan needs
  auto cluster = load_cluster_by_name_or_path(o.cluster, copt);
  if (!cluster) return cluster.error();
  l.cluster.emplace(std::move(cluster).value());
  calib::CalibrationOptions co;
  co.strict = o.strict;
  auto hw = calib::load_hardware_models(o.calibration, *l.cluster, co);
  if (!hw) return hw.error();
  for (const auto& n : hw->notes) std::cerr << "scalescope simulate: warning: " << n << "\n";
  l.params = std::move(hw->params);
  l.collective_source = std::move(hw->collective_source);
  l.compute.emplace(std::move(hw->compute));
  auto stack = load_framework_setup(o.stack);
  if (!stack) return stack.error();
  stack->apply(*l.compute);
  l.compute_source = std::move(hw->compute_source);
  l.gpu_note = std::move(hw->gpu_note);
  return l;
}

Json breakdown_json(const Breakdown& b) {
  using BP = BreakdownPart;
  Json comm = {{"tp_s", sig(b[BP::tp_comm].value)},    {"sp_s", sig(b[BP::sp_comm].value)},
               {"dp_s", sig(b[BP::dp_comm].value)},    {"zero_s", sig(b[BP::zero_comm].value)},
               {"pp_s", sig(b[BP::pp_comm].value)},    {"cp_s", sig(b[BP::cp_comm].value)},
               {"other_s", sig(b[BP::other_comm].value)}};
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

Json provenance_json(const Loaded& l, const models::Prediction& p) {
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
  const CollectiveParams& c = l.params;
  Json coll = {{"source", l.collective_source},
               {"base_latency_us", c.base_latency_source},
               {"hop_latency_us", c.hop_latency_source},
               {"protocol_efficiency", c.protocol_efficiency_source},
               {"link_efficiency", c.link_efficiency_source},
               {"bus_efficiency", c.bus_efficiency_source},
               {"channels", c.channels_source}};
  return Json{{"compute", {{"source", l.compute_source}, {"layer_time_share", share}, {"inputs", inputs}}},
              {"collectives", coll}};
}

std::string percent(double f) { return fixed(100.0 * f, 1) + " %"; }

/// A note when the host bounds the step (more than 10% of it waits for kernel launches): that share rests on
/// a host cost measured on one machine, and host speed differs between machines of one kind.
std::string host_bound_note(const Loaded& l, const models::Prediction& p) {
  const Breakdown& b = p.sim.breakdown;
  const double share = b.total.value > 0 ? b[BreakdownPart::host_wait].value / b.total.value : 0.0;
  if (share <= 0.10 || !l.compute->host_cost()) return {};
  return "host-bound: " + percent(share) + " of the step waits for the host to launch kernels, priced with the host "
         "cost in " + l.compute->host_cost()->source + "; host speed differed by up to 1.8x between leases of one "
         "machine kind (validation/REPORT.md), so measure it on the machine that will run the plan "
         "(validation/harness/host_dispatch.py)";
}

std::string text_report(const SimulateOptions& o, const Loaded& l, const models::Prediction& p) {
  const Cluster& c = *l.cluster;
  const bool sym = p.sim.ranks.size() < static_cast<std::size_t>(l.plan.gpus());
  std::string out = "scalescope simulate: " + l.model.name + " on " + std::to_string(l.plan.gpus()) + " GPUs of " +
                    c.name() + " (" + std::to_string(c.num_nodes()) + " node(s) x " + std::to_string(c.gpus_per_node()) +
                    " " + c.gpu_spec().model + "), " + o.fidelity + " fidelity, " +
                    (sym ? "one representative pipeline" : "every rank") + "\n";
  out += "plan: " + models::to_string(l.plan) + "\n";
  out += "micro-batches per pipeline: " + std::to_string(l.plan.num_microbatches()) + "\n\n";
  Table t;
  t.header = {"metric", "value"};
  t.right_align = {false, true};
  t.rows.push_back({"step time", fixed(p.step_time_s, 4) + " s"});
  t.rows.push_back({"tokens/s", fixed(p.tokens_per_s, 0)});
  t.rows.push_back({"MFU", percent(p.mfu)});
  t.rows.push_back({"HFU (with recompute)", percent(p.hfu)});
  t.rows.push_back({"memory peak per GPU", fixed(p.memory.total().value / (1024.0 * 1024 * 1024), 2) + " GiB"});
  t.rows.push_back({"GPU memory", fixed(p.gpu_memory.value / (1024.0 * 1024 * 1024), 2) + " GiB"});
  t.rows.push_back({"fits in memory", p.fits_memory ? "yes" : "NO"});
  out += t.to_text() + "\n";

  using BP = BreakdownPart;
  const Breakdown& b = p.sim.breakdown;
  Table bt;
  bt.header = {"breakdown (rank " + std::to_string(p.sim.critical_rank) + ")", "seconds", "share"};
  bt.right_align = {false, true, true};
  auto row = [&](const std::string& name, Seconds s) {
    bt.rows.push_back({name, fixed(s.value, 4), percent(b.total.value > 0 ? s.value / b.total.value : 0.0)});
  };
  row("compute (fwd+bwd+recompute)", b.compute());
  row("optimizer", b[BP::optimizer]);
  row("exposed TP comm", b[BP::tp_comm]);
  row("exposed SP comm", b[BP::sp_comm]);
  row("exposed DP comm", b[BP::dp_comm]);
  row("exposed ZeRO comm", b[BP::zero_comm]);
  row("exposed PP comm", b[BP::pp_comm]);
  if (b[BP::cp_comm].value > 0) row("exposed CP comm", b[BP::cp_comm]);
  row("exposed other comm", b[BP::other_comm]);
  if (b[BP::host_wait].value > 0) row("waiting for the host (kernel launch)", b[BP::host_wait]);
  row("pipeline bubble / idle", b[BP::bubble]);
  out += bt.to_text() + "\n";

  out += "provenance:\n  compute: " + l.compute_source + "; layer time";
  double total = 0;
  for (const auto& s : p.compute_provenance) total += s.value;
  for (int i = 0; i < models::kNumProvenances; ++i) {
    const double v = p.compute_provenance[static_cast<std::size_t>(i)].value;
    if (v > 0) out += " " + percent(v / total) + " " + std::string(models::to_string(static_cast<models::Provenance>(i)));
  }
  out += "\n";
  for (const auto& v : p.compute_inputs) {
    out += "    " + v.name + " = " + fixed(v.value, v.value < 10 ? 3 : 1) + " " + v.unit + " (" +
           std::string(models::to_string(v.provenance)) + ": " + v.source + ")\n";
  }
  out += "  collectives: " + l.collective_source + "\n";
  for (const auto& n : p.check.notes) out += "note: " + n + "\n";
  if (!l.gpu_note.empty()) out += "note: " + l.gpu_note + "\n";
  if (const std::string n = host_bound_note(l, p); !n.empty()) out += "note: " + n + "\n";
  return out;
}

int run(const SimulateOptions& o) {
  const std::string cmd = "simulate";
  if (o.fidelity != "analytical" && o.fidelity != "flow")
    return report(cmd, input_error("", "--fidelity", "expected analytical | flow, got '" + o.fidelity + "'"));
  if (o.attention != "flash" && o.attention != "unfused")
    return report(cmd, input_error("", "--attention", "expected flash | unfused, got '" + o.attention + "'"));
  if (o.intra_node != "analytical" && o.intra_node != "flow")
    return report(cmd, input_error("", "--intra-node", "expected analytical | flow, got '" + o.intra_node + "'"));
  if (!o.trace.empty()) {  // a FIFO, device, folder or link as --trace fails now, not after the simulation
    if (auto ok = check_output_target(o.trace); !ok) return report(cmd, ok.error());
  }
  auto loaded = load(o);
  if (!loaded) return report(cmd, loaded.error());
  const Loaded& l = *loaded;
  const CollectiveModel collectives(*l.cluster, l.params);

  models::PredictOptions po;
  po.fidelity = o.fidelity == "flow" ? Fidelity::flow : Fidelity::analytical;
  if (o.all_ranks) po.symmetric = false;
  po.analytical_intra_node = o.intra_node == "analytical";
  po.build.per_layer_tasks = o.per_layer;
  po.build.costs.flash_attention = o.attention == "flash";
  po.build.costs.dropout = o.attention != "flash";
  po.record_task_times = !o.trace.empty();
  auto pred = models::predict(l.model, l.plan, *l.cluster, collectives, *l.compute, po);
  if (!pred) return report(cmd, pred.error());
  const models::Prediction& p = *pred;
  if (!o.trace.empty()) {
    if (auto ok = write_chrome_trace(p.graph, &*l.cluster, p.sim, o.trace); !ok) return report(cmd, ok.error());
    std::fprintf(stderr, "scalescope simulate: wrote trace %s (%zu tasks)\n", o.trace.c_str(), p.graph.size());
  }
  if (!p.fits_memory) {
    std::fprintf(stderr, "scalescope simulate: warning: the plan needs %.2f GiB per GPU, more than the %.2f GiB there is\n",
                 p.memory.total().value / (1024.0 * 1024 * 1024), p.gpu_memory.value / (1024.0 * 1024 * 1024));
  }

  if (o.format == Format::json) {
    const models::MemoryBreakdown& m = p.memory;
    auto gib = [](Bytes b) { return sig(b.value / (1024.0 * 1024 * 1024)); };
    Json j = {{"model", l.model.name},
              {"cluster", l.cluster->name()},
              {"gpus", l.plan.gpus()},
              {"nodes", l.cluster->num_nodes()},
              {"plan", models::to_json(l.plan)},
              {"fidelity", o.fidelity},
              {"ranks_simulated", p.sim.ranks.size()},
              {"microbatches", l.plan.num_microbatches()},
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
              {"provenance", provenance_json(l, p)},
              {"notes", p.check.notes}};
    if (m.optimizer_step.value > 0) j["memory"]["optimizer_step_GiB"] = gib(m.optimizer_step);
    if (!l.gpu_note.empty()) j["notes"].push_back(l.gpu_note);
    if (const std::string n = host_bound_note(l, p); !n.empty()) j["notes"].push_back(n);
    print_stdout(dump_json(j));
    return 0;
  }
  if (o.format == Format::csv) {
    Table t;
    t.header = {"model", "cluster", "gpus", "plan", "step_time_s", "tokens_per_s", "mfu", "memory_peak_GiB", "fits_memory"};
    t.rows.push_back({l.model.name, l.cluster->name(), std::to_string(l.plan.gpus()), models::to_string(l.plan),
                      fixed(p.step_time_s, 6), fixed(p.tokens_per_s, 1), fixed(p.mfu, 4),
                      fixed(p.memory.total().value / (1024.0 * 1024 * 1024), 3), p.fits_memory ? "true" : "false"});
    print_stdout(t.to_csv());
    return 0;
  }
  print_stdout(text_report(o, l, p));
  return 0;
}

}  // namespace

void register_simulate(CLI::App& app, Context& ctx) {
  auto opts = std::make_shared<SimulateOptions>();
  CLI::App* sub = app.add_subcommand(
      "simulate",
      "Simulate one training iteration of a model under a parallel plan on a cluster: step time, tokens/s, MFU, "
      "memory per GPU, where the time goes, and where the numbers come from. Ranks are laid out Megatron-style "
      "(tp innermost, then cp, then dp, then pp).");
  sub->add_option("--model", opts->model, "Model: a catalog name (e.g. gpt3-175b), a model JSON or an HF config.json (required)");
  sub->add_option("--cluster", opts->cluster, "Cluster: a name from topologies/ (e.g. h100-rail-ndr) or a JSON file (required)");
  sub->add_option("--nodes", opts->nodes, "Nodes to build the cluster with (default: as many as the plan needs)");
  sub->add_option("--gpus", opts->gpus, "GPUs to build the cluster with, rounded up to whole nodes (default: the plan's)");
  sub->add_option("--plan", opts->plan,
                  "Plan: \"tp=8,pp=8,dp=16,mbs=1,gbs=1536,schedule=1f1b,recompute=full\" or a plan JSON file "
                  "(keys in docs/plan-format.md: tp pp dp cp zero mbs gbs seq schedule vpp recompute sp precision "
                  "fp8_recipe fp8_params overlap_grad_reduce overlap_param_gather tp_comm_overlap cp_comm "
                  "first_stage_layers last_stage_layers pp_layout bucket_MB overlap ...) (this or --plan-from-megatron)");
  sub->add_option("--plan-from-megatron", opts->megatron,
                  "The plan of a Megatron-LM command line (\"--tensor-model-parallel-size 8 --pipeline-model-parallel-size "
                  "16 ...\") or of a file holding one; the world size comes from --nnodes x --nproc-per-node in it, else "
                  "--gpus or --nodes. Flags that set nothing are listed on stderr; contradictions are rejected");
  sub->add_option("--calibration", opts->calibration,
                  "Calibration: profile names, files or directories, comma-separated, composed part by part (GEMM, "
                  "attention, memory and launch from the first that measured them; collectives fitted on the cluster "
                  "from the first with collective rows, or a collective-parameters JSON from `calibrate fit -o`). What "
                  "none measured is priced from the cluster's datasheet, with a warning. `none`: datasheet only");
  sub->add_flag("--strict", opts->strict,
                "Refuse a calibration measured on another GPU type than the cluster's (default: a warning)");
  sub->add_option("--fidelity", opts->fidelity, "analytical (one representative pipeline, closed-form collectives) or "
                                                "flow (every rank, transfers share links)")
      ->default_str("analytical");
  sub->add_flag("--all-ranks", opts->all_ranks, "Simulate every rank also at analytical fidelity");
  sub->add_option("--intra-node", opts->intra_node,
                  "Flow fidelity: intra-node collectives at their analytical time (analytical, faster) or as flows")
      ->default_str("analytical");
  sub->add_option("--attention", opts->attention,
                  "flash (FlashAttention kernel, no stored scores) or unfused (Megatron 2021: score GEMMs, softmax "
                  "and dropout kernels)")
      ->default_str("flash");
  add_framework_options(sub, opts->stack);
  sub->add_flag("--per-layer-tasks", opts->per_layer, "One task per layer and TP collective (finer traces, slower)");
  sub->add_option("--trace", opts->trace, "Write a Perfetto / Chrome trace of the iteration to this file");
  add_format_option(sub, opts->format);
  sub->callback([opts, &ctx] { ctx.exit_code = run(*opts); });
}

}  // namespace scalescope::cli
