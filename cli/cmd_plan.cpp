// `scalescope plan`: search the parallel plans of a model on a cluster and rank them.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "megatron_plan.hpp"
#include "planner_format.hpp"
#include "scalescope/planner/search.hpp"
#include "scalescope/planner/setup.hpp"

namespace scalescope::cli {

namespace {

using namespace plan_fmt;

struct PlanOptions {
  std::string model, cluster, calibration, fix, precisions = "mixed", megatron;
  std::optional<int> nodes, gpus, seq;
  int gbs = 0;
  int top = 10;
  int flow_top = 3;
  int max_mbs = 8;
  int max_vpp = 8;
  int max_cp = 8;
  int threads = 0;
  bool cross_node_tp = false;
  bool exhaustive = false;
  Format format = Format::text;
};

Json counts_json(const planner::PruneCounts& c) {
  Json rules = Json::object();
  for (const auto& [k, v] : c.invalid_by_rule) rules[k] = v;
  return Json{{"layouts", c.layouts},
              {"layouts_tp_cross_node", c.layouts_tp_cross_node},
              {"layouts_tp_not_dividing_heads", c.layouts_tp_heads},
              {"layouts_pp_not_dividing_layers", c.layouts_pp_layers},
              {"layouts_gbs_not_divisible_by_dp", c.layouts_gbs_not_divisible},
              {"layouts_uneven_pipeline", c.layouts_uneven},
              {"layouts_cp_short_or_not_dividing_sequence", c.layouts_cp_seq},
              {"plans", c.plans},
              {"excluded_by_fix", c.fixed_out},
              {"invalid", c.invalid},
              {"invalid_by_rule", rules},
              {"out_of_memory", c.out_of_memory},
              {"dominated_by_less_recompute", c.dominated},
              {"skipped_by_bound", c.bounded},
              {"failed", c.failed},
              {"evaluated", c.evaluated}};
}

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
  if (o.model.empty()) return report(cmd, input_error("", "--model", "a model name or file is required"));
  if (o.cluster.empty()) return report(cmd, input_error("", "--cluster", "a cluster name or file is required"));
  if (o.gbs <= 0) return report(cmd, input_error("", "--gbs", "expected a positive global batch size"));
  if (o.nodes && o.gpus) return report(cmd, input_error("", "--nodes", "give --nodes or --gpus, not both"));
  if (o.top < 1) return report(cmd, input_error("", "--top", "expected a positive count"));
  if (o.flow_top < 0) return report(cmd, input_error("", "--flow-top", "expected a count >= 0"));
  auto model = models::load_model_by_name_or_path(o.model);
  if (!model) return report(cmd, model.error());
  if (o.seq) {
    if (*o.seq <= 0) return report(cmd, input_error("", "--seq", "expected a positive sequence length"));
    model->seq_len = *o.seq;
  }
  ClusterOptions co;
  co.nodes = o.nodes;
  co.gpus = o.gpus;
  if ((o.nodes && *o.nodes <= 0) || (o.gpus && *o.gpus <= 0))
    return report(cmd, input_error("", o.nodes ? "--nodes" : "--gpus", "expected a positive count"));
  auto setup = planner::load_setup(o.cluster, co, o.calibration);
  if (!setup) return report(cmd, setup.error());
  const planner::EvalSetup& s = **setup;
  planner::SearchSpace space;
  space.gpus = o.gpus.value_or(s.cluster.num_gpus());
  space.gbs = o.gbs;
  space.allow_cross_node_tp = o.cross_node_tp;
  space.max_mbs = o.max_mbs;
  space.max_vpp = o.max_vpp;
  space.max_cp = o.max_cp;
  space.prune_bound = !o.exhaustive;
  space.precisions.clear();
  for (std::size_t at = 0; at <= o.precisions.size();) {
    const std::size_t comma = std::min(o.precisions.find(',', at), o.precisions.size());
    const std::string name = o.precisions.substr(at, comma - at);
    at = comma + 1;
    auto p = models::parse_plan("gbs=1,precision=" + name, "--precisions");
    if (!p) return report(cmd, input_error("", "--precisions", "expected mixed, bf16, fp16 or fp8 separated by commas, got '" + name + "'"));
    if (p->fp8() && !s.cluster.gpu_spec().peak.fp8) {
      return report(cmd, input_error("", "--precisions", "fp8 needs FP8 tensor cores; '" + s.cluster.gpu_spec().model + "' has none"));
    }
    space.precisions.push_back(p->precision);
  }
  if (!o.megatron.empty()) {  // the user's stack: its precision and flags; the layout is searched
    auto base = plan_from_megatron_flags(cmd, o.megatron, *model, o.cluster, space.gpus, std::nullopt);
    if (!base) return report(cmd, base.error());
    space.base = *base;
    space.precisions = {base->precision};
    space.search_overlap = false;
  }
  if (!o.fix.empty()) {
    auto f = planner::parse_plan_filter(o.fix);
    if (!f) return report(cmd, f.error());
    space.fix = *f;
  }
  planner::SearchOptions so;
  so.top = o.top;
  so.flow_top = std::min(o.flow_top, o.top);
  so.threads = o.threads;
  so.progress = [next = 0L](long done, long total) mutable {
    if (total < 2000) return;
    if (done * 10 >= next * total) {
      std::fprintf(stderr, "scalescope plan: %ld / %ld plans simulated or skipped by the bound\n", done, total);
      next = done * 10 / total + 1;
    }
  };
  auto res = planner::search(*model, s.cluster, s.collectives, s.compute, space, so);
  if (!res) return report(cmd, res.error());
  const planner::SearchResult& r = *res;
  const std::string header = "scalescope plan: " + model->name + " (seq " + std::to_string(model->seq_len) + ") on " +
                             std::to_string(space.gpus) + " GPUs of " + s.cluster.name() + " (" +
                             std::to_string(s.cluster.num_nodes()) + " node(s) x " + std::to_string(s.cluster.gpus_per_node()) +
                             " " + s.cluster.gpu_spec().model + "), gbs " + std::to_string(space.gbs) + "\n";
  const int rc = r.ranked.empty() ? 1 : 0;
  if (o.format == Format::json) {
    Json plans = Json::array();
    for (std::size_t i = 0; i < r.ranked.size(); ++i) {
      Json j = ranked_json(r.ranked[i]);
      j["rank"] = i + 1;
      plans.push_back(j);
    }
    Json j = {{"model", model->name}, {"seq_len", model->seq_len}, {"cluster", s.cluster.name()},
              {"gpus", space.gpus}, {"gbs", space.gbs}, {"gpu_memory_GiB", sig(s.cluster.gpu_spec().memory.value / (1024.0 * 1024 * 1024), 4)},
              {"collectives", s.collective_source}, {"compute", s.compute_source},
              {"flow_confirmed", so.flow_top}, {"counts", counts_json(r.counts)}, {"plans", plans},
              {"explanations", r.explanations}};
    print_stdout(dump_json(j));
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
  sub->add_option("--model", o->model, "Model: a catalog name (e.g. gpt3-175b), a model JSON or an HF config.json (required)");
  sub->add_option("--cluster", o->cluster, "Cluster: a name from topologies/ (e.g. h100-rail-ndr) or a JSON file (required)");
  sub->add_option("--nodes", o->nodes, "Nodes to build the cluster with (default: the file's); every GPU is used");
  sub->add_option("--gpus", o->gpus, "GPUs to plan for (the cluster is built with enough whole nodes)");
  sub->add_option("--gbs", o->gbs, "Global batch size in sequences (required)");
  sub->add_option("--seq", o->seq, "Sequence length (default: the model's)");
  sub->add_option("--calibration", o->calibration, "Calibration profile or collective-parameters JSON (as for `simulate`)");
  sub->add_option("--top", o->top, "Plans to list")->default_str("10");
  sub->add_option("--flow-top", o->flow_top, "Of those, how many to re-simulate at flow fidelity (0: none)")->default_str("3");
  sub->add_option("--fix", o->fix, "Keep fields fixed: \"tp=8,pp=4,zero=1,mbs=1,schedule=1f1b,vpp=2,recompute=full,sp=1\"");
  sub->add_flag("--allow-cross-node-tp", o->cross_node_tp, "Allow tensor parallelism across nodes");
  sub->add_option("--max-mbs", o->max_mbs, "Largest micro-batch size tried")->default_str("8");
  sub->add_option("--max-vpp", o->max_vpp, "Largest virtual-pipeline size tried for the interleaved schedule")->default_str("8");
  sub->add_option("--max-cp", o->max_cp,
                  "Largest context-parallel size tried (1: none); cp is tried while each rank keeps >= " +
                      std::to_string(planner::SearchSpace{}.min_cp_tokens) + " tokens of a sequence")
      ->default_str("8");
  sub->add_option("--precisions", o->precisions,
                  "Precisions tried, comma-separated: mixed, bf16, fp16, fp8 (fp8 needs a GPU with an fp8 peak)")
      ->default_str("mixed");
  sub->add_option("--plan-from-megatron", o->megatron,
                  "Search the layouts (tp, cp, pp, dp, mbs, ...) for the stack of a Megatron-LM command line (or a file "
                  "holding one): its precision, FP8 recipe, gradient dtype and overlap flags are kept, the rest searched");
  sub->add_option("--threads", o->threads, "Worker threads (default: all cores); the ranking does not depend on it");
  sub->add_flag("--exhaustive", o->exhaustive,
                "Simulate every fitting plan, also those whose step-time lower bound shows they cannot reach the top "
                "(slower; the ranked plans are the same)");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run(*o); });
}

}  // namespace scalescope::cli
