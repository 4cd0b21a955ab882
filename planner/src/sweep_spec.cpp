// Sweep spec parsing: the cartesian product or the listed points, checked field by field.
#include "scalescope/planner/sweep_spec.hpp"

#include <cstdio>

#include "scalescope/models/plan.hpp"
#include "scalescope/planner/search.hpp"

namespace scalescope::planner {

namespace {

constexpr const char* kFormat = "scalescope.sweep/1";
constexpr double kMaxPoints = 1e7;

std::vector<std::string> strings(const JsonCursor& c, bool allow_empty) {
  std::vector<std::string> out;
  for (const auto& item : c.items()) {
    std::string s = item.as_string();
    if (s.empty() && !allow_empty) item.fail("expected a non-empty string");
    out.push_back(std::move(s));
  }
  if (out.empty()) c.fail("expected a non-empty array");
  return out;
}

int count(const JsonCursor& item) {
  const std::int64_t v = item.as_positive_int();
  if (v > (1 << 24)) item.fail("expected at most 16777216, got " + std::to_string(v));
  return static_cast<int>(v);
}

std::vector<int> counts(const JsonCursor& c) {
  std::vector<int> out;
  for (const auto& item : c.items()) out.push_back(count(item));
  if (out.empty()) c.fail("expected a non-empty array");
  return out;
}

/// A plan constraint (plan mode) or a plan template without dp and gbs (simulate mode), checked at `c`.
void check_fixed(const JsonCursor& c, const std::string& text, SweepMode mode) {
  if (mode == SweepMode::plan) {
    if (text.empty()) return;
    auto f = parse_plan_filter(text, "constraint");
    if (!f) c.fail(f.error().path.empty() ? f.error().message : f.error().path + ": " + f.error().message);
    return;
  }
  for (const char* key : {"dp=", "gbs="}) {
    const auto at = text.find(key);
    if (at != std::string::npos && (at == 0 || text[at - 1] == ','))
      c.fail(std::string("the plan must leave out '") + key + "..' (dp = gpus / the other plan keys; gbs from "
             "global_batches), got '" + text + "'");
  }
  auto p = models::parse_plan(text.empty() ? "gbs=1" : text + ",gbs=1", "plan");
  if (!p) c.fail(p.error().path.empty() ? p.error().message : p.error().path + ": " + p.error().message);
}

std::string fnv1a_hex(const std::string& s) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

void parse_options(const JsonCursor& o, SweepSpec& s) {
  o.expect_keys({"top", "flow_top", "max_mbs", "max_vpp", "allow_cross_node_tp", "seq", "fidelity"});
  SweepOptions& opt = s.options;
  if (auto v = o.find("top")) opt.top = static_cast<int>(v->as_positive_int());
  if (auto v = o.find("flow_top")) opt.flow_top = static_cast<int>(v->as_nonnegative_int());
  if (auto v = o.find("max_mbs")) opt.max_mbs = static_cast<int>(v->as_positive_int());
  if (auto v = o.find("max_vpp")) opt.max_vpp = static_cast<int>(v->as_positive_int());
  opt.allow_cross_node_tp = o.get_bool("allow_cross_node_tp", false);
  if (auto v = o.find("seq")) opt.seq = static_cast<int>(v->as_positive_int());
  if (auto v = o.find("fidelity")) opt.fidelity = v->as_enum({"analytical", "flow"});
  if (opt.top > 1000) o.at("top").fail("expected at most 1000");
  if (s.mode == SweepMode::simulate) {
    for (const char* k : {"top", "flow_top", "max_mbs", "max_vpp", "allow_cross_node_tp", "seq"})
      if (o.has(k)) o.at(k).fail("applies to mode \"plan\" only");
  } else if (o.has("fidelity")) {
    o.at("fidelity").fail("applies to mode \"simulate\" only (plan mode ranks analytically, then confirms flow_top)");
  }
}

void parse_points(const JsonCursor& c, SweepSpec& s) {
  const char* fixed_key = s.mode == SweepMode::plan ? "constraint" : "plan";
  for (const auto& p : c.items()) {
    p.expect_keys({"model", "cluster", "gpus", "global_batch", "calibration", "stack", fixed_key});
    SweepPoint pt;
    pt.model = p.get_string("model");
    pt.cluster = p.get_string("cluster");
    if (pt.model.empty()) p.at("model").fail("expected a non-empty string");
    if (pt.cluster.empty()) p.at("cluster").fail("expected a non-empty string");
    pt.gpus = count(p.at("gpus"));
    pt.gbs = count(p.at("global_batch"));
    pt.calibration = p.get_string("calibration", "");
    pt.stack = p.get_string("stack", "fused");
    if (s.mode == SweepMode::simulate && !p.has("plan")) p.fail("missing required key 'plan'");
    pt.fixed = p.get_string(fixed_key, "");
    if (auto f = p.find(fixed_key)) check_fixed(*f, pt.fixed, s.mode);
    s.points.push_back(std::move(pt));
  }
  if (s.points.empty()) c.fail("expected a non-empty array");
}

void parse_product(const JsonCursor& c, SweepSpec& s) {
  const char* fixed_key = s.mode == SweepMode::plan ? "constraints" : "plans";
  const auto models = strings(c.at("models"), false);
  const auto clusters = strings(c.at("clusters"), false);
  const auto gpus = counts(c.at("gpus"));
  const auto gbs = counts(c.at("global_batches"));
  const auto calibrations = c.has("calibrations") ? strings(c.at("calibrations"), true) : std::vector<std::string>{""};
  const auto stacks = c.has("stacks") ? strings(c.at("stacks"), false) : std::vector<std::string>{"fused"};
  if (s.mode == SweepMode::simulate && !c.has("plans")) c.fail("missing required key 'plans' (mode \"simulate\")");
  const auto fixed = c.has(fixed_key) ? strings(c.at(fixed_key), true) : std::vector<std::string>{""};
  if (c.has(fixed_key)) {
    const JsonCursor f = c.at(fixed_key);
    for (std::size_t i = 0; i < fixed.size(); ++i) check_fixed(f.at(i), fixed[i], s.mode);
  }
  const double n = 1.0 * models.size() * clusters.size() * calibrations.size() * stacks.size() * gpus.size() *
                   gbs.size() * fixed.size();
  if (n > kMaxPoints) c.fail("the product has " + std::to_string(static_cast<long long>(n)) + " points, more than 10,000,000");
  for (const auto& m : models)
    for (const auto& cl : clusters)
      for (const auto& cal : calibrations)
        for (const auto& st : stacks)
          for (int g : gpus)
            for (int b : gbs)
              for (const auto& f : fixed) s.points.push_back(SweepPoint{m, cl, cal, st, f, g, b});
}

}  // namespace

std::string_view to_string(SweepMode m) { return m == SweepMode::plan ? "plan" : "simulate"; }

Json canonical_json(const SweepSpec& s) {
  Json pts = Json::array();
  for (const auto& p : s.points)
    pts.push_back(Json::array({p.model, p.cluster, p.calibration, p.stack, p.fixed, p.gpus, p.gbs}));
  const SweepOptions& o = s.options;
  return Json{{"format", kFormat},
              {"mode", std::string(to_string(s.mode))},
              {"options", {{"top", o.top}, {"flow_top", o.flow_top}, {"max_mbs", o.max_mbs}, {"max_vpp", o.max_vpp},
                           {"allow_cross_node_tp", o.allow_cross_node_tp}, {"seq", o.seq ? Json(*o.seq) : Json(nullptr)},
                           {"fidelity", o.fidelity}}},
              {"points", pts}};
}

Expected<SweepSpec> parse_sweep_spec(const Json& json, const std::string& file) {
  return catch_errors([&] {
    const JsonCursor c(json, file);
    c.expect_object();
    c.expect_keys({"format", "mode", "models", "clusters", "gpus", "global_batches", "calibrations", "stacks",
                   "constraints", "plans", "options", "points"});
    SweepSpec s;
    s.file = file;
    if (c.get_string("format") != kFormat) c.at("format").fail(std::string("expected \"") + kFormat + "\"");
    s.mode = c.at("mode").as_enum({"plan", "simulate"}) == "plan" ? SweepMode::plan : SweepMode::simulate;
    if (s.mode == SweepMode::plan && c.has("plans")) c.at("plans").fail("mode \"plan\" searches plans; use \"constraints\"");
    if (s.mode == SweepMode::simulate && c.has("constraints"))
      c.at("constraints").fail("mode \"simulate\" takes fixed \"plans\"; constraints apply to mode \"plan\"");
    if (auto o = c.find("options")) parse_options(*o, s);
    if (auto p = c.find("points")) {
      for (const char* k : {"models", "clusters", "gpus", "global_batches", "calibrations", "stacks", "constraints", "plans"})
        if (c.has(k)) c.at(k).fail("give either \"points\" or the product keys, not both");
      s.listed = true;
      parse_points(*p, s);
    } else {
      parse_product(c, s);
    }
    s.fingerprint = fnv1a_hex(canonical_json(s).dump());
    return s;
  });
}

Expected<SweepSpec> load_sweep_spec(const std::filesystem::path& file) {
  auto j = read_json_file(file);
  if (!j) return j.error();
  return parse_sweep_spec(*j, file.string());
}

}  // namespace scalescope::planner
