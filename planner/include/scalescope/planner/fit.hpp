// Amdahl (strong scaling) and Gustafson (weak scaling) fits of speedup curves.
//
// Amdahl, fixed global batch, serial fraction s:     S(n) = 1 / (s + (1 - s) / n)
//   1/S = 1/n + s (1 - 1/n) is linear in s, so s is the least-squares solution of
//   y = s x with x = 1 - 1/n, y = 1/S - 1/n:  s = sum(x y) / sum(x x)   (fit on 1/S, closed form).
// Gustafson, fixed per-GPU batch, serial fraction s: S(n) = n - s (n - 1)
//   with S the scaled speedup (throughput at n GPUs / throughput at 1 GPU). n - S = s (n - 1),
//   x = n - 1, y = n - S:  s = sum(x y) / sum(x x)   (ordinary least squares on S, closed form).
// Quality: R^2 = 1 - SS_res / SS_tot of the fitted S(n) against the given S (SS_tot around the mean
// of S; 1 when both are 0). s is not clamped: s < 0 means super-linear scaling, s > 1 slow-down.
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace scalescope::planner {

struct SpeedupPoint {
  double n = 1;        ///< GPUs (or nodes: any unit, the curve's base is n = 1)
  double speedup = 1;  ///< time(1) / time(n) for strong scaling; throughput(n) / throughput(1) for weak
};

struct ScalingFit {
  double serial_fraction = 0;  ///< s
  double r2 = 0;               ///< of S(n) against the points
  int points = 0;              ///< points used (n > 1 carry information; n = 1 is S = 1 for any s)
};

double amdahl_speedup(double serial_fraction, double n);
double gustafson_speedup(double serial_fraction, double n);

/// nullopt when no point has n > 1 (s is then undetermined).
std::optional<ScalingFit> fit_amdahl(std::span<const SpeedupPoint> points);
std::optional<ScalingFit> fit_gustafson(std::span<const SpeedupPoint> points);

}  // namespace scalescope::planner
