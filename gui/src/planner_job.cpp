// Plan search and throughput sweep for the planner tab (see planner_job.hpp); mirrors cli/cmd_plan.cpp.
#include "scalescope/gui/planner_job.hpp"

#include <algorithm>

#include "scalescope/planner/capacity.hpp"
#include "scalescope/planner/setup.hpp"

namespace scalescope::gui {

std::vector<int> sweep_gpu_counts(int gpus_per_node, int nodes) {
  std::vector<int> out;
  for (int g = 1; g < gpus_per_node; g *= 2) out.push_back(g);
  for (int n : planner::capacity_node_counts(std::max(1, nodes))) out.push_back(n * gpus_per_node);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

bool cancelled(const std::atomic<bool>* cancel) { return cancel != nullptr && cancel->load(); }

planner::SearchOptions search_options(int top, int flow_top, int threads, const std::atomic<bool>* cancel,
                                      const PlannerProgress& progress, const std::string& stage) {
  planner::SearchOptions so;
  so.top = top;
  so.flow_top = std::min(flow_top, top);
  so.threads = threads;
  so.cancel = cancel;
  if (progress) so.progress = [progress, stage](long done, long total) { progress(stage, done, total); };
  return so;
}

}  // namespace

Expected<PlannerOutcome> run_planner(const PlannerRequest& rq, const std::atomic<bool>* cancel,
                                     const PlannerProgress& progress) {
  // The same checks and calls as `scalescope plan --model M --cluster C [--nodes N] --gbs B ...`.
  if (rq.model.empty()) return input_error("", "model", "a model name or file is required");
  if (rq.cluster.empty()) return input_error("", "cluster", "a cluster name or file is required");
  if (rq.gbs <= 0) return input_error("", "gbs", "expected a positive global batch size");
  if (rq.top < 1) return input_error("", "top", "expected a positive count");
  if (rq.flow_top < 0) return input_error("", "flow top", "expected a count >= 0");
  auto model = models::load_model_by_name_or_path(rq.model);
  if (!model) return model.error();
  ClusterOptions co;
  if (rq.nodes > 0) co.nodes = rq.nodes;
  if (progress) progress("loading cluster and calibration", 0, 1);
  auto setup = planner::load_setup(rq.cluster, co, rq.calibration);
  if (!setup) return setup.error();
  const planner::EvalSetup& s = **setup;
  planner::SearchSpace space;
  space.gpus = s.cluster.num_gpus();
  space.gbs = rq.gbs;
  space.max_mbs = rq.max_mbs;
  if (!rq.fix.empty()) {
    auto f = planner::parse_plan_filter(rq.fix, "fix");
    if (!f) return f.error();
    space.fix = *f;
  }
  PlannerOutcome out;
  out.request = rq;
  out.gpus = space.gpus;
  out.gpu_memory_GiB = s.cluster.gpu_spec().memory.value / (1024.0 * 1024 * 1024);
  out.collective_source = s.collective_source;
  out.compute_source = s.compute_source;
  out.header = model->name + " (seq " + std::to_string(model->seq_len) + ") on " + std::to_string(space.gpus) +
               " GPUs of " + s.cluster.name() + " (" + std::to_string(s.cluster.num_nodes()) + " node(s) x " +
               std::to_string(s.cluster.gpus_per_node()) + " " + s.cluster.gpu_spec().model + "), gbs " +
               std::to_string(space.gbs);
  if (cancelled(cancel)) return runtime_error("plan search cancelled");
  auto res = planner::search(*model, s.cluster, s.collectives, s.compute, space,
                             search_options(rq.top, rq.flow_top, rq.threads, cancel, progress, "searching plans"));
  if (!res) return res.error();
  out.result = std::move(res).value();
  if (!rq.sweep) return out;

  // Sweep: the best plan per GPU count (analytical ranking, as `plan --gpus G --top 1 --flow-top 0`).
  const std::vector<int> counts = sweep_gpu_counts(s.cluster.gpus_per_node(), s.cluster.num_nodes());
  std::vector<planner::SpeedupPoint> pts;
  const SweepPoint* base = nullptr;
  out.sweep.reserve(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    if (cancelled(cancel)) return runtime_error("plan search cancelled");
    const int g = counts[i];
    const std::string stage = "sweep " + std::to_string(i + 1) + "/" + std::to_string(counts.size()) + ": " +
                              std::to_string(g) + " GPU(s)";
    if (progress) progress(stage, 0, 1);
    ClusterOptions gco;
    gco.gpus = g;
    auto gs = planner::load_setup(rq.cluster, gco, rq.calibration);
    if (!gs) return gs.error();
    planner::SearchSpace gspace = space;
    gspace.gpus = g;
    auto r = planner::search(*model, (*gs)->cluster, (*gs)->collectives, (*gs)->compute, gspace,
                             search_options(1, 0, rq.threads, cancel, progress, stage));
    if (!r) return r.error();
    SweepPoint pt;
    pt.gpus = g;
    if (r->ranked.empty()) {
      pt.why_none = r->explanations.empty() ? std::string("no plan") : r->explanations.front();
    } else {
      pt.best = r->ranked.front();
    }
    out.sweep.push_back(std::move(pt));
    SweepPoint& p = out.sweep.back();
    if (!p.best) continue;
    if (base == nullptr) base = &p;
    p.speedup = p.best->tokens_per_s / base->best->tokens_per_s;
    pts.push_back({static_cast<double>(p.gpus) / base->gpus, *p.speedup});
  }
  if (base != nullptr) out.sweep_base_gpus = base->gpus;
  out.amdahl = planner::fit_amdahl(pts);
  return out;
}

}  // namespace scalescope::gui
