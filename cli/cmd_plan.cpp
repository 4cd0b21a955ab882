// `scalescope plan`: search the parallel plans of a model on a cluster and rank them.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "megatron_plan.hpp"
#include "planner_format.hpp"
#include "scalescope/planner/plan_mpi.hpp"
#include "scalescope/planner/plan_run.hpp"

namespace scalescope::cli {

namespace {

using namespace plan_fmt;

struct PlanOptions {
  planner::PlanRequest q;  ///< the options the search takes, bound to the flags below
  std::string megatron;  ///< --plan-from-megatron
  int threads = 0;
  bool mpi = false;
  Format format = Format::text;
};

std::string counts_text(const planner::PruneCounts& c) {
  std::string s = "layouts (tp, cp, pp): " + std::to_string(c.layouts) + " considered, " +
                  std::to_string(c.layouts_tp_cross_node) + " tp across nodes, " + std::to_string(c.layouts_tp_heads) +
                  " tp not dividing heads, " + std::to_string(c.layouts_cp_seq) + " cp leaving < " +
                  std::to_string(planner::SearchSpace{}.min_cp_tokens) + " tokens or 2cp not dividing the sequence, " +
                  std::to_string(c.layouts_pp_layers) + " pp not dividing layers (" + std::to_string(c.layouts_uneven) +
                  " more with uneven first/last stages), " + std::to_string(c.layouts_gbs_not_divisible) +
                  " gbs not divisible by dp\n";
  s += "plans: " + std::to_string(c.plans) + " enumerated, " + std::to_string(c.fixed_out) + " excluded by --fix, " +
       std::to_string(c.invalid) + " invalid";
  if (!c.invalid_by_rule.empty()) {
    s += " (";
    bool first = true;
    for (const auto& [k, v] : c.invalid_by_rule) {
      s += (first ? "" : ", ") + k + ": " + std::to_string(v);
      first = false;
    }
    s += ")";
  }
  s += ", " + std::to_string(c.out_of_memory) + " out of memory, " + std::to_string(c.dominated) +
       " dominated (a plan with less recompute fits), " + std::to_string(c.bounded) +
       " skipped (lower bound above the top), " + std::to_string(c.failed) + " failed, " +
       std::to_string(c.evaluated) + " simulated\n";
  return s;
}

int run(const PlanOptions& o) {
  const std::string cmd = "plan";
  planner::SearchOptions so;
  so.threads = o.threads;
  so.progress = [next = 0L](long done, long total) mutable {
    if (total < 2000) return;
    if (done * 10 >= next * total) {
      std::fprintf(stderr, "scalescope plan: %ld / %ld plans simulated or skipped by the bound\n", done, total);
      next = done * 10 / total + 1;
    }
  };
  std::shared_ptr<planner::Transport> transport;
  if (o.mpi) {
    auto t = planner::load_mpi_transport();
    if (!t) return report(cmd, t.error());
    transport = std::move(t).value();
  }
  const bool root = !transport || transport->rank() == 0;
  planner::PlanRequest q = o.q;
  if (!o.megatron.empty()) {
    q.base_plan = [&o](const models::ModelSpec& m, int gpus) {
      return plan_from_megatron_flags("plan", o.megatron, m, o.q.cluster, gpus, std::nullopt);
    };
  }
  auto run = transport ? planner::run_plan_distributed(q, so, {}, *transport) : planner::run_plan(q, so);
  if (!run) return root ? report(cmd, run.error()) : run.error().exit_code();
  if (!root) return 0;
  const planner::EvalSetup& s = *run->setup;
  const models::ModelSpec* model = &run->model;
  const planner::SearchSpace& space = run->space;
  so.flow_top = run->flow_top;
  const planner::SearchResult& r = run->result;
  const std::string header = "scalescope plan: " + model->name + " (seq " + std::to_string(model->seq_len) + ") on " +
                             std::to_string(space.gpus) + " GPUs of " + s.cluster.name() + " (" +
                             std::to_string(s.cluster.num_nodes()) + " node(s) x " + std::to_string(s.cluster.gpus_per_node()) +
                             " " + s.cluster.gpu_spec().model + "), gbs " + std::to_string(space.gbs) + "\n";
  const int rc = r.ranked.empty() ? 1 : 0;
  if (o.format == Format::json) {
    print_stdout(dump_json(planner::plan_json(*run)));
    return rc;
  }
  if (o.format == Format::csv) {
    Table t;
    t.header = {"rank"};
    for (auto& h : plan_header()) t.header.push_back(h);
    for (const char* h : {"step_time_s", "flow_step_time_s", "tokens_per_s", "mfu", "memory_GiB", "limiter", "limiter_share"}) {
      t.header.push_back(h);
    }
    for (std::size_t i = 0; i < r.ranked.size(); ++i) {
      const auto& p = r.ranked[i];
      std::vector<std::string> row{std::to_string(i + 1)};
      for (auto& c : plan_cells(p.plan)) row.push_back(c);
      for (auto& c : {fixed(p.step_time_s, 6), p.flow_step_time_s ? fixed(*p.flow_step_time_s, 6) : std::string(),
                      fixed(p.tokens_per_s, 1), fixed(p.mfu, 4), fixed(p.memory_GiB, 3), p.limiter, fixed(p.limiter_share, 4)})
        row.push_back(c);
      t.rows.push_back(row);
    }
    if (r.ranked.empty()) {
      for (const auto& e : r.explanations) std::fprintf(stderr, "scalescope plan: no plan: %s\n", e.c_str());
    }
    print_stdout(t.to_csv());
    return rc;
  }
  std::string out = header + counts_text(r.counts);
  if (r.ranked.empty()) {
    out += "\nno plan can run:\n";
    for (const auto& e : r.explanations) out += "  - " + e + "\n";
    print_stdout(out);
    return rc;
  }
  out += "ranked by step time (analytical, symmetric pipeline); the top " + std::to_string(so.flow_top) +
         " re-simulated at flow fidelity (every rank, shared links) and re-ranked by it\n\n";
  Table t;
  t.header = {"#"};
  for (auto& h : plan_header()) t.header.push_back(h);
  for (const char* h : {"step s", "flow s", "tokens/s", "MFU", "mem GiB", "limiter"}) t.header.push_back(h);
  t.right_align = {true, true, true, true, true, true, false, true, false, true, true, false, false,
                   true, true, true, true, true, false};
  for (std::size_t i = 0; i < r.ranked.size(); ++i) {
    const auto& p = r.ranked[i];
    std::vector<std::string> row{std::to_string(i + 1)};
    for (auto& c : plan_cells(p.plan)) row.push_back(c);
    row.push_back(fixed(p.step_time_s, 4));
    row.push_back(p.flow_step_time_s ? fixed(*p.flow_step_time_s, 4) : "-");
    row.push_back(fixed(p.tokens_per_s, 0));
    row.push_back(fixed(100 * p.mfu, 1) + " %");
    row.push_back(fixed(p.memory_GiB, 1));
    row.push_back(p.limiter + " " + fixed(100 * p.limiter_share, 0) + " %");
    t.rows.push_back(row);
  }
  out += t.to_text();
  out += "memory limit " + fixed(s.cluster.gpu_spec().memory.value / (1024.0 * 1024 * 1024), 1) +
         " GiB per GPU; tokens/s and MFU from the flow step time where confirmed; collectives: " + s.collective_source +
         "; compute: " + s.compute_source + "\n";
  print_stdout(out);
  return rc;
}

}  // namespace

void register_plan(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<PlanOptions>();
  CLI::App* sub = app.add_subcommand(
      "plan",
      "Search the parallel plans (tp, cp, pp with uneven stages where needed, dp, ZeRO stage, micro-batch, schedule, "
      "recompute, sequence parallelism, precision, Megatron-Core overlap flags) of a model on a cluster: prune the invalid and out-of-memory ones, simulate the rest (analytical, all cores), confirm "
      "the best at flow fidelity and rank them. Exit 1 (with the reasons) when no plan can run.");
  sub->add_option("--model", o->q.model, "Model: a catalog name (e.g. gpt3-175b), a model JSON or an HF config.json (required)");
  sub->add_option("--cluster", o->q.cluster, "Cluster: a name from topologies/ (e.g. h100-rail-ndr) or a JSON file (required)");
  sub->add_option("--nodes", o->q.nodes, "Nodes to build the cluster with (default: the file's); every GPU is used");
  sub->add_option("--gpus", o->q.gpus, "GPUs to plan for (the cluster is built with enough whole nodes)");
  sub->add_option("--gbs", o->q.gbs, "Global batch size in sequences (required)");
  sub->add_option("--seq", o->q.seq, "Sequence length (default: the model's)");
  sub->add_option("--calibration", o->q.calibration, "Calibration profile or collective-parameters JSON (as for `simulate`)");
  sub->add_option("--top", o->q.top, "Plans to list")->default_str("10");
  sub->add_option("--flow-top", o->q.flow_top, "Of those, how many to re-simulate at flow fidelity (0: none)")->default_str("3");
  sub->add_option("--fix", o->q.fix, "Keep fields fixed: \"tp=8,pp=4,zero=1,mbs=1,schedule=1f1b,vpp=2,recompute=full,sp=1\"");
  sub->add_flag("--allow-cross-node-tp", o->q.cross_node_tp, "Allow tensor parallelism across nodes");
  sub->add_option("--max-mbs", o->q.max_mbs, "Largest micro-batch size tried")->default_str("8");
  sub->add_option("--max-vpp", o->q.max_vpp, "Largest virtual-pipeline size tried for the interleaved schedule")->default_str("8");
  sub->add_option("--max-cp", o->q.max_cp,
                  "Largest context-parallel size tried (1: none); cp is tried while each rank keeps >= " +
                      std::to_string(planner::SearchSpace{}.min_cp_tokens) + " tokens of a sequence")
      ->default_str("8");
  sub->add_option("--max-ep", o->q.max_ep,
                  "Largest expert-parallel size tried for MoE models (0: up to the number of experts); etp, the "
                  "dispatcher and moe_imbalance come from --plan-from-megatron's flags or their defaults")
      ->default_str("0");
  sub->add_option("--precisions", o->q.precisions,
                  "Precisions tried, comma-separated: mixed, bf16, fp16, fp8 (fp8 needs a GPU with an fp8 peak)")
      ->default_str("mixed");
  sub->add_option("--plan-from-megatron", o->megatron,
                  "Search the layouts (tp, cp, pp, dp, mbs, ...) for the stack of a Megatron-LM command line (or a file "
                  "holding one): its precision, FP8 recipe, gradient dtype and overlap flags are kept, the rest searched");
  sub->add_option("--fine-tune", o->q.fine_tune,
                  "Plan a fine-tuning job: keys every plan takes, \"lora_rank=32,lora_modules=qkv+proj+fc1+fc2,"
                  "packed_doc_tokens=180\" (LoRA adapters on frozen weights; packed documents of that mean length; "
                  "docs/plan-format.md)");
  sub->add_option("--threads", o->threads, "Worker threads (default: all cores); the ranking does not depend on it");
  sub->add_flag("--exhaustive", o->q.exhaustive,
                "Simulate every fitting plan, also those whose step-time lower bound shows they cannot reach the top "
                "(slower; the ranked plans are the same)");
  sub->add_flag("--mpi", o->mpi,
                "Simulate the candidate plans across the ranks of an MPI job (mpirun -np N scalescope plan --mpi ...; "
                "rank 0 prints; the ranking equals the one-process search's)");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run(*o); });
}

}  // namespace scalescope::cli
