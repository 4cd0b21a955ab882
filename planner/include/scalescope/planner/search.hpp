// Plan search: enumerate TP/PP/DP/ZeRO/micro-batch/schedule/recompute/SP plans for a model on a
// number of GPUs, prune by validity and the memory model, simulate the rest (symmetric analytical
// fidelity, all cores), confirm the best K at flow fidelity and rank them.
//
// Enumeration (every plan uses exactly `gpus` = tp * cp * pp * dp GPUs):
//   tp  divides gpus, heads and kv_heads (validate() also asks ffn_hidden), tp <= GPUs per node
//       unless allow_cross_node_tp;  cp divides gpus / tp, cp <= max_cp, 2 cp divides seq_len,
//       seq_len / cp >= min_cp_tokens for cp > 1 (cp_comm from `base`);  pp divides gpus / (tp cp);  dp = gpus / (tp cp pp);
//   pp that does not divide the layers gets the nearest uneven split (first/last_stage_layers,
//   pipeline_layout.hpp), the layout is dropped when there is none;
//   (tp, cp, pp) layouts whose dp does not divide gbs are dropped as a whole (counted per layout);
//   ep   (MoE models) divisors of the experts with ep * base.etp dividing tp cp dp, up to max_ep;
//   zero 0..3 (only 0 when dp cp = 1 and no experts are replicated: ZeRO over one rank is plain data
//   parallelism);
//   mbs  divisors of gbs / dp up to max_mbs;
//   schedule gpipe | 1f1b | interleaved with 1 < vpp <= max_vpp whose layout is valid (pp > 1);
//   sp false | true (true only when tp > 1);  precision from `precisions`;  overlap_param_gather
//   false | true with zero = 1 and dp cp > 1, tp_comm_overlap false | true with sp (both when
//   search_overlap; else as in `base`);  recompute none | selective | full.
// Keys not searched (fp8_recipe, fp8_params, grad_reduce_in_fp32, bucket_MB, overlap_grad_reduce,
// cp_comm) come from `base`.
// Pruning: models::validate() failures count as "invalid" by the rule's key; plans whose peak
// memory (memory.hpp, flash attention) exceeds the GPU's count as "out of memory". Dominated:
// when a plan fits with recompute = none (or selective), the same plan with more recompute
// (selective / full) cannot be faster - it adds recompute work (or, selective with flash attention,
// none: an exact tie that the plan order breaks towards less recompute) and changes no traffic - so
// it is not simulated (prune_dominated, on by default).
// Bounded (prune_bound, on by default): the candidates are simulated in ascending order of a
// compute-only lower bound of their step time (bound.hpp), in chunks of kBoundChunk plans; after each
// chunk, every remaining plan whose bound exceeds the top-th best step time found so far is skipped.
// Such a plan is slower than `top` plans, so the top `top` are those of the exhaustive search. The
// chunks do not depend on the thread count, so the counts are deterministic too.
// Ranking: ascending (step time, then the plan fields tp, pp, dp, zero, mbs, schedule, vpp,
// recompute, sp) - a total order, so the ranking does not depend on the thread count.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope::planner {

/// Fields a search must keep fixed ("--fix tp=8,schedule=1f1b").
struct PlanFilter {
  std::optional<int> tp, pp, dp, zero, mbs, vpp, cp, ep;
  std::optional<models::Schedule> schedule;
  std::optional<models::Recompute> recompute;
  std::optional<models::Precision> precision;
  std::optional<bool> sp, overlap_param_gather, tp_comm_overlap;
  bool accepts(const models::Plan& p) const;
};
/// Parses "tp=8,pp=4,zero=1,schedule=1f1b,recompute=full,sp=1" (also cp, precision, overlap_param_gather,
/// tp_comm_overlap); errors name `source` and the key.
Expected<PlanFilter> parse_plan_filter(std::string_view text, const std::string& source = "--fix");

struct SearchSpace {
  int gpus = 0;
  int gbs = 0;
  bool allow_cross_node_tp = false;
  int max_mbs = 8;
  int max_vpp = 8;
  int max_cp = 8;  ///< largest context-parallel degree tried
  /// Largest expert-parallel degree tried (MoE models; 0: up to the experts). ep divides the experts and,
  /// with base.etp, the ranks of a pipeline stage (tp cp dp); etp, moe_dispatcher, moe_imbalance and
  /// moe_a2a_overlap come from `base`.
  int max_ep = 0;
  /// cp is tried only while each CP rank keeps at least this many tokens of a sequence (seq_len / cp):
  /// below it the ring's attention blocks are too short to hide their exchange, the regime where
  /// Megatron-Core's guidance does not use CP, and the search stays small for short sequences.
  int min_cp_tokens = 4096;
  /// Precisions tried (fp8 only makes sense where the GPU has FP8 tensor cores; the caller decides).
  std::vector<models::Precision> precisions{models::Precision::mixed};
  bool search_overlap = true;  ///< try overlap_param_gather and tp_comm_overlap both ways (else as in `base`)
  models::Plan base;           ///< the keys not searched (header comment)
  bool prune_dominated = true;
  bool prune_bound = true;  ///< skip plans whose lower bound cannot enter the top (see above)
  PlanFilter fix;
};

