// `scalescope simulate`: one training iteration of a model under a parallel plan on a cluster:
// step time, tokens/s, MFU, memory, time breakdown and the provenance of the numbers used.
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "megatron_plan.hpp"
#include "stack_loader.hpp"
#include "scalescope/models/layer_kernels.hpp"
#include "scalescope/models/plan_costs.hpp"
#include "scalescope/planner/simulate_run.hpp"
#include "scalescope/sim/trace.hpp"

namespace scalescope::cli {

namespace {

struct SimulateOptions {
  planner::SimulateRequest q;  ///< the options the prediction takes, bound to the flags below
  std::string megatron;  ///< --plan-from-megatron
  FrameworkOptions stack;
  std::string trace;
  bool kernels = false;  ///< --kernels
  Format format = Format::text;
};

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string percent(double f) { return fixed(100.0 * f, 1) + " %"; }

/// At flow fidelity on a switched fabric, how its switches pick among equal-cost paths
/// (docs/cluster-format.md, "Routing"): it decides which flows share spine links.
std::string routing_note(const SimulateOptions& o, const Cluster& c) {
  if (o.q.fidelity != "flow" || c.fabric_tiers() < 2) return "";
  return c.fabric_routing() == FabricRouting::destination ? "; switches route by destination (D-mod-k)"
                                                          : "; switches hash flows over equal-cost paths (ECMP)";
}

/// --kernels: the stack rows of one layer of each kind the model has, priced as the prediction prices them.
struct KindKernels {
  models::LayerKindUse use;
  std::vector<models::KernelLine> lines;
};
std::vector<KindKernels> layer_kernels(const SimulateOptions& o, const planner::SimulateRun& l) {
  const models::ModelSpec local = models::cp_rank_spec(l.model, l.plan);
  models::CostOptions base;
  base.flash_attention = o.q.attention != "unfused";
  base.dropout = o.q.attention == "unfused";
  base.attention_backend = o.q.attention == "cudnn" ? models::AttentionBackend::cudnn : models::AttentionBackend::flash;
  const models::ComputeModel& cm = l.setup->compute;
  const models::CostOptions opt = models::plan_layer_options(local, l.plan, cm, base);
  std::vector<KindKernels> out;
  for (const models::LayerKindUse& u : models::layer_kinds_of(local))
    out.push_back({u, models::layer_kernel_lines(local, l.plan, cm, opt, u.kind, u.moe)});
  return out;
}

std::string kernels_text(const SimulateOptions& o, const planner::SimulateRun& l) {
  std::string out = "\nkernels of one layer, one micro-batch, one rank (the stack's rows as priced";
  out += l.plan.fp8() ? "; FP8 casts and transposes are added to each layer apart and not listed)\n"
                      : ")\n";
  for (const KindKernels& k : layer_kernels(o, l)) {
    Table t;
    t.header = {k.use.label + " (x" + std::to_string(k.use.layers) + ")", "pass", "kind", "kernels", "us", "rate",
                "provenance"};
    t.right_align = {false, false, false, true, true, true, false};
    double fwd = 0.0, bwd = 0.0;
    for (const models::KernelLine& x : k.lines) {
      const double s = x.time.value;
      (x.phase == "forward" ? fwd : bwd) += s;
      std::string rate;
      if (s > 0 && x.flops > 0) rate = fixed(x.flops / s / 1e12, 1) + " TFLOP/s";
      else if (s > 0 && x.bytes.value > 0) rate = fixed(x.bytes.value / s / 1e9, 0) + " GB/s";
      t.rows.push_back({x.name, x.phase, std::string(models::to_string(x.kind)), std::to_string(x.kernels),
                        fixed(s * 1e6, 1), rate, std::string(models::to_string(x.provenance))});
    }
    t.rows.push_back({"total", "forward", "", "", fixed(fwd * 1e6, 1), "", ""});
    t.rows.push_back({"total", "backward", "", "", fixed(bwd * 1e6, 1), "", ""});
    out += t.to_text();
  }
  return out;
}

Json kernels_json(const SimulateOptions& o, const planner::SimulateRun& l) {
  Json all = Json::array();
  for (const KindKernels& k : layer_kernels(o, l)) {
    Json rows = Json::array();
    for (const models::KernelLine& x : k.lines) {
      rows.push_back({{"name", x.name}, {"pass", x.phase}, {"kind", std::string(models::to_string(x.kind))},
                      {"kernels", x.kernels}, {"time_s", x.time.value}, {"flops", x.flops}, {"bytes", x.bytes.value},
                      {"provenance", std::string(models::to_string(x.provenance))}});
    }
    all.push_back({{"layer", k.use.label}, {"layers", k.use.layers}, {"rows", rows}});
  }
  return all;
}

std::string text_report(const SimulateOptions& o, const planner::SimulateRun& l) {
  const models::Prediction& p = l.prediction;
  const Cluster& c = l.setup->cluster;
  const auto present = p.sim.ranks.size();
  const bool sym = present < static_cast<std::size_t>(l.plan.gpus());
  const bool classes = sym && o.q.fidelity == "flow" && present * static_cast<std::size_t>(l.plan.tp) ==
                                                          static_cast<std::size_t>(l.plan.gpus());
  std::string out = "scalescope simulate: " + l.model.name + " on " + std::to_string(l.plan.gpus()) + " GPUs of " +
                    c.name() + " (" + std::to_string(c.num_nodes()) + " node(s) x " + std::to_string(c.gpus_per_node()) +
                    " " + c.gpu_spec().model + "), " + o.q.fidelity + " fidelity, " +
                    (classes ? "every rank (TP rank 0 of each group standing for its peers on the other rails)"
                     : sym   ? "one representative pipeline"
                             : "every rank") +
                    routing_note(o, c) + "\n";
  out += "plan: " + models::to_string(l.plan) + "\n";
  if (o.q.attention == "cudnn") out += "attention: cuDNN's fused kernel (--attention cudnn) for stack rows that name none\n";
  if (o.q.attention == "unfused") out += "attention: unfused, scores materialised (--attention unfused)\n";
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
  if (p.power.modelled) {
    t.rows.push_back({"tensor-core rate at the power cap",
                      p.power.capped_ranks > 0 ? fixed(p.power.tensor_rate, 3) + " x profile (" +
                                                     fixed(p.power.uncapped_draw_w, 0) + " W uncapped, " +
                                                     fixed(p.power.capped_w, 0) + " W cap)"
                                               : "1 (draws " + fixed(p.power.uncapped_draw_w, 0) + " of " +
                                                     fixed(p.power.capped_w, 0) + " W)"});
  }
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
  if (b[BP::ep_comm].value > 0) row("exposed EP comm (MoE dispatch/combine)", b[BP::ep_comm]);
  row("exposed other comm", b[BP::other_comm]);
  if (b[BP::host_wait].value > 0) row("waiting for the host (kernel launch)", b[BP::host_wait]);
  row("pipeline bubble / idle", b[BP::bubble]);
  out += bt.to_text() + "\n";

  out += "provenance:\n  compute: " + l.setup->compute_source + "; layer time";
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
  out += "  collectives: " + l.setup->collective_source + "\n";
  for (const auto& n : p.check.notes) out += "note: " + n + "\n";
  if (!l.setup->gpu_note.empty()) out += "note: " + l.setup->gpu_note + "\n";
  if (const std::string n = planner::host_bound_note(l); !n.empty()) out += "note: " + n + "\n";
  return out;
}

int run(const SimulateOptions& o) {
  const std::string cmd = "simulate";
  if (!o.trace.empty()) {  // a FIFO, device, folder or link as --trace fails now, not after the simulation
    if (auto ok = check_output_target(o.trace); !ok) return report(cmd, ok.error());
  }
  auto stack = load_stack(o.stack);
  if (!stack) return report(cmd, stack.error());
  planner::SimulateRequest q = o.q;
  q.record_task_times = !o.trace.empty();
  if (!o.megatron.empty()) {
    q.plan_for_model = [&o](const models::ModelSpec& m) {
      return plan_from_megatron_flags("simulate", o.megatron, m, o.q.cluster, o.q.gpus, o.q.nodes);
    };
  }
  auto run = planner::run_simulate(q, *stack);
  if (!run) return report(cmd, run.error());
  const planner::SimulateRun& l = *run;
  for (const auto& n : l.setup->notes) std::fprintf(stderr, "scalescope simulate: warning: %s\n", n.c_str());
  const models::Prediction& p = l.prediction;
  if (!o.trace.empty()) {
    if (auto ok = write_chrome_trace(p.graph, &l.setup->cluster, p.sim, o.trace); !ok) return report(cmd, ok.error());
    std::fprintf(stderr, "scalescope simulate: wrote trace %s (%zu tasks)\n", o.trace.c_str(), p.graph.size());
  }
  if (!p.fits_memory) {
    std::fprintf(stderr, "scalescope simulate: warning: the plan needs %.2f GiB per GPU, more than the %.2f GiB there is\n",
                 p.memory.total().value / (1024.0 * 1024 * 1024), p.gpu_memory.value / (1024.0 * 1024 * 1024));
  }
  if (o.format == Format::json) {
    Json j = planner::simulate_json(l);
    if (o.kernels) j["kernels"] = kernels_json(o, l);
    print_stdout(dump_json(j));
    return 0;
  }
  if (o.format == Format::csv) {
    Table t;
    t.header = {"model", "cluster", "gpus", "plan", "step_time_s", "tokens_per_s", "mfu", "memory_peak_GiB", "fits_memory"};
    t.rows.push_back({l.model.name, l.setup->cluster.name(), std::to_string(l.plan.gpus()), models::to_string(l.plan),
                      fixed(p.step_time_s, 6), fixed(p.tokens_per_s, 1), fixed(p.mfu, 4),
                      fixed(p.memory.total().value / (1024.0 * 1024 * 1024), 3), p.fits_memory ? "true" : "false"});
    print_stdout(t.to_csv());
    return 0;
  }
  print_stdout(text_report(o, l) + (o.kernels ? kernels_text(o, l) : ""));
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
  sub->add_option("--model", opts->q.model, "Model: a catalog name (e.g. gpt3-175b), a model JSON or an HF config.json (required)");
  sub->add_option("--cluster", opts->q.cluster, "Cluster: a name from topologies/ (e.g. h100-rail-ndr) or a JSON file (required)");
  sub->add_option("--nodes", opts->q.nodes, "Nodes to build the cluster with (default: as many as the plan needs)");
  sub->add_option("--gpus", opts->q.gpus, "GPUs to build the cluster with, rounded up to whole nodes (default: the plan's)");
  sub->add_option("--plan", opts->q.plan,
                  "Plan: \"tp=8,pp=8,dp=16,mbs=1,gbs=1536,schedule=1f1b,recompute=full\" or a plan JSON file "
                  "(keys in docs/plan-format.md: tp pp dp cp zero mbs gbs seq schedule vpp recompute sp precision "
                  "fp8_recipe fp8_params overlap_grad_reduce overlap_param_gather tp_comm_overlap cp_comm "
                  "first_stage_layers last_stage_layers pp_layout bucket_MB overlap ep etp lora_rank lora_modules "
                  "packed_doc_tokens ...) (this or --plan-from-megatron)");
  sub->add_option("--plan-from-megatron", opts->megatron,
                  "The plan of a Megatron-LM command line (\"--tensor-model-parallel-size 8 --pipeline-model-parallel-size "
                  "16 ...\") or of a file holding one; the world size comes from --nnodes x --nproc-per-node in it, else "
                  "--gpus or --nodes. Flags that set nothing are listed on stderr; contradictions are rejected");
  sub->add_option("--calibration", opts->q.calibration,
                  "Calibration: profile names, files or directories, comma-separated, composed part by part (GEMM, "
                  "attention, memory and launch from the first that measured them; collectives fitted on the cluster "
                  "from the first with collective rows, or a collective-parameters JSON from `calibrate fit -o`). What "
                  "none measured is priced from the cluster's datasheet, with a warning. `none`: datasheet only");
  sub->add_flag("--strict", opts->q.strict,
                "Refuse a calibration measured on another GPU type than the cluster's (default: a warning)");
  sub->add_option("--fidelity", opts->q.fidelity, "analytical (one representative pipeline, closed-form collectives) or "
                                                "flow (every rank, transfers share links)")
      ->default_str("analytical");
  sub->add_flag("--all-ranks", opts->q.all_ranks, "Simulate every rank also at analytical fidelity");
  sub->add_flag("--no-rail-classes", opts->q.no_rail_classes,
                "Flow fidelity: build and simulate every TP rank even where the TP-rank-0 ranks stand exactly for "
                "their peers (rail-symmetric clusters, TP inside nodes, intra-node collectives analytical)");
  sub->add_option("--intra-node", opts->q.intra_node,
                  "Flow fidelity: intra-node collectives at their analytical time (analytical, faster) or as flows")
      ->default_str("analytical");
  sub->add_option("--attention", opts->q.attention,
                  "flash (FlashAttention kernel, no stored scores), cudnn (cuDNN's fused attention, priced at the "
                  "profile's cuDNN rows: what PyTorch's SDPA picks on H100 / H200 unless told otherwise, and "
                  "Transformer Engine's FusedAttention; stack rows that name their backend keep it) or unfused "
                  "(Megatron 2021: score GEMMs, softmax and dropout kernels)")
      ->default_str("flash");
  add_framework_options(sub, opts->stack);
  sub->add_flag("--no-power-cap", [opts](std::int64_t) { opts->q.power_cap = false; },
                "Price tensor-core kernels at the profile's burst rates even where its `power` section says the GPU "
                "clocks down at its power cap (docs/power.md)");
  sub->add_flag("--per-layer-tasks", opts->q.per_layer_tasks, "One task per layer and TP collective (finer traces, slower)");
  sub->add_option("--trace", opts->trace, "Write a Perfetto / Chrome trace of the iteration to this file");
  sub->add_flag("--kernels", opts->kernels,
                "Also list the software stack's kernels of one layer of each kind (one micro-batch, one rank): time, "
                "rate and provenance of each row as the prediction prices it (text and json output)");
  add_format_option(sub, opts->format);
  sub->callback([opts, &ctx] { ctx.exit_code = run(*opts); });
}

}  // namespace scalescope::cli
