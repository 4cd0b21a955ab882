// Scores of `scalescope validate`: mean absolute percentage error and Spearman rank correlation,
// overall and inside each model / GPU-count group.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "validate_a100.hpp"

namespace scalescope::cli {

namespace {

template <class Err>
double mean_abs(const std::vector<ValidationRow>& rows, Err err) {
  double sum = 0;
  int n = 0;
  for (const auto& r : rows) {
    if (!r.skipped.empty()) continue;
    const double e = err(r);
    if (std::isnan(e)) continue;
    sum += std::fabs(e);
    ++n;
  }
  return n ? sum / n : std::nan("");
}

std::vector<double> ranks_of(const std::vector<double>& v) {
  std::vector<std::size_t> idx(v.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = (static_cast<double>(i) + static_cast<double>(j)) / 2.0 + 1.0;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

}  // namespace

double mape(const std::vector<ValidationRow>& rows) {
  return mean_abs(rows, [](const ValidationRow& r) { return r.ape(); });
}

double mape_unfitted(const std::vector<ValidationRow>& rows) {
  return mean_abs(rows, [](const ValidationRow& r) { return r.ape_unfitted(); });
}

double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size() || a.size() < 3) return std::nan("");
  const auto ra = ranks_of(a), rb = ranks_of(b);
  const double n = static_cast<double>(a.size());
  const double ma = std::accumulate(ra.begin(), ra.end(), 0.0) / n, mb = std::accumulate(rb.begin(), rb.end(), 0.0) / n;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - ma) * (rb[i] - mb);
    saa += (ra[i] - ma) * (ra[i] - ma);
    sbb += (rb[i] - mb) * (rb[i] - mb);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : std::nan("");
}

std::vector<GroupStats> group_stats(const ValidationSet& set) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<const ValidationRow*>> by;
  for (const auto& r : set.rows) {
    if (!r.skipped.empty()) continue;
    if (!by.count(r.group)) order.push_back(r.group);
    by[r.group].push_back(&r);
  }
  std::vector<GroupStats> out;
  for (const auto& g : order) {
    std::vector<ValidationRow> rows;
    std::vector<double> meas, pred, unfit;
    for (const auto* r : by[g]) {
      rows.push_back(*r);
      meas.push_back(r->measured);
      pred.push_back(r->predicted);
      unfit.push_back(r->unfitted);
    }
    GroupStats s{g, static_cast<int>(rows.size()), mape(rows), spearman(meas, pred)};
    if (set.has_fit) {
      s.mape_unfitted = mape_unfitted(rows);
      s.spearman_unfitted = spearman(meas, unfit);
    }
    out.push_back(s);
  }
  return out;
}

}  // namespace scalescope::cli
