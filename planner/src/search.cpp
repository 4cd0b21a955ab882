// Plan search: parallel analytical evaluation, deterministic ranking, flow confirmation, and
// explanations of impossible requests.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <mutex>
#include <optional>
#include <thread>
#include <tuple>

#include "scalescope/planner/search.hpp"

#include "scalescope/planner/bound.hpp"
#include "search_impl.hpp"

namespace scalescope::planner {

namespace {

auto plan_key(const models::Plan& p) {
  return std::make_tuple(p.tp, p.pp, p.dp, p.zero, p.mbs, static_cast<int>(p.schedule), p.vpp,
                         static_cast<int>(p.recompute), p.sp, p.cp, static_cast<int>(p.precision),
                         p.overlap_param_gather, p.tp_comm_overlap, p.first_stage_layers, p.last_stage_layers, p.ep);
}

struct Evaluated {
  bool ok = false;
  RankedPlan r;
};

}  // namespace

bool plan_less(const models::Plan& a, const models::Plan& b) { return plan_key(a) < plan_key(b); }

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

std::pair<std::string, double> limiting_factor(const Breakdown& b) {
  using BP = BreakdownPart;
  const std::pair<const char*, Seconds> parts[] = {
      {"compute", b.compute() + b[BP::optimizer] + b[BP::other_compute]},
      {"exposed TP comm", b[BP::tp_comm]},
      {"exposed SP comm", b[BP::sp_comm]},
      {"exposed DP comm", b[BP::dp_comm]},
      {"exposed ZeRO comm", b[BP::zero_comm]},
      {"exposed PP comm", b[BP::pp_comm]},
      {"exposed CP comm", b[BP::cp_comm]},
      {"exposed EP comm", b[BP::ep_comm]},
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
  const std::size_t n = e.candidates.size();
  std::vector<Evaluated> out(n);
  std::vector<bool> skipped(n, false);

  // Evaluation order: ascending lower bound (ties by enumeration order) when bounding, else enumeration order.
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::vector<double> bound(n, 0.0);
  const bool bounding = space.prune_bound && options.top > 0;
  if (bounding) {
    models::CostOptions costs;
    costs.flash_attention = true;  // as evaluate()
    costs.dropout = false;
    PieceCostCache cache(model, compute, collectives, costs);
    for (std::size_t i = 0; i < n; ++i) bound[i] = step_time_lower_bound(model, e.candidates[i], compute, cache);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return bound[a] < bound[b]; });
  }

  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min<int>(threads, kBoundChunk));
  std::atomic<long> done{0};
  std::mutex progress_mutex;
  auto report_progress = [&](long add) {
    const long d = done += add;
    if (options.progress) {
      std::lock_guard lock(progress_mutex);
      options.progress(d, total);
    }
  };
  auto cancelled = [&] { return options.cancel != nullptr && options.cancel->load(); };
  // The `top` best step times so far (ascending): the bound threshold is the last once full.
  std::vector<double> best;
  const auto keep = static_cast<std::size_t>(std::max(0, options.top));
  std::vector<std::size_t> chunk;
  for (std::size_t begin = 0; begin < n && !cancelled(); begin += kBoundChunk) {
    const std::size_t stop = std::min(n, begin + kBoundChunk);
    chunk.clear();
    for (std::size_t k = begin; k < stop; ++k) {
      const std::size_t idx = order[k];
      if (bounding && best.size() == keep && bound[idx] > best.back()) {
        skipped[idx] = true;
        ++e.counts.bounded;
      } else {
        chunk.push_back(idx);
      }
    }
    if (stop - begin > chunk.size()) report_progress(static_cast<long>(stop - begin - chunk.size()));
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
      for (std::size_t j = next++; j < chunk.size(); j = next++) {
        if (cancelled()) break;
        const std::size_t idx = chunk[j];
        auto pred = evaluate(model, e.candidates[idx], cluster, compute, collectives, Fidelity::analytical);
        if (pred) {
          out[idx].ok = true;
          out[idx].r = summarise(e.candidates[idx], *pred);
        }
        report_progress(1);
      }
    };
    if (options.evaluate_chunk) {
      std::vector<std::optional<RankedPlan>> got(chunk.size());
      options.evaluate_chunk(chunk, got);
      for (std::size_t j = 0; j < chunk.size(); ++j)
        if (got[j]) out[chunk[j]] = Evaluated{true, std::move(*got[j])};
      report_progress(static_cast<long>(chunk.size()));
    } else {
      const int workers = std::min<int>(threads, static_cast<int>(chunk.size()));
      std::vector<std::thread> pool;
      for (int t = 1; t < workers; ++t) pool.emplace_back(worker);
      worker();
      for (auto& t : pool) t.join();
    }
    if (bounding) {
      for (std::size_t idx : chunk)
        if (out[idx].ok) best.push_back(out[idx].r.step_time_s);
      std::sort(best.begin(), best.end());
      if (best.size() > keep) best.resize(keep);
    }
  }
  if (cancelled()) return runtime_error("plan search cancelled");

  std::vector<RankedPlan> ranked;
  for (std::size_t i = 0; i < n; ++i) {
    if (out[i].ok) ranked.push_back(std::move(out[i].r));
    else if (!skipped[i]) ++e.counts.failed;
  }
  e.counts.evaluated = static_cast<long>(ranked.size());
  std::sort(ranked.begin(), ranked.end(), ranked_less);  // total order: stable by construction
  if (static_cast<int>(ranked.size()) > options.top) ranked.resize(static_cast<std::size_t>(std::max(0, options.top)));

  // Flow confirmation of the top plans, one plan per thread (each simulation is independent).
  const int confirm = std::min<int>(options.flow_top, static_cast<int>(ranked.size()));
  std::vector<std::optional<Expected<models::Prediction>>> flows(static_cast<std::size_t>(std::max(confirm, 0)));
  {
    std::atomic<int> next_flow{0};
    auto confirm_worker = [&] {
      for (int i = next_flow++; i < confirm; i = next_flow++) {
        if (cancelled()) break;
        flows[static_cast<std::size_t>(i)].emplace(
            evaluate(model, ranked[static_cast<std::size_t>(i)].plan, cluster, compute, collectives, Fidelity::flow));
      }
    };
    std::vector<std::thread> pool;
    for (int t = 1; t < std::min(threads, confirm); ++t) pool.emplace_back(confirm_worker);
    confirm_worker();
    for (auto& t : pool) t.join();
  }
  if (cancelled()) return runtime_error("plan search cancelled");
  for (int i = 0; i < confirm; ++i) {
    auto& r = ranked[static_cast<std::size_t>(i)];
    auto& flow = *flows[static_cast<std::size_t>(i)];
    if (!flow) return runtime_error("flow confirmation of " + models::to_string(r.plan) + " failed: " + flow.error().str());
    r.flow_step_time_s = flow->step_time_s;
    r.tokens_per_s = flow->tokens_per_s;
    r.mfu = flow->mfu;
  }
  std::sort(ranked.begin(), ranked.begin() + confirm, ranked_less);
  res.ranked = std::move(ranked);
  res.counts = e.counts;

  if (res.ranked.empty()) res.explanations = explain_no_plan(model, space, cluster.gpus_per_node(), capacity, e, res.counts);
  return res;
}

}  // namespace scalescope::planner
