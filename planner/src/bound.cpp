// Compute-only lower bound of a plan's step time and the per-piece cost cache (formulas in bound.hpp).
#include "scalescope/planner/bound.hpp"

#include <algorithm>
#include <cassert>
#include <vector>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/counts.hpp"
#include "scalescope/models/pipeline_layout.hpp"

namespace scalescope::planner {

const PieceCosts& PieceCostCache::get(const models::Plan& plan) {
  const Key key{plan.mbs,
                plan.tp,
                plan.sp,
                static_cast<int>(plan.recompute),
                plan.zero,
                static_cast<int>(plan.precision),
                plan.cp,
                static_cast<int>(plan.cp_comm),
                static_cast<int>(plan.fp8_recipe) * 2 + (plan.fp8_params ? 1 : 0),
                plan.fp8() ? plan.num_microbatches() : 0,
                plan.grad_reduce_in_fp32,
                plan.ep,
                plan.etp,
                static_cast<int>(plan.moe_dispatcher),
                plan.moe_imbalance};
  {
    std::lock_guard lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  // Priced outside the lock; a concurrent duplicate computes the same values and the first wins.
  PieceCosts c = models::plan_piece_costs(model_, plan, compute_, costs_);
  std::lock_guard lock(mutex_);
  return cache_.try_emplace(key, std::move(c)).first->second;
}

double PieceCostCache::tp_collective_time(const models::Plan& plan, CollOp op, double bytes) {
  // The stages' first ranks are first0 + stage * stride (rank order tp-cp-dp-pp): plans of the same groups share
  // the answer.
  const int first0 = models::plan_rank(plan, 0, 0, 0);
  const int stride = plan.pp > 1 ? models::plan_rank(plan, 1, 0, 0) - first0 : 0;
  const auto stages_key = std::make_tuple(static_cast<int>(op), plan.tp, plan.pp, first0, stride, bytes);
  {
    std::lock_guard lock(mutex_);
    if (auto it = stages_.find(stages_key); it != stages_.end()) return it->second;
  }
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
    assert(first == first0 + stage * stride && "tp_collective_time: stages' first ranks not evenly spaced");
  }
  std::lock_guard lock(mutex_);
  stages_.try_emplace(stages_key, best);
  return best;
}

std::size_t PieceCostCache::size() const {
  std::lock_guard lock(mutex_);
  return cache_.size();
}

double step_time_lower_bound(const models::ModelSpec& model, const models::Plan& plan,
                             const models::ComputeModel& compute, PieceCostCache& cache) {
  assert(plan.pp > 0 && plan.vpp > 0 && "step_time_lower_bound: pp and vpp must be positive");
  const PieceCosts& pc = cache.get(plan);
  const double m = plan.num_microbatches();
  const models::PipelineLayout layout = models::layout_of(model, plan);
  // The builder recomputes when the plan asks for full recompute or the layer has recompute kernels.
  const bool recompute = plan.recompute == models::Recompute::full || pc.layer.recompute.kernels > 0 ||
                         pc.moe_layer.recompute.kernels > 0;
  // TP collectives of a unit of L layers, merged or split (whichever is cheaper: both are lower bounds);
  // none with tp_comm_overlap (they run beside the compute).
  auto tp_time = [&](double L, bool backward) {
    if (plan.tp == 1 || plan.tp_comm_overlap || L <= 0) return 0.0;
    const double S = static_cast<double>(plan.mbs) * (model.seq_len / plan.cp) * model.hidden * 2.0;
    auto kind = [&](CollOp op, double k) {  // k collectives of S per layer
      const double n = k * L;
      // A merged unit with an edge carries one more S of the kind (embedding / head): taken as well,
      // so the bound does not rely on the time growing with the size.
      return std::min({cache.tp_collective_time(plan, op, n * S), cache.tp_collective_time(plan, op, (n + 1) * S),
                       n * cache.tp_collective_time(plan, op, S)});
    };
    // Pairs per layer: 2 (attention, MLP); an MoE layer without shared experts has only the attention's.
    const double k = model.is_moe() && model.moe.shared_width() == 0 ? 1.0 : 2.0;
    const double per_pass = plan.sp ? kind(CollOp::all_gather, k) + kind(CollOp::reduce_scatter, k)
                                    : kind(CollOp::all_reduce, k);
    return per_pass * (backward && plan.recompute == models::Recompute::full ? 2.0 : 1.0);
  };
  const auto fwd = [&](const models::LayerCost& l) { return l.forward.time.value + pc.cp.blocks.forward.time.value; };
  const auto bwd = [&](const models::LayerCost& l) {
    return l.backward.time.value + pc.cp.blocks.backward.time.value +
           (recompute ? l.recompute.time.value + pc.cp.blocks.recompute.time.value : 0.0);
  };
  const double f = fwd(pc.layer), b = bwd(pc.layer), fm = fwd(pc.moe_layer), bm = bwd(pc.moe_layer);
  // Dense and MoE layers of virtual stage v.
  auto layers = [&](int v) {
    const int L = layout.layers_per_chunk[static_cast<std::size_t>(v)];
    const int moe = model.moe_layers_in(layout.first_layer_of_chunk(v), L);
    return std::pair<double, double>{L - moe, moe};
  };
  auto F = [&](int v) {
    const auto [dense, moe] = layers(v);
    return dense * f + moe * fm + tp_time(dense + moe, false);
  };
  auto B = [&](int v) {
    const auto [dense, moe] = layers(v);
    return dense * b + moe * bm + tp_time(dense + moe, true);
  };
  const double Ef = pc.edge.embedding_forward.time.value, Eb = pc.edge.embedding_backward.time.value;
  const double Hf = pc.edge.head_forward.time.value, Hb = pc.edge.head_backward.time.value;

  // Optimizer step of stage 0 over the parameters one tp rank holds (sharded over dp x cp by ZeRO >= 1).
  const models::StageParams held0 =
      models::params_per_tp_rank(model, layout, 0, plan.tp, cache.costs().vocab_multiple, plan.ep, plan.etp);
  const double params0 = static_cast<double>(held0.total()), experts0 = static_cast<double>(held0.experts);
  const double shard = plan.zero >= 1 && plan.dp * plan.cp > 1 ? plan.dp * plan.cp : 1.0;
  const double expert_shard = plan.zero >= 1 && plan.edp() > 1 ? plan.edp() : 1.0;
  const double updated = experts0 > 0.0 ? (params0 - experts0) / shard + experts0 / expert_shard : params0 / shard;
  const double O0 = models::optimizer_cost(updated, model, plan, compute, cache.costs()).time.value;

  double t = 0;
  if (plan.pp == 1) {
    double units = 0;
    for (int v = 0; v < plan.vpp; ++v) units += F(v) + B(v);
    t = m * (units + Ef + Eb + Hf + Hb) + O0;
  } else {
    double fill = Ef, busy = m * (Hf + Hb), drain = Eb;
    for (int v = 0; v <= plan.pp - 2; ++v) {
      fill += F(v);
      drain += B(v);
    }
    for (int v = plan.pp - 1; v < plan.pp * plan.vpp; v += plan.pp) busy += m * (F(v) + B(v));
    t = fill + busy + drain + O0;
  }
  return t * (1.0 - 1e-9);
}

}  // namespace scalescope::planner
