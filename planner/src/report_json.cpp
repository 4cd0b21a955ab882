// JSON pieces shared by the reports of the CLI, the sweeps and the Python package.
#include "scalescope/planner/report_json.hpp"

#include <cmath>
#include <string>

namespace scalescope::planner {

double sig(double v, int digits) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

Json opt_json(const std::optional<double>& v, int digits) { return v ? Json(sig(*v, digits)) : Json(nullptr); }

Json breakdown_parts_json(const Breakdown& b) {
  Json j = Json::object();
  for (int i = 0; i < kNumBreakdownParts; ++i) {
    const double v = b.parts[static_cast<std::size_t>(i)].value;
    if (static_cast<BreakdownPart>(i) == BreakdownPart::ep_comm && v == 0.0) continue;  // MoE plans only
    j[std::string(breakdown_part_name(static_cast<BreakdownPart>(i))) + "_s"] = sig(v);
  }
  return j;
}

Json ranked_json(const RankedPlan& r) {
  return Json{{"plan", models::to_json(r.plan)},
              {"plan_text", models::to_string(r.plan)},
              {"step_time_s", sig(r.step_time_s)},
              {"flow_step_time_s", r.flow_step_time_s ? Json(sig(*r.flow_step_time_s)) : Json(nullptr)},
              {"tokens_per_s", sig(r.tokens_per_s)},
              {"mfu", sig(r.mfu, 4)},
              {"memory_GiB", sig(r.memory_GiB, 4)},
              {"limiter", r.limiter},
              {"limiter_share", sig(r.limiter_share, 4)},
              {"breakdown", breakdown_parts_json(r.breakdown)}};
}

Json counts_json(const PruneCounts& c) {
  Json rules = Json::object();
  for (const auto& [k, v] : c.invalid_by_rule) rules[k] = v;
  return Json{{"layouts", c.layouts},
              {"layouts_tp_cross_node", c.layouts_tp_cross_node},
              {"layouts_tp_not_dividing_heads", c.layouts_tp_heads},
              {"layouts_pp_not_dividing_layers", c.layouts_pp_layers},
              {"layouts_gbs_not_divisible_by_dp", c.layouts_gbs_not_divisible},
              {"layouts_uneven_pipeline", c.layouts_uneven},
              {"layouts_cp_short_or_not_dividing_sequence", c.layouts_cp_seq},
              {"plans", c.plans},
              {"excluded_by_fix", c.fixed_out},
              {"invalid", c.invalid},
              {"invalid_by_rule", rules},
              {"out_of_memory", c.out_of_memory},
              {"dominated_by_less_recompute", c.dominated},
              {"skipped_by_bound", c.bounded},
              {"failed", c.failed},
              {"evaluated", c.evaluated}};
}

}  // namespace scalescope::planner
