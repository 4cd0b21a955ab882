// Shared pieces of `scalescope plan|capacity|scaling`: number formatting, counts with suffixes and
// the JSON/text form of ranked plans.
#pragma once

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "scalescope/planner/search.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::cli::plan_fmt {

inline std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// v rounded to `digits` significant digits (stable JSON text for golden files).
inline double sig(double v, int digits = 6) {
  if (v == 0.0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v)))));
  return std::round(v * scale) / scale;
}

inline Json opt_json(const std::optional<double>& v, int digits = 6) {
  return v ? Json(sig(*v, digits)) : Json(nullptr);
}

inline std::string opt_text(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

/// "15T", "2.5e12", "300B", "7M", "1k" -> number; nullopt when malformed or not positive.
inline std::optional<double> parse_count(const std::string& s) {
  if (s.empty()) return std::nullopt;
  double mult = 1;
  std::string num = s;
  switch (s.back()) {
    case 'k': case 'K': mult = 1e3; break;
    case 'M': mult = 1e6; break;
    case 'B': case 'G': mult = 1e9; break;
    case 'T': mult = 1e12; break;
    default: break;
  }
  if (mult != 1) num.pop_back();
  try {
    std::size_t used = 0;
    const double v = std::stod(num, &used);
    if (used != num.size() || !(v > 0) || !std::isfinite(v)) return std::nullopt;
    return v * mult;
  } catch (...) {
    return std::nullopt;
  }
}

inline Json breakdown_json(const Breakdown& b) {
  Json j = Json::object();
  for (int i = 0; i < kNumBreakdownParts; ++i) {
    const double v = b.parts[static_cast<std::size_t>(i)].value;
    j[std::string(breakdown_part_name(static_cast<BreakdownPart>(i))) + "_s"] = sig(v);
  }
  return j;
}

inline Json ranked_json(const planner::RankedPlan& r) {
  return Json{{"plan", models::to_json(r.plan)},
              {"plan_text", models::to_string(r.plan)},
              {"step_time_s", sig(r.step_time_s)},
              {"flow_step_time_s", r.flow_step_time_s ? Json(sig(*r.flow_step_time_s)) : Json(nullptr)},
              {"tokens_per_s", sig(r.tokens_per_s)},
              {"mfu", sig(r.mfu, 4)},
              {"memory_GiB", sig(r.memory_GiB, 4)},
              {"limiter", r.limiter},
              {"limiter_share", sig(r.limiter_share, 4)},
              {"breakdown", breakdown_json(r.breakdown)}};
}

/// Plan cells: tp pp dp zero mbs schedule vpp recompute sp.
/// Header cells of plan_cells().
inline std::vector<std::string> plan_header() {
  return {"tp", "pp", "dp", "zero", "mbs", "schedule", "vpp", "recompute", "sp", "cp", "precision", "overlaps"};
}

inline std::vector<std::string> plan_cells(const models::Plan& p) {
  std::string overlaps;  // the searched overlap flags: opg = overlap_param_gather, tco = tp_comm_overlap
  if (p.overlap_param_gather) overlaps += "opg";
  if (p.tp_comm_overlap) overlaps += overlaps.empty() ? "tco" : "+tco";
  if (p.first_stage_layers || p.last_stage_layers) {
    overlaps += (overlaps.empty() ? "" : " ") + std::string("stages ") + std::to_string(p.first_stage_layers) + "/" +
                std::to_string(p.last_stage_layers);
  }
  return {std::to_string(p.tp), std::to_string(p.pp), std::to_string(p.dp), std::to_string(p.zero),
          std::to_string(p.mbs), std::string(models::to_string(p.schedule)), std::to_string(p.vpp),
          std::string(models::to_string(p.recompute)), p.sp ? "1" : "0", std::to_string(p.cp),
          std::string(models::to_string(p.precision)), overlaps.empty() ? "-" : overlaps};
}

}  // namespace scalescope::cli::plan_fmt
