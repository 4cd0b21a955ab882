// Explanations of impossible plan requests (gbs not divisible by any dp, model too large, --fix too
// narrow, no layout suits the model), each naming what to change.
#include <algorithm>
#include <cstdio>
#include <set>

#include "scalescope/models/pipeline_layout.hpp"
#include "search_impl.hpp"

namespace scalescope::planner {

namespace {

std::string gib_text(Bytes b) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f GiB", b.value / (1024.0 * 1024 * 1024));
  return buf;
}

/// Data-parallel sizes of the (tp, cp, pp) layouts that pass the tp / cp / pp rules of enumerate_plans.
std::set<int> layout_dps(const models::ModelSpec& model, const SearchSpace& space, int gpus_per_node) {
  std::set<int> dps;
  for (int tp = 1; tp <= space.gpus; ++tp) {
    if (space.gpus % tp != 0 || (tp > gpus_per_node && !space.allow_cross_node_tp)) continue;
    if (model.heads % tp != 0 || model.kv_heads % tp != 0) continue;
    for (int cp = 1; cp <= std::min(space.max_cp, space.gpus / tp); ++cp) {
      if ((space.gpus / tp) % cp != 0) continue;
      if (cp > 1 && (model.seq_len % (2 * cp) != 0 || model.seq_len / cp < space.min_cp_tokens)) continue;
      for (int pp = 1; pp <= std::min(model.layers, space.gpus / (tp * cp)); ++pp) {
        if ((space.gpus / (tp * cp)) % pp != 0) continue;
        if (model.layers % pp != 0 && models::nearest_uneven_splits(model.layers, pp, 1, 1).empty()) continue;
        dps.insert(space.gpus / (tp * cp * pp));
      }
    }
  }
  return dps;
}

std::string join(const std::set<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ", ") + std::to_string(x);
  return s;
}

}  // namespace

std::vector<std::string> explain_no_plan(const models::ModelSpec& model, const SearchSpace& space, int gpus_per_node,
                                         Bytes capacity, const Enumeration& e, const PruneCounts& c) {
  std::vector<std::string> out;
  if (c.layouts == c.layouts_tp_cross_node + c.layouts_tp_heads + c.layouts_gbs_not_divisible + c.layouts_pp_layers &&
      c.layouts_gbs_not_divisible > 0) {
    const std::set<int> dps = layout_dps(model, space, gpus_per_node);
    std::string s = "gbs " + std::to_string(space.gbs) + " is not divisible by the data-parallel size dp = gpus / (tp * cp * pp) "
                    "of any (tp, cp, pp) layout of " + std::to_string(space.gpus) + " GPUs (their dp: " + join(dps) + ")";
    if (!dps.empty()) {
      const int d = *dps.begin();
      const int below = space.gbs / d * d, above = below + d;
      s += "; choose a gbs that is a multiple of " + std::to_string(d) + " (e.g. " +
           (below > 0 ? std::to_string(below) + " or " : std::string()) + std::to_string(above) + ") or another GPU count";
    }
    out.push_back(s);
  }
  if (c.plans == 0 && c.layouts_gbs_not_divisible == 0)
    out.push_back("no (tp, cp, pp) layout of " + std::to_string(space.gpus) + " GPUs suits the model (" +
                  std::to_string(model.heads) + " heads, " + std::to_string(model.kv_heads) + " kv heads, " +
                  std::to_string(model.layers) + " layers, " + std::to_string(gpus_per_node) + " GPUs per node" +
                  (space.allow_cross_node_tp ? "" : ", tp within a node") + ")");
  if (c.plans > 0 && c.plans == c.fixed_out)
    out.push_back("--fix excludes every enumerated plan" +
                  std::string(c.layouts_gbs_not_divisible > 0
                                  ? " (" + std::to_string(c.layouts_gbs_not_divisible) +
                                        " (tp, cp, pp) layout(s) were dropped before: gbs not divisible by their dp)"
                                  : ""));
  if (c.out_of_memory > 0 && e.min_memory && *e.min_memory > capacity) {
    // Every valid plan was sized, ZeRO-3 (where dp > 1), full recompute and mbs 1 included, unless --fix
    // held one of them: the smallest is the fully sharded one.
    const PlanFilter& f = space.fix;
    const bool narrowed = (f.zero && *f.zero < 3) || (f.recompute && *f.recompute != models::Recompute::full) ||
                          (f.mbs && *f.mbs > 1) || f.tp || f.pp || f.dp;
    out.push_back("the model does not fit: the smallest plan (" + models::to_string(*e.min_memory_plan) + ") needs " +
                  gib_text(*e.min_memory) + " per GPU, the GPUs have " + gib_text(capacity) + "; " +
                  (narrowed ? "relax --fix (it holds tp, pp, dp, ZeRO, recompute or mbs) or use more GPUs"
                            : "every plan was sized, including the most sharded (largest tp and pp, ZeRO-3 where dp > 1, "
                              "full recompute, micro-batch 1): use more GPUs or GPUs with more memory"));
  }
  if (c.invalid > 0 && c.out_of_memory == 0 && c.dominated == 0 && c.evaluated == 0 && c.failed == 0)
    out.push_back("every remaining plan was invalid for the model (see the pruning counts)");
  if (c.failed > 0) out.push_back(std::to_string(c.failed) + " plan(s) failed to simulate");
  if (out.empty()) out.push_back("no plan survived pruning (see the pruning counts)");
  return out;
}

}  // namespace scalescope::planner
