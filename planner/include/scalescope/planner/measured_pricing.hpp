// How a measured set is priced by default: the stack, calibration and host cost of the machine that
// measured it, recorded next to the runs in <folder>/pricing.json (schema scalescope.measured_pricing/1):
//   {"schema": "scalescope.measured_pricing/1",
//    "calibration": "h200x4",                               profile name or file (as --calibration)
//    "framework": "pytorch-eager",                          as --framework
//    "eager_bandwidth_factor_file": "../../eager_bandwidth_factor.json",   {"factor", "source"} (optional)
//    "host_cost": "../../profiles/h200-torch/host_dispatch.json",          as --host-cost (optional)
//    "note": "..."}
// Relative paths are relative to the pricing file's folder. `scalescope scaling --measured DIR` takes
// each of these unless its option is given (docs/measured-format.md).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "scalescope/sim/error.hpp"

namespace scalescope::planner {

/// File name of a measured set's pricing record; the measured-run loaders skip it.
inline constexpr const char* kMeasuredPricingFile = "pricing.json";

struct MeasuredPricing {
  std::string file;         ///< the pricing.json read
  std::string calibration;  ///< empty: none recorded
  std::string framework;    ///< empty: none recorded
  std::optional<double> eager_factor;
  std::string eager_factor_source;
  std::string host_cost;  ///< path, resolved against the pricing file's folder; empty: none
};

/// The pricing record of a measured set (the folder, or the folder of a measured file), or nullopt
/// when it has none.
Expected<std::optional<MeasuredPricing>> load_measured_pricing(const std::filesystem::path& file_or_dir);

/// True when two host-cost files are the same file (both resolved; a missing one compares by text).
bool same_file(const std::string& a, const std::string& b);

}  // namespace scalescope::planner
