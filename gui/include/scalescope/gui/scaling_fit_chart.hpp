// The scaling tab's speedup chart: measured and predicted speedup per curve (planner/scaling.hpp)
// with the Amdahl (strong) or Gustafson (weak) fit of each drawn as a line and every predicted
// point labelled with its step-time error.
//   Amdahl    S(x) = 1 / (s + (1 - s) / x)      Gustafson S(x) = x - s (x - 1)      x = n / n0
#pragma once

#include <QString>
#include <vector>

#include "scalescope/planner/scaling.hpp"

class QChart;

namespace scalescope::gui {

struct MeasuredPoint;

/// Groups the measured points into curves (planner::group_curves), sets each point's prediction
/// (matched by file) and fills speedups, errors and fits (planner::finish_curve), as `scalescope
/// scaling` does. Points of an unknown scaling kind are left out.
std::vector<planner::ScalingCurve> scaling_curves(const std::vector<MeasuredPoint>& points);

/// "ddp llama-1b mbs 2 gbs 16" (strong) or "... 4 seq/GPU" (weak).
QString curve_label(const planner::ScalingCurve& c);

/// The fitted speedup at x = n / n0 for the curve's kind.
double fitted_speedup(const planner::ScalingCurve& c, double serial_fraction, double x);

/// The speedup chart for the curves of `kind`; `only` >= 0 draws just curves[only].
QChart* build_speedup_chart(const std::vector<planner::ScalingCurve>& curves, planner::ScalingKind kind, int only);

}  // namespace scalescope::gui
