// Plan search: parallel analytical evaluation, deterministic ranking, flow confirmation, and
// explanations of impossible requests.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>
#include <tuple>

#include "scalescope/planner/search.hpp"

namespace scalescope::planner {

namespace {

std::string gib_text(Bytes b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", b.value / (1024.0 * 1024 * 1024));
  return buf;
}

auto plan_key(const models::Plan& p) {
  return std::make_tuple(p.tp, p.pp, p.dp, p.zero, p.mbs, static_cast<int>(p.schedule), p.vpp,
                         static_cast<int>(p.recompute), p.sp);
}

struct Evaluated {
  bool ok = false;
  RankedPlan r;
};

RankedPlan summarise(const models::Plan& plan, const models::Prediction& p) {
  RankedPlan r;
  r.plan = plan;
  r.step_time_s = p.step_time_s;
  r.tokens_per_s = p.tokens_per_s;
  r.mfu = p.mfu;
  r.memory_GiB = p.memory.total().value / (1024.0 * 1024 * 1024);
  r.breakdown = p.sim.breakdown;
  std::tie(r.limiter, r.limiter_share) = limiting_factor(r.breakdown);
  return r;
}

bool ranked_less(const RankedPlan& a, const RankedPlan& b) {
  if (a.ranking_time() != b.ranking_time()) return a.ranking_time() < b.ranking_time();
  return plan_key(a.plan) < plan_key(b.plan);
}

}  // namespace

bool plan_less(const models::Plan& a, const models::Plan& b) { return plan_key(a) < plan_key(b); }

std::pair<std::string, double> limiting_factor(const Breakdown& b) {
  using BP = BreakdownPart;
  const std::pair<const char*, Seconds> parts[] = {
      {"compute", b.compute() + b[BP::optimizer] + b[BP::other_compute]},
      {"exposed TP comm", b[BP::tp_comm]},
      {"exposed SP comm", b[BP::sp_comm]},
      {"exposed DP comm", b[BP::dp_comm]},
      {"exposed ZeRO comm", b[BP::zero_comm]},
      {"exposed PP comm", b[BP::pp_comm]},
      {"exposed other comm", b[BP::other_comm]},
      {"pipeline bubble", b[BP::bubble]}};
  std::size_t best = 0;
  for (std::size_t i = 1; i < std::size(parts); ++i)
    if (parts[i].second > parts[best].second) best = i;
  const double total = b.total.value;
  return {parts[best].first, total > 0 ? parts[best].second.value / total : 0.0};
}

Expected<models::Prediction> evaluate(const models::ModelSpec& model, const models::Plan& plan, const Cluster& cluster,
                                      const models::ComputeModel& compute, const CollectiveModel& collectives,
                                      Fidelity fidelity) {
  models::PredictOptions po;
  po.fidelity = fidelity;
  po.build.costs.flash_attention = true;
  po.build.costs.dropout = false;
  return models::predict(model, plan, cluster, collectives, compute, po);
}

Expected<SearchResult> search(const models::ModelSpec& model, const Cluster& cluster, const CollectiveModel& collectives,
                              const models::ComputeModel& compute, const SearchSpace& space,
                              const SearchOptions& options) {
  if (space.gpus <= 0) return input_error("", "--gpus", "expected a positive GPU count");
  if (space.gbs <= 0) return input_error("", "--gbs", "expected a positive global batch size");
  if (space.gpus > cluster.num_gpus())
    return input_error("", "--gpus", std::to_string(space.gpus) + " GPUs requested but the cluster has " +
                                         std::to_string(cluster.num_gpus()));
  const Bytes capacity = cluster.gpu_spec().memory;
  Enumeration e = enumerate_plans(model, space, cluster.gpus_per_node(), capacity);
  SearchResult res;
  res.min_memory = e.min_memory;

  const long total = static_cast<long>(e.candidates.size());
  std::vector<Evaluated> out(e.candidates.size());
  std::atomic<long> next{0}, done{0};
  std::mutex progress_mutex;
  auto worker = [&] {
    for (long i = next++; i < total; i = next++) {
      const auto idx = static_cast<std::size_t>(i);
      auto pred = evaluate(model, e.candidates[idx], cluster, compute, collectives, Fidelity::analytical);
      if (pred) {
        out[idx].ok = true;
        out[idx].r = summarise(e.candidates[idx], *pred);
      }
      const long d = ++done;
      if (options.progress) {
        std::lock_guard lock(progress_mutex);
        options.progress(d, total);
      }
    }
  };
  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::max<long>(total, 1))));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  std::vector<RankedPlan> ranked;
  for (auto& ev : out) {
    if (ev.ok) ranked.push_back(std::move(ev.r));
    else ++e.counts.failed;
  }
  e.counts.evaluated = static_cast<long>(ranked.size());
  std::sort(ranked.begin(), ranked.end(), ranked_less);  // total order: stable by construction
  if (static_cast<int>(ranked.size()) > options.top) ranked.resize(static_cast<std::size_t>(std::max(0, options.top)));

  const int confirm = std::min<int>(options.flow_top, static_cast<int>(ranked.size()));
  for (int i = 0; i < confirm; ++i) {
    auto& r = ranked[static_cast<std::size_t>(i)];
    auto flow = evaluate(model, r.plan, cluster, compute, collectives, Fidelity::flow);
    if (!flow) return runtime_error("flow confirmation of " + models::to_string(r.plan) + " failed: " + flow.error().str());
    r.flow_step_time_s = flow->step_time_s;
    r.tokens_per_s = flow->tokens_per_s;
    r.mfu = flow->mfu;
  }
  std::sort(ranked.begin(), ranked.begin() + confirm, ranked_less);
  res.ranked = std::move(ranked);
  res.counts = e.counts;

  if (res.ranked.empty()) {
    const PruneCounts& c = res.counts;
    if (c.layouts == c.layouts_tp_cross_node + c.layouts_tp_heads + c.layouts_gbs_not_divisible + c.layouts_pp_layers &&
        c.layouts_gbs_not_divisible > 0)
      res.explanations.push_back("gbs " + std::to_string(space.gbs) + " is not divisible by the data-parallel size of any "
                                 "(tp, pp) layout of " + std::to_string(space.gpus) + " GPUs; choose a gbs that is a "
                                 "multiple of gpus / (tp * pp) for some layout");
    if (c.plans == 0 && c.layouts_gbs_not_divisible == 0)
      res.explanations.push_back("no (tp, pp) layout of " + std::to_string(space.gpus) + " GPUs suits the model (" +
                                 std::to_string(model.heads) + " heads, " + std::to_string(model.kv_heads) + " kv heads, " +
                                 std::to_string(model.layers) + " layers, " + std::to_string(cluster.gpus_per_node()) +
                                 " GPUs per node" + (space.allow_cross_node_tp ? "" : ", tp within a node") + ")");
    if (c.plans > 0 && c.plans == c.fixed_out)
      res.explanations.push_back("--fix excludes every enumerated plan" +
                                 std::string(c.layouts_gbs_not_divisible > 0
                                                 ? " (" + std::to_string(c.layouts_gbs_not_divisible) +
                                                       " (tp, pp) layout(s) were dropped before: gbs not divisible by their dp)"
                                                 : ""));
    if (c.out_of_memory > 0 && e.min_memory && *e.min_memory > capacity)
      res.explanations.push_back("the model does not fit: the smallest plan found (" + models::to_string(*e.min_memory_plan) +
                                 ") needs " + gib_text(*e.min_memory) + " per GPU, the GPUs have " + gib_text(capacity) +
                                 "; use more GPUs or a larger ZeRO stage / recompute");
    if (c.invalid > 0 && c.out_of_memory == 0 && c.dominated == 0 && c.evaluated == 0 && c.failed == 0)
      res.explanations.push_back("every remaining plan was invalid for the model (see the pruning counts)");
    if (c.failed > 0) res.explanations.push_back(std::to_string(c.failed) + " plan(s) failed to simulate");
    if (res.explanations.empty()) res.explanations.push_back("no plan survived pruning (see the pruning counts)");
  }
  return res;
}

}  // namespace scalescope::planner
