// `scalescope capacity`: how many nodes train a token budget in a number of days, at what cost,
// and the predicted scaling curve over node counts.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "planner_format.hpp"
#include "scalescope/planner/capacity_run.hpp"

namespace scalescope::cli {

namespace {

using namespace plan_fmt;

struct CapacityOptions {
  planner::CapacityRunRequest q;  ///< the options the search takes, bound to the flags below
  Format format = Format::text;
};

int run(const CapacityOptions& o) {
  const std::string cmd = "capacity";
  auto run = planner::run_capacity(o.q, [](int nodes) {
    std::fprintf(stderr, "scalescope capacity: searching plans on %d node(s)\n", nodes);
  });
  if (!run) return report(cmd, run.error());
  const planner::CapacityRunRequest& q = o.q;
  const planner::CapacityRequest& rq = run->search;
  const planner::CapacityResult& r = run->result;
  const models::ModelSpec* model = &run->model;
  const std::string price_note = q.price ? "price " + fixed(rq.price_per_gpu_hour, 2) + " USD per GPU-hour (given)"
                                         : "price " + fixed(rq.price_per_gpu_hour, 2) + " USD per GPU-hour (an assumption; set --price-gpu-hour)";
  const int rc = r.chosen ? 0 : 1;
  if (o.format == Format::json) {
    print_stdout(dump_json(planner::capacity_json(*run)));
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
                    q.tokens + " tokens in " + fixed(q.days, 1) + " days on " + rq.cluster + " nodes (" +
                    std::to_string(r.gpus_per_node) + " x " + r.gpu_model + "), gbs " + std::to_string(rq.gbs) +
                    (q.gbs ? "" : " (" + fixed(q.batch_tokens, 0) + " tokens per step, assumed)") + "\n" + price_note + "\n\n";
  out += t.to_text() + "\n";
  if (r.chosen) {
    const auto& c = r.curve[*r.chosen];
    out += "answer: " + std::to_string(c.nodes) + " node(s) (" + std::to_string(c.gpus) + " GPUs) train " + q.tokens +
           " tokens in " + fixed(c.days_needed, 1) + " days for about " + fixed(c.cost_usd, 0) + " USD\n";
  } else {
    out += "answer: no node count up to " + std::to_string(q.max_nodes) + " trains " + q.tokens + " tokens in " +
           fixed(q.days, 1) + " days; raise --max-nodes or --days\n";
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
  sub->add_option("--model", o->q.model, "Model: catalog name or file (required)");
  sub->add_option("--tokens", o->q.tokens, "Training tokens: 15T, 300B, 2e12 (required)");
  sub->add_option("--days", o->q.days, "Wall-clock days available (required)");
  sub->add_option("--fabric", o->q.fabric,
                  "Multi-node cluster file from topologies/ (e.g. h100-rail-ndr: dgx-h100-8 nodes on a rail-optimized "
                  "NDR fabric; superpod-a100) or a JSON file; it is built at each node count");
  sub->add_option("--node", o->q.node,
                  "Node template (e.g. dgx-h100-8, hgx-h200-8). With --fabric: checked to be the fabric's node (GPU "
                  "model and count). Alone: that file is used at each node count (it must describe a fabric)");
  sub->add_option("--price-gpu-hour", o->q.price, "USD per GPU-hour (default 2.50, an assumption)");
  sub->add_option("--max-nodes", o->q.max_nodes, "Largest node count searched")->default_str("128");
  sub->add_option("--gbs", o->q.gbs, "Global batch in sequences (default: --batch-tokens / seq)");
  sub->add_option("--batch-tokens", o->q.batch_tokens, "Tokens per step when --gbs is not given (default 4Mi, an assumption)");
  sub->add_option("--seq", o->q.seq, "Sequence length (default: the model's)");
  sub->add_option("--calibration", o->q.calibration, "Calibration profile or collective-parameters JSON");
  sub->add_option("--fix", o->q.fix, "Keep plan fields fixed, as for `plan`");
  sub->add_option("--threads", o->q.threads, "Worker threads (default: all cores)");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run(*o); });
}

}  // namespace scalescope::cli
