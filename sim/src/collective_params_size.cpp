// Efficiency-by-size curves of the collective model: evaluation and their JSON form.
#include "collective_params_size.hpp"

#include <algorithm>
#include <cmath>

namespace scalescope {

double CollectiveParams::SizeCurve::at(double bytes) const {
  if (log2_bytes.empty()) return 1.0;
  const double x = std::log2(std::max(bytes, 1.0));
  if (x <= log2_bytes.front()) return factor.front();
  if (x >= log2_bytes.back()) return factor.back();
  const auto it = std::upper_bound(log2_bytes.begin(), log2_bytes.end(), x);
  const auto i = static_cast<std::size_t>(it - log2_bytes.begin());  // log2_bytes[i-1] <= x < log2_bytes[i]
  const double w = (x - log2_bytes[i - 1]) / (log2_bytes[i] - log2_bytes[i - 1]);
  return factor[i - 1] + w * (factor[i] - factor[i - 1]);
}

namespace collparams {

namespace {

constexpr const char* kDistinct = "sendrecv_distinct_peers";

Json curve_json(const CollectiveParams::SizeCurve& c) {
  Json j = Json::object();
  j["log2_bytes"] = c.log2_bytes;
  j["factor"] = c.factor;
  return j;
}

CollectiveParams::SizeCurve read_curve(const JsonCursor& c) {
  c.expect_keys({"log2_bytes", "factor"});
  CollectiveParams::SizeCurve out;
  const JsonCursor xs = c.at("log2_bytes"), fs = c.at("factor");
  for (const auto& x : xs.items()) {
    const double v = x.as_nonnegative_number();
    if (v > 64.0) x.fail("expected log2 of a size in bytes, at most 64, " + JsonCursor::describe(x.json()));
    if (!out.log2_bytes.empty() && v <= out.log2_bytes.back())
      x.fail("expected knots in strictly increasing order, " + JsonCursor::describe(x.json()));
    out.log2_bytes.push_back(v);
  }
  for (const auto& f : fs.items()) {
    const double v = f.as_positive_number();
    if (v > 100.0) f.fail("expected an efficiency factor in (0, 100], " + JsonCursor::describe(f.json()));
    out.factor.push_back(v);
  }
  if (out.factor.size() != out.log2_bytes.size())
    fs.fail("expected as many factors as log2_bytes knots (" + std::to_string(out.log2_bytes.size()) + "), got " +
            std::to_string(out.factor.size()));
  return out;
}

}  // namespace

Json size_efficiency_to_json(const CollectiveParams& p) {
  Json j = Json::object();
  bool any = !p.sendrecv_distinct_peers.empty();
  for (const auto& c : p.size_efficiency) any = any || !c.empty();
  if (!any) return j;
  j["source"] = p.size_efficiency_source;
  for (CollOp op : kAllCollOps) {
    const auto& c = p.size_efficiency[static_cast<std::size_t>(idx(op))];
    if (!c.empty()) j[std::string(to_string(op))] = curve_json(c);
  }
  if (!p.sendrecv_distinct_peers.empty()) j[kDistinct] = curve_json(p.sendrecv_distinct_peers);
  return j;
}

void read_size_efficiency(const JsonCursor& g, CollectiveParams& p) {
  g.expect_object();
  for (const auto& [key, value] : g.members()) {
    if (key == "source") continue;
    if (key == kDistinct) {
      p.sendrecv_distinct_peers = read_curve(value);
      continue;
    }
    const auto op = parse_coll_op(key);
    if (!op) value.fail("unknown key '" + key + "' (expected one of: source, " + coll_op_choices() + ", " + kDistinct + ")");
    p.size_efficiency[static_cast<std::size_t>(idx(*op))] = read_curve(value);
  }
  const std::string src = g.get_string("source");
  if (src.empty()) g.at("source").fail("expected a non-empty string describing where the values come from");
  p.size_efficiency_source = src;
}

}  // namespace collparams

}  // namespace scalescope