/// How many candidates were dropped and why.
struct PruneCounts {
  int layouts = 0;                 ///< (tp, pp) layouts considered
  int layouts_tp_cross_node = 0;   ///< tp larger than a node
  int layouts_tp_heads = 0;        ///< tp does not divide heads or kv_heads
  int layouts_pp_layers = 0;       ///< pp does not divide layers and no uneven split fits
  int layouts_uneven = 0;          ///< pp does not divide layers: searched with the nearest uneven split
  int layouts_cp_seq = 0;          ///< 2 cp does not divide the sequence, or cp leaves < min_cp_tokens
  int layouts_gbs_not_divisible = 0;  ///< dp does not divide gbs
  long plans = 0;                  ///< full plans enumerated from the remaining layouts
  long fixed_out = 0;              ///< excluded by --fix
  long invalid = 0;                ///< models::validate() refused them
  std::map<std::string, long> invalid_by_rule;  ///< key -> count (sorted: deterministic)
  long out_of_memory = 0;
  long dominated = 0;              ///< more recompute than a fitting plan that is otherwise equal
  long bounded = 0;                ///< skipped: their step-time lower bound exceeds the top-th best
  long failed = 0;                 ///< build or simulation errors
  long evaluated = 0;              ///< simulated at analytical fidelity
};

struct Enumeration {
  std::vector<models::Plan> candidates;  ///< valid and fitting in memory, in enumeration order
  PruneCounts counts;
  /// Smallest peak memory per GPU among valid plans (set when any plan was valid) and its plan.
  std::optional<Bytes> min_memory;
  std::optional<models::Plan> min_memory_plan;
};

/// Enumerates and prunes (no simulation). `gpus_per_node` bounds tp; `gpu_memory` is the capacity.
Enumeration enumerate_plans(const models::ModelSpec& model, const SearchSpace& space, int gpus_per_node,
                            Bytes gpu_memory);

/// One plan's prediction (same path as `scalescope simulate`: models::predict with flash attention
/// and no dropout, the symmetric pipeline at analytical fidelity, every rank at flow fidelity).
Expected<models::Prediction> evaluate(const models::ModelSpec& model, const models::Plan& plan,
                                      const Cluster& cluster, const models::ComputeModel& compute,
                                      const CollectiveModel& collectives, Fidelity fidelity);

struct RankedPlan {
  models::Plan plan;
  double step_time_s = 0;  ///< analytical
  std::optional<double> flow_step_time_s;  ///< when confirmed at flow fidelity
  double tokens_per_s = 0;
  double mfu = 0;
  double memory_GiB = 0;
  Breakdown breakdown;     ///< analytical, critical rank
  std::string limiter;     ///< largest part: "compute", "exposed DP comm", "bubble", ...
  double limiter_share = 0;
  /// The step time the ranking uses: flow when confirmed, analytical otherwise.
  double ranking_time() const { return flow_step_time_s.value_or(step_time_s); }
};

/// Strict total order of the plan fields (tp, pp, dp, zero, mbs, schedule, vpp, recompute, sp, cp,
/// precision, overlap_param_gather, tp_comm_overlap, first/last_stage_layers).
bool plan_less(const models::Plan& a, const models::Plan& b);

/// The ranking's order: (ranking_time(), then plan_less) - a strict total order.
bool ranked_less(const RankedPlan& a, const RankedPlan& b);

/// A prediction summarised for the ranking (analytical step time, memory, breakdown and limiter).
RankedPlan summarise(const models::Plan& plan, const models::Prediction& prediction);

/// The largest part of a breakdown and its share of the step.
std::pair<std::string, double> limiting_factor(const Breakdown& b);

/// Plans simulated between two updates of the bound threshold.
inline constexpr int kBoundChunk = 64;

struct SearchOptions {
  int top = 10;
  int flow_top = 3;   ///< re-simulated at flow fidelity (<= top); they are re-ranked among themselves
  int threads = 0;    ///< 0: std::thread::hardware_concurrency()
  /// Called from worker threads (serialised) as plans finish: (done, total).
  std::function<void(long, long)> progress;
  /// Optional cancel flag (e.g. the GUI's Cancel button): when it reads true, workers stop taking
  /// plans and search() returns a runtime error "plan search cancelled". Unset or false: no effect.
  const std::atomic<bool>* cancel = nullptr;
  /// Evaluates one chunk of candidates (indices into enumerate_plans()' candidates) somewhere else, e.g. over
  /// the ranks of an MPI job (plan_mpi.hpp), instead of the local threads: fills `out` (one per index; unset:
  /// the plan failed). Unset: local threads.
  std::function<void(const std::vector<std::size_t>& chunk, std::vector<std::optional<RankedPlan>>& out)>
      evaluate_chunk;
};

struct SearchResult {
  std::vector<RankedPlan> ranked;  ///< best first, at most `top`
  PruneCounts counts;
  /// Why nothing could be ranked (empty when `ranked` is not).
  std::vector<std::string> explanations;
  std::optional<Bytes> min_memory;
};

/// Full search. Input errors (gpus > cluster, gbs <= 0) come back as errors; an impossible
/// request gives an empty `ranked` with `explanations`.
Expected<SearchResult> search(const models::ModelSpec& model, const Cluster& cluster, const CollectiveModel& collectives,
                              const models::ComputeModel& compute, const SearchSpace& space,
                              const SearchOptions& options = {});

}  // namespace scalescope::planner
