// Lower bound on a plan's simulated step time from its compute-stream work alone, used by the search to skip
// plans that cannot enter the top K (branch and bound), plus a thread-safe cache of the per-piece
// compute costs it needs (keyed by the plan fields they may depend on: mbs, tp, sp, recompute, zero,
// precision; pp, vpp, dp and the schedule do not change a layer's or an edge's cost).
//
// Bound (symmetric task graph of builder.hpp; V = pp * vpp virtual stages, virtual stage v of L_v layers
// (the plan's layout: even, uneven or pp_layout), m micro-batches; f, b, r = one layer's forward,
// backward and recompute time, each with its context-parallel attention blocks; E_f, E_b embedding,
// H_f, H_b LM head forward / backward; O_0 the optimizer step of stage 0):
//   F_v = L_v f + T_f(L_v),  B_v = L_v (b + r) + T_b(L_v)   (chunk v's forward / backward unit on the
//   compute stream)
//   pp = 1:  T >= m (sum_v (F_v + B_v) + E_f + E_b + H_f + H_b) + O_0
//            (every unit runs on the one compute stream, then the optimizer step)
//   pp > 1:  T >= [E_f + sum_{v<pp-1} F_v] + [m sum_{v on stage pp-1} (F_v + B_v) + m (H_f + H_b)]
//                 + [sum_{v<pp-1} B_v + E_b] + O_0
//     fill:  stage pp-1's first task is a forward of virtual stage >= pp-1, which waits for the
//            forwards of virtual stages 0..pp-2 (on stages 0..pp-2, one after another; the first
//            with the embedding);
//     busy:  stage pp-1 then runs all its m vpp forward and backward units (and the head) serially;
//     drain: its last task is a backward of virtual stage pp-1 (a later chunk would send gradients
//            back to itself), followed by the backwards of virtual stages pp-2..0 on the other stages
//            and, on stage 0, the embedding backward and the optimizer step.
// T_f, T_b: the layers' TP collectives, which run on the compute stream between the compute tasks (0 with
// tp_comm_overlap, where they run beside it).
//   Per layer, forward: 2 all-reduces of S = mbs seq hidden 2 bytes (with sp: 2 all-gathers and 2
//   reduce-scatters of S); backward the same, plus the forward's again under full recompute. A unit
//   either merges them (one collective of k Lc S bytes per kind) or splits them (k Lc of S), so
//   each kind counts  min(C(k Lc S), C((k Lc + 1) S), k Lc C(S))  (a merged unit with the embedding or
//   head carries at most one more S per kind),  C = the analytical time on the tensor-parallel
//   group, the smallest over the pipeline stages' groups (analytical_time() below).
// Everything left out (the edges' TP collectives, PP transfers, exposed DP/ZeRO/CP traffic, the other
// stages) only adds time, and the simulator rounds task durations UP to whole ns, so T_sim >= bound;
// the bound is scaled by (1 - 1e-9) against summation-order rounding.
#pragma once

#include <map>
#include <mutex>
#include <tuple>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/plan_costs.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope::planner {

/// Per-piece compute costs of a plan as the builder prices them (models::plan_piece_costs).
using PieceCosts = models::PlanPieceCosts;

/// Caches layer_cost / edge_cost of one model on one compute model with fixed CostOptions.
/// Thread-safe; the values do not depend on the order of the calls (deterministic).
class PieceCostCache {
 public:
  PieceCostCache(const models::ModelSpec& model, const models::ComputeModel& compute,
                 const CollectiveModel& collectives, models::CostOptions costs)
      : model_(model), compute_(compute), collectives_(collectives), costs_(std::move(costs)) {}
  PieceCostCache(const PieceCostCache&) = delete;
  PieceCostCache& operator=(const PieceCostCache&) = delete;

  /// The costs for `plan` (only its mbs, tp, sp, recompute, zero, precision, cp, cp_comm, FP8 keys, gradient
  /// dtype and, with fp8, the micro-batch count matter).
  const PieceCosts& get(const models::Plan& plan);
  /// Smallest analytical time of `op` over `bytes` on the tensor-parallel groups of the plan's
  /// pipeline stages (ranks tp * dp * stage + 0..tp-1), in seconds; cached per (op, group, bytes).
  double tp_collective_time(const models::Plan& plan, CollOp op, double bytes);
  std::size_t size() const;  ///< cached piece costs
  const models::CostOptions& costs() const { return costs_; }

 private:
  // mbs, tp, sp, recompute, zero, precision, cp, cp_comm, fp8 recipe and params, micro-batches (fp8), grad fp32
  using Key = std::tuple<int, int, bool, int, int, int, int, int, int, int, bool, int, int, int, double>;
  const models::ModelSpec& model_;
  const models::ComputeModel& compute_;
  const CollectiveModel& collectives_;
  models::CostOptions costs_;
  mutable std::mutex mutex_;
  std::map<Key, PieceCosts> cache_;  // node-based: references stay valid
  std::map<std::tuple<int, int, int, double>, double> coll_;  // (op, first rank, tp, bytes) -> seconds
  // (op, tp, pp, first rank of stage 0, ranks between stages, bytes) -> the smallest of the stages' times
  std::map<std::tuple<int, int, int, int, int, double>, double> stages_;
};

/// The lower bound of the header comment, in seconds.
double step_time_lower_bound(const models::ModelSpec& model, const models::Plan& plan,
                             const models::ComputeModel& compute, PieceCostCache& cache);

}  // namespace scalescope::planner
