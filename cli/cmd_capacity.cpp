// `scalescope capacity`: how many nodes train a token budget in a number of days, at what cost,
// and the predicted scaling curve over node counts.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "planner_format.hpp"
#include "scalescope/planner/capacity.hpp"
#include "scalescope/planner/setup.hpp"

namespace scalescope::cli {

namespace {

using namespace plan_fmt;

struct CapacityOptions {
  std::string model, tokens, node, fabric, calibration, fix;
  double days = 0;
  std::optional<double> price;
  int max_nodes = 128;
  std::optional<int> gbs, seq;
  double batch_tokens = 4.0 * 1024 * 1024;
  int threads = 0;
  Format format = Format::text;
};

/// --fabric names the cluster file (node template + fabric); --node, when given, must be the node
/// those files are built from (same GPU model and GPUs per node), or is used alone without --fabric.
Expected<std::string> resolve_cluster(const CapacityOptions& o) {
  if (o.fabric.empty() && o.node.empty())
    return input_error("", "--fabric", "give --fabric (a multi-node cluster file such as h100-rail-ndr) and/or --node");
  if (o.fabric.empty()) return o.node;
  if (!o.node.empty()) {
    ClusterOptions one;
    one.nodes = 1;
    auto n = load_cluster_by_name_or_path(o.node, one);
    if (!n) return n.error();
    auto f = load_cluster_by_name_or_path(o.fabric, one);
    if (!f) return f.error();
    if (n->gpu_spec().model != f->gpu_spec().model || n->gpus_per_node() != f->gpus_per_node())
      return input_error("", "--node", "node '" + o.node + "' (" + std::to_string(n->gpus_per_node()) + " x " +
                                           n->gpu_spec().model + ") is not the node of fabric '" + o.fabric + "' (" +
                                           std::to_string(f->gpus_per_node()) + " x " + f->gpu_spec().model + ")");
  }
  return o.fabric;
}

int run(const CapacityOptions& o) {
  const std::string cmd = "capacity";
  if (o.model.empty()) return report(cmd, input_error("", "--model", "a model name or file is required"));
  auto tokens = parse_count(o.tokens);
  if (!tokens) return report(cmd, input_error("", "--tokens", "expected a positive count such as 15T, 300B or 2e12, got '" + o.tokens + "'"));
  if (!(o.days > 0)) return report(cmd, input_error("", "--days", "expected a positive number of days"));
  auto model = models::load_model_by_name_or_path(o.model);
  if (!model) return report(cmd, model.error());
  if (o.seq) {
    if (*o.seq <= 0) return report(cmd, input_error("", "--seq", "expected a positive sequence length"));
    model->seq_len = *o.seq;
  }
  auto cluster = resolve_cluster(o);
  if (!cluster) return report(cmd, cluster.error());
  planner::CapacityRequest rq;
  rq.tokens = *tokens;
  rq.days = o.days;
  rq.price_per_gpu_hour = o.price.value_or(2.5);
  rq.max_nodes = o.max_nodes;
  rq.gbs = o.gbs.value_or(std::max(1, static_cast<int>(o.batch_tokens / model->seq_len)));
  rq.cluster = *cluster;
  rq.calibration = o.calibration;
  rq.threads = o.threads;
  if (!o.fix.empty()) {
    auto f = planner::parse_plan_filter(o.fix);
    if (!f) return report(cmd, f.error());
    rq.space.fix = *f;
  }
  auto res = planner::plan_capacity(*model, rq, [](int nodes) {
    std::fprintf(stderr, "scalescope capacity: searching plans on %d node(s)\n", nodes);
  });
  if (!res) return report(cmd, res.error());
  const planner::CapacityResult& r = *res;
  const std::string price_note = o.price ? "price " + fixed(rq.price_per_gpu_hour, 2) + " USD per GPU-hour (given)"
                                         : "price " + fixed(rq.price_per_gpu_hour, 2) + " USD per GPU-hour (an assumption; set --price-gpu-hour)";
  const int rc = r.chosen ? 0 : 1;
  if (o.format == Format::json) {
    Json curve = Json::array();
    for (const auto& p : r.curve) {
      Json j = {{"nodes", p.nodes}, {"gpus", p.gpus}};
      if (p.best) {
        j["best"] = ranked_json(*p.best);
        j["days"] = sig(p.days_needed, 4);
        j["cost_usd"] = sig(p.cost_usd, 4);
        j["speedup"] = opt_json(p.speedup, 4);
        j["efficiency"] = opt_json(p.efficiency, 4);
      } else {
        j["best"] = nullptr;
        j["why_none"] = p.why_none;
      }
      curve.push_back(j);
    }
    auto fitj = [](const std::optional<planner::ScalingFit>& f) -> Json {
      if (!f) return nullptr;
      return Json{{"serial_fraction", sig(f->serial_fraction, 4)}, {"r2", sig(f->r2, 4)}};
    };
    Json j = {{"model", model->name}, {"seq_len", model->seq_len}, {"cluster", rq.cluster}, {"tokens", *tokens},
              {"days", o.days}, {"gbs", rq.gbs}, {"price_per_gpu_hour", rq.price_per_gpu_hour},
              {"price_assumed", !o.price}, {"chosen_nodes", r.chosen ? Json(r.curve[*r.chosen].nodes) : Json(nullptr)},
              {"base_nodes", r.base_nodes}, {"amdahl", fitj(r.amdahl)}, {"gustafson", fitj(r.gustafson)}, {"curve", curve}};
    print_stdout(dump_json(j));
    return rc;
  }
  Table t;
  t.header = {"nodes", "gpus", "best plan", "step_s", "tokens_per_s", "mfu", "days", "cost_usd", "speedup", "efficiency"};
  t.right_align = {true, true, false, true, true, true, true, true, true, true};
  for (const auto& p : r.curve) {
    if (!p.best) {
      t.rows.push_back({std::to_string(p.nodes), std::to_string(p.gpus), "none: " + (p.why_none.empty() ? std::string() : p.why_none.front()),
                        "-", "-", "-", "-", "-", "-", "-"});
      continue;
    }
    const auto& b = *p.best;
    const std::string plan = "tp" + std::to_string(b.plan.tp) + " pp" + std::to_string(b.plan.pp) + " dp" +
                             std::to_string(b.plan.dp) + " z" + std::to_string(b.plan.zero) + " mbs" + std::to_string(b.plan.mbs) +
                             " " + std::string(models::to_string(b.plan.schedule)) +
                             (b.plan.vpp > 1 ? " vpp" + std::to_string(b.plan.vpp) : "") + " rc=" +
                             std::string(models::to_string(b.plan.recompute)) + (b.plan.sp ? " sp" : "");
    t.rows.push_back({std::to_string(p.nodes), std::to_string(p.gpus), plan, fixed(b.ranking_time(), 4), fixed(b.tokens_per_s, 0),
                      fixed(b.mfu, 3), fixed(p.days_needed, 1), fixed(p.cost_usd, 0), opt_text(p.speedup, 3),
                      opt_text(p.efficiency, 3)});
  }
  if (o.format == Format::csv) {
    print_stdout(t.to_csv());
    return rc;
  }
  std::string out = "scalescope capacity: " + model->name + " (seq " + std::to_string(model->seq_len) + "), " +
                    o.tokens + " tokens in " + fixed(o.days, 1) + " days on " + rq.cluster + " nodes (" +
                    std::to_string(r.gpus_per_node) + " x " + r.gpu_model + "), gbs " + std::to_string(rq.gbs) +
                    (o.gbs ? "" : " (" + fixed(o.batch_tokens, 0) + " tokens per step, assumed)") + "\n" + price_note + "\n\n";
  out += t.to_text() + "\n";
  if (r.chosen) {
    const auto& c = r.curve[*r.chosen];
    out += "answer: " + std::to_string(c.nodes) + " node(s) (" + std::to_string(c.gpus) + " GPUs) train " + o.tokens +
           " tokens in " + fixed(c.days_needed, 1) + " days for about " + fixed(c.cost_usd, 0) + " USD\n";
  } else {
    out += "answer: no node count up to " + std::to_string(o.max_nodes) + " trains " + o.tokens + " tokens in " +
           fixed(o.days, 1) + " days; raise --max-nodes or --days\n";
  }
  auto fit_line = [](const char* name, const std::optional<planner::ScalingFit>& f) {
    return std::string(name) + (f ? " s=" + fixed(f->serial_fraction, 4) + " R2=" + fixed(f->r2, 3) : " -");
  };
  out += "scaling over node counts (fixed global batch, base " + std::to_string(r.base_nodes) + " node(s)): " +
         fit_line("Amdahl", r.amdahl) + "; " + fit_line("Gustafson", r.gustafson) + "\n";
  print_stdout(out);
  return rc;
}

}  // namespace

void register_capacity(CLI::App& app, Context& ctx) {
  auto o = std::make_shared<CapacityOptions>();
  CLI::App* sub = app.add_subcommand(
      "capacity",
      "Smallest node count (1, 2, 3, 4, 6, 8, 12, ... up to --max-nodes) whose best plan (analytical search) trains "
      "--tokens in --days, its cost, and the predicted scaling curve with Amdahl / Gustafson fits. Exit 1 when no "
      "node count is enough.");
  sub->add_option("--model", o->model, "Model: catalog name or file (required)");
  sub->add_option("--tokens", o->tokens, "Training tokens: 15T, 300B, 2e12 (required)");
  sub->add_option("--days", o->days, "Wall-clock days available (required)");
  sub->add_option("--fabric", o->fabric,
                  "Multi-node cluster file from topologies/ (e.g. h100-rail-ndr: dgx-h100-8 nodes on a rail-optimized "
                  "NDR fabric; superpod-a100) or a JSON file; it is built at each node count");
  sub->add_option("--node", o->node,
                  "Node template (e.g. dgx-h100-8, hgx-h200-8). With --fabric: checked to be the fabric's node (GPU "
                  "model and count). Alone: that file is used at each node count (it must describe a fabric)");
  sub->add_option("--price-gpu-hour", o->price, "USD per GPU-hour (default 2.50, an assumption)");
  sub->add_option("--max-nodes", o->max_nodes, "Largest node count searched")->default_str("128");
  sub->add_option("--gbs", o->gbs, "Global batch in sequences (default: --batch-tokens / seq)");
  sub->add_option("--batch-tokens", o->batch_tokens, "Tokens per step when --gbs is not given (default 4Mi, an assumption)");
  sub->add_option("--seq", o->seq, "Sequence length (default: the model's)");
  sub->add_option("--calibration", o->calibration, "Calibration profile or collective-parameters JSON");
  sub->add_option("--fix", o->fix, "Keep plan fields fixed, as for `plan`");
  sub->add_option("--threads", o->threads, "Worker threads (default: all cores)");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run(*o); });
}

}  // namespace scalescope::cli
