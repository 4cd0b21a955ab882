// Scaling curves: measured training runs (schema scalescope.measured/1) grouped into strong and
// weak scaling curves, each point predicted by the simulator, with speedup, efficiency, error and
// Amdahl (strong) / Gustafson (weak) fits of the measured and the predicted curve.
//
// A curve is one (cluster, model, family, scaling kind, mbs, batch) where batch is gbs for strong
// scaling (fixed global batch) and gbs / gpus for weak scaling (fixed per-GPU batch). Runs of the
// family "single" (one GPU) are the n = 1 base of every curve with the same key; a curve without
// one is based on its smallest GPU count n0 and its fits use n / n0.
//   strong: speedup S(n) = T(n0) / T(n)                       efficiency S / (n / n0)
//   weak:   speedup S(n) = (gbs(n) / T(n)) / (gbs(n0) / T(n0))  (scaled speedup, throughput ratio)
//   error = predicted / measured - 1 (step time)
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "scalescope/planner/fit.hpp"

namespace scalescope::planner {

enum class ScalingKind { strong, weak };
std::string_view to_string(ScalingKind k);

struct MeasuredRun {
  std::string file;
  models::ModelSpec model;
  models::Plan plan;
  std::string cluster;  ///< topology name or file the run was on
  int gpus = 0;
  std::string family;
  ScalingKind scaling = ScalingKind::strong;
  double step_time_s = 0;
};

/// Reads one measured-run file (unknown top-level keys are allowed: the harness records its
/// environment; the keys used are checked).
Expected<MeasuredRun> load_measured_run(const std::filesystem::path& file);
/// The same from a parsed document (`file` names it in errors and becomes MeasuredRun::file).
Expected<MeasuredRun> measured_run_from_json(const Json& doc, const std::filesystem::path& file);
/// A file, or every *.json in a folder (sorted by name).
Expected<std::vector<MeasuredRun>> load_measured(const std::filesystem::path& file_or_dir);

struct CurvePoint {
  int gpus = 0;
  models::Plan plan;
  std::string file;                  ///< empty for predicted-only points
  std::optional<double> measured_s;  ///< step time
  std::optional<double> predicted_s;
  std::optional<double> measured_speedup, predicted_speedup;
  std::optional<double> measured_efficiency, predicted_efficiency;
  std::optional<double> error;  ///< predicted / measured - 1
};

struct ScalingCurve {
  std::string cluster, model, family;
  ScalingKind scaling = ScalingKind::strong;
  int mbs = 1;
  int batch = 1;    ///< gbs (strong) or gbs per GPU (weak)
  int base_gpus = 1;  ///< n0
  std::vector<CurvePoint> points;  ///< ascending GPUs
  std::optional<ScalingFit> measured_fit, predicted_fit;  ///< Amdahl (strong) or Gustafson (weak)
};

/// Groups runs into curves (see the header comment), ordered by (cluster, model, family, kind,
/// mbs, batch). Only step times are filled; call finish_curve() after setting predictions.
std::vector<ScalingCurve> group_curves(const std::vector<MeasuredRun>& runs);

/// Fills speedups, efficiencies, errors and fits from the points' measured_s / predicted_s.
void finish_curve(ScalingCurve& curve);

}  // namespace scalescope::planner
