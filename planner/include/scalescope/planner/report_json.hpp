// The JSON pieces of the reports that `scalescope simulate|plan|capacity|scaling|sweep` and the Python
// package share: rounding to significant digits, breakdowns, ranked plans and prune counts.
#pragma once

#include <optional>

#include "scalescope/planner/search.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

/// v rounded to `digits` significant digits (stable JSON text for golden files and sweeps).
double sig(double v, int digits = 6);

/// sig(*v, digits), or null when absent.
Json opt_json(const std::optional<double>& v, int digits = 6);

/// Every breakdown part as "<name>_s" (sim/simulator.hpp's part names).
Json breakdown_parts_json(const Breakdown& b);

/// A ranked plan: plan, plan_text, step_time_s, flow_step_time_s, tokens_per_s, mfu, memory_GiB, limiter,
/// limiter_share, breakdown.
Json ranked_json(const RankedPlan& r);

/// Why the candidates were dropped (`scalescope plan --format json`'s "counts").
Json counts_json(const PruneCounts& c);

}  // namespace scalescope::planner
