// Compute-only lower bound of a plan's step time and the per-piece cost cache (formulas in bound.hpp).
#include "scalescope/planner/bound.hpp"

#include <algorithm>
#include <cassert>
#include <vector>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/counts.hpp"

namespace scalescope::planner {

const PieceCosts& PieceCostCache::get(const models::Plan& plan) {
  const Key key{plan.mbs, plan.tp, plan.sp, static_cast<int>(plan.recompute), plan.zero,
                static_cast<int>(plan.precision)};
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  // Priced outside the lock; a concurrent duplicate computes the same values and the first wins.
  PieceCosts c{models::layer_cost(model_, plan, compute_, costs_), models::edge_cost(model_, plan, compute_, costs_)};
  std::lock_guard lock(mutex_);
  return cache_.try_emplace(key, std::move(c)).first->second;
}

double PieceCostCache::tp_collective_time(const models::Plan& plan, CollOp op, double bytes) {
  double best = -1;
  std::vector<int> ranks(static_cast<std::size_t>(plan.tp));
  for (int stage = 0; stage < plan.pp; ++stage) {
    const int first = models::plan_rank(plan, stage, 0, 0);
    const auto key = std::make_tuple(static_cast<int>(op), first, plan.tp, bytes);
    double t = -1;
    {
      std::lock_guard lock(mutex_);
      if (auto it = coll_.find(key); it != coll_.end()) t = it->second;
    }
    if (t < 0) {
      for (int i = 0; i < plan.tp; ++i) ranks[static_cast<std::size_t>(i)] = first + i;
      t = collectives_.analytical(op, ranks, Bytes(bytes)).time.value;
      std::lock_guard lock(mutex_);
      coll_.try_emplace(key, t);
    }
    if (best < 0 || t < best) best = t;
  }
  return best;
}

std::size_t PieceCostCache::size() const {
  std::lock_guard lock(mutex_);
  return cache_.size();
}

double step_time_lower_bound(const models::ModelSpec& model, const models::Plan& plan,
                             const models::ComputeModel& compute, PieceCostCache& cache) {
  assert(plan.pp > 0 && plan.vpp > 0 && model.layers % (plan.pp * plan.vpp) == 0 &&
         "step_time_lower_bound: needs an even layout (pp * vpp divides the layers)");
  const PieceCosts& pc = cache.get(plan);
  const double m = plan.num_microbatches();
  const double Lc = static_cast<double>(model.layers) / (plan.pp * plan.vpp);
  // The builder recomputes when the plan asks for full recompute or the layer has recompute kernels.
  const bool recompute = plan.recompute == models::Recompute::full || pc.layer.recompute.kernels > 0;
  // TP collectives of one chunk's unit, merged or split (whichever is cheaper: both are lower bounds).
  double Tf = 0, Tb = 0;
  if (plan.tp > 1) {
    const double S = static_cast<double>(plan.mbs) * model.seq_len * model.hidden * 2.0;
    auto kind = [&](CollOp op, double k) {  // k collectives of S per layer
      const double n = k * Lc;
      // A merged unit with an edge carries one more S of the kind (embedding / head): taken as well,
      // so the bound does not rely on the time growing with the size.
      return std::min({cache.tp_collective_time(plan, op, n * S), cache.tp_collective_time(plan, op, (n + 1) * S),
                       n * cache.tp_collective_time(plan, op, S)});
    };
    const double per_pass = plan.sp ? kind(CollOp::all_gather, 2) + kind(CollOp::reduce_scatter, 2)
                                    : kind(CollOp::all_reduce, 2);
    Tf = per_pass;
    Tb = per_pass * (plan.recompute == models::Recompute::full ? 2.0 : 1.0);
  }
  const double F = Lc * pc.layer.forward.time.value + Tf;
  const double B = Lc * (pc.layer.backward.time.value + (recompute ? pc.layer.recompute.time.value : 0.0)) + Tb;
  const double Ef = pc.edge.embedding_forward.time.value, Eb = pc.edge.embedding_backward.time.value;
  const double Hf = pc.edge.head_forward.time.value, Hb = pc.edge.head_backward.time.value;

  // Optimizer step of stage 0 over the parameters one tp rank holds (sharded over dp by ZeRO >= 1).
  const models::PipelineLayout layout = models::even_layout(model, plan.pp, plan.vpp);
  const double params0 = static_cast<double>(models::params_per_tp_rank(model, layout, 0, plan.tp, cache.costs().vocab_multiple).total());
  const double shard = plan.zero >= 1 && plan.dp > 1 ? plan.dp : 1.0;
  const double O0 = models::optimizer_cost(params0 / shard, model, plan, compute, cache.costs()).time.value;

  const double pp1 = plan.pp - 1;
  const double t = plan.pp == 1 ? m * (F + B + Ef + Eb + Hf + Hb) + O0
                                : (Ef + pp1 * F) + (m * plan.vpp * (F + B) + m * (Hf + Hb)) + (pp1 * B + Eb) + O0;
  return t * (1.0 - 1e-9);
}

}  // namespace scalescope::planner
