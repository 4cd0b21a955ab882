// A sweep: the points (model x cluster x GPU count x global batch x calibration x stack x plan constraint
// or fixed plan, as a cartesian product or listed) that `scalescope sweep`, its MPI form and the Python
// package evaluate. File format: docs/sweep-format.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

enum class SweepMode { plan, simulate };

/// One point. `fixed` is a plan constraint (PlanFilter text, "" for none) in plan mode and a plan template
/// without dp and gbs ("tp=2,pp=2,mbs=1") in simulate mode.
struct SweepPoint {
  std::string model, cluster, calibration, stack, fixed;
  int gpus = 0;
  int gbs = 0;
};

/// Options that apply to every point (the CLI options of `plan` / `simulate` of the same names).
struct SweepOptions {
  int top = 1;       ///< plan mode: ranked plans per point (one row each)
  int flow_top = 0;  ///< plan mode: of those, confirmed at flow fidelity
  int max_mbs = 8;
  int max_vpp = 8;
  bool allow_cross_node_tp = false;
  std::optional<int> seq;                ///< plan mode: sequence length (default: the model's)
  std::string fidelity = "analytical";   ///< simulate mode
};

struct SweepSpec {
  std::string file;  ///< where it was read from (for messages)
  bool listed = false;  ///< "points" (true) or the product keys
  SweepMode mode = SweepMode::plan;
  SweepOptions options;
  std::vector<SweepPoint> points;
  /// FNV-1a 64 of the canonical expanded spec (mode, options, points): a journal of another spec is refused.
  std::string fingerprint;
};

/// Parses a sweep spec; errors name `file`, the JSON path and what was expected.
Expected<SweepSpec> parse_sweep_spec(const Json& json, const std::string& file);
Expected<SweepSpec> load_sweep_spec(const std::filesystem::path& file);

/// The spec's canonical JSON (the expanded point list), what the fingerprint hashes.
Json canonical_json(const SweepSpec& spec);

std::string_view to_string(SweepMode m);

}  // namespace scalescope::planner
