// Shared pieces of `scalescope plan|capacity|scaling`: number formatting and
// the JSON/text form of ranked plans.
#pragma once

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "cli_common.hpp"
#include "scalescope/planner/report_json.hpp"
#include "scalescope/planner/search.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::cli::plan_fmt {

inline std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

using planner::sig;

using planner::opt_json;

inline std::string opt_text(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

using planner::ranked_json;

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
