// Stage (D) of the collective fit: the efficiency-by-size curve of each op (method in fit.hpp).
#include <algorithm>
#include <cmath>
#include <map>

#include "fit_impl.hpp"

namespace scalescope::calib::fitimpl {

namespace {

/// One curve: knots at the rounded log2 sizes of `rows`, each the exp of the median over its rows
/// of log(t_model / t_measured) (t_model without any curve), clamped to [1/8, 8].
CollectiveParams::SizeCurve fit_curve(const CollectiveModel& m, const std::vector<const Sample*>& rows,
                                      std::map<int, std::vector<const Sample*>>& by_knot) {
  std::map<int, std::vector<double>> logs;
  for (const Sample* s : rows) {
    const int k = static_cast<int>(std::lround(std::log2(std::max(s->bytes, 1.0))));
    logs[k].push_back(std::log(predict(m, *s) / s->t_meas));
    by_knot[k].push_back(s);
  }
  CollectiveParams::SizeCurve c;
  for (const auto& [k, ls] : logs) {
    c.log2_bytes.push_back(k);
    c.factor.push_back(std::clamp(std::exp(median(ls)), 0.125, 8.0));
  }
  return c;
}

}  // namespace

void fit_size_efficiency(const CollectiveModel& shape, CollectiveParams& P, const std::vector<Sample>& samples,
                         std::vector<FittedValue>& values, std::string& rows_used) {
  CollectiveParams base = P;
  for (auto& c : base.size_efficiency) c = {};
  base.sendrecv_distinct_peers = {};
  const CollectiveModel m(shape, base);
  P = base;
  std::vector<const Sample*> all_used;
  auto fit_one = [&](const std::string& name, const std::vector<const Sample*>& rows, CollectiveParams::SizeCurve& out) {
    if (rows.empty()) return;
    std::map<int, std::vector<const Sample*>> by_knot;
    out = fit_curve(m, rows, by_knot);
    for (std::size_t i = 0; i < out.log2_bytes.size(); ++i) {
      const int k = static_cast<int>(out.log2_bytes[i]);
      values.push_back({"size_efficiency." + name + "@" + size_str(std::ldexp(1.0, k)), out.factor[i], 1.0, "factor",
                        describe(by_knot[k]),
                        "exp(median over the rows of log(t_model / t_measured)), t_model without the curve; divides "
                        "the op's whole time at this size, linear in log2(size) between knots"});
    }
    all_used.insert(all_used.end(), rows.begin(), rows.end());
  };
  for (CollOp op : kAllCollOps) {
    std::vector<const Sample*> rows, two, more;
    for (const auto& s : samples) {
      if (!s.in_fit || s.op != op) continue;
      rows.push_back(&s);
      (s.n == 2 ? two : more).push_back(&s);
    }
    if (op != CollOp::sendrecv) {
      fit_one(std::string(to_string(op)), rows, P.size_efficiency[static_cast<std::size_t>(idx(op))]);
      continue;
    }
    // sendrecv: 2 ranks send to and receive from the same peer, 3+ ranks from two different peers
    // (NCCL runs other connections and chunking then): two curves where the rows allow.
    fit_one("sendrecv", two.empty() ? more : two, P.size_efficiency[static_cast<std::size_t>(idx(op))]);
    if (!two.empty()) fit_one("sendrecv_distinct_peers", more, P.sendrecv_distinct_peers);
  }
  rows_used = describe(all_used);
}

}  // namespace scalescope::calib::fitimpl
