// Ranking a fixed list of plans: validity, memory, symmetric analytical simulation, total order.
#include "scalescope/planner/rank.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <thread>

#include "scalescope/models/memory.hpp"
#include "scalescope/models/predict.hpp"

namespace scalescope::planner {

namespace {

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

PlanRanking rank_plans(const models::ModelSpec& model, const std::vector<models::Plan>& plans, const Cluster& cluster,
                       const CollectiveModel& collectives, const models::ComputeModel& compute,
                       const RankOptions& options) {
  const std::size_t n = plans.size();
  std::vector<std::string> why(n);
  std::vector<RankedPlan> result(n);
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      const models::Plan& plan = plans[i];
      if (auto ok = models::validate(plan, model, cluster.num_gpus()); !ok) {
        why[i] = "invalid: " + ok.error().str();
        continue;
      }
      models::MemoryOptions mo;
      mo.flash_attention = options.costs.flash_attention;
      mo.dropout = options.costs.dropout;
      const Bytes mem = models::peak_memory(model, plan, mo).total();
      if (mem > cluster.gpu_spec().memory) {
        why[i] = "out of memory: needs " + gib(mem.value) + " GiB per GPU, the GPUs have " +
                 gib(cluster.gpu_spec().memory.value) + " GiB";
        continue;
      }
      models::PredictOptions po;
      po.fidelity = Fidelity::analytical;
      po.build.costs = options.costs;
      po.build.per_layer_tasks = options.per_layer_tasks;
      auto pred = models::predict(model, plan, cluster, collectives, compute, po);
      if (!pred) {
        why[i] = "failed: " + pred.error().str();
        continue;
      }
      result[i] = summarise(plan, *pred);
    }
  };
  int threads = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(1, std::min<int>(threads, static_cast<int>(std::max<std::size_t>(n, 1))));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();

  PlanRanking r;
  for (std::size_t i = 0; i < n; ++i) {
    if (why[i].empty()) r.ranked.push_back(std::move(result[i]));
    else r.rejected.push_back({plans[i], std::move(why[i])});
  }
  std::sort(r.ranked.begin(), r.ranked.end(), ranked_less);  // total order: same for any thread count
  return r;
}

}  // namespace scalescope::planner
