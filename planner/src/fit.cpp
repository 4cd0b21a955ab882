// Amdahl and Gustafson least-squares fits (equations in fit.hpp).
#include "scalescope/planner/fit.hpp"

#include <cmath>

namespace scalescope::planner {

double amdahl_speedup(double s, double n) { return 1.0 / (s + (1.0 - s) / n); }
double gustafson_speedup(double s, double n) { return n - s * (n - 1.0); }

namespace {

template <class Model>
std::optional<ScalingFit> fit_linear(std::span<const SpeedupPoint> points, Model model, bool amdahl) {
  double sxy = 0, sxx = 0;
  int informative = 0;
  for (const auto& p : points) {
    const double x = amdahl ? 1.0 - 1.0 / p.n : p.n - 1.0;
    const double y = amdahl ? 1.0 / p.speedup - 1.0 / p.n : p.n - p.speedup;
    sxy += x * y;
    sxx += x * x;
    if (p.n > 1.0) ++informative;
  }
  if (informative == 0 || sxx <= 0) return std::nullopt;
  ScalingFit f;
  f.serial_fraction = sxy / sxx;
  f.points = static_cast<int>(points.size());
  double mean = 0;
  for (const auto& p : points) mean += p.speedup;
  mean /= static_cast<double>(points.size());
  double ss_res = 0, ss_tot = 0;
  for (const auto& p : points) {
    const double r = p.speedup - model(f.serial_fraction, p.n);
    ss_res += r * r;
    ss_tot += (p.speedup - mean) * (p.speedup - mean);
  }
  if (ss_tot <= 0) f.r2 = ss_res <= 1e-24 ? 1.0 : 0.0;
  else f.r2 = 1.0 - ss_res / ss_tot;
  return f;
}

}  // namespace

std::optional<ScalingFit> fit_amdahl(std::span<const SpeedupPoint> points) {
  return fit_linear(points, amdahl_speedup, true);
}
std::optional<ScalingFit> fit_gustafson(std::span<const SpeedupPoint> points) {
  return fit_linear(points, gustafson_speedup, false);
}

}  // namespace scalescope::planner
