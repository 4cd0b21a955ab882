// Reading a measured set's pricing record (measured_pricing.hpp).
#include "scalescope/planner/measured_pricing.hpp"

#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

namespace fs = std::filesystem;

namespace {

/// A path from the record: relative ones are relative to the record's folder; a bare name (no '/',
/// no ".json") stays a name (a built-in calibration profile).
std::string resolve(const fs::path& dir, const std::string& p) {
  if (p.empty() || fs::path(p).is_absolute()) return p;
  if (p.find('/') == std::string::npos && !p.ends_with(".json")) return p;
  return (dir / p).lexically_normal().string();
}

}  // namespace

Expected<std::optional<MeasuredPricing>> load_measured_pricing(const fs::path& file_or_dir) {
  std::error_code ec;
  const fs::path dir = fs::is_directory(file_or_dir, ec) ? file_or_dir : file_or_dir.parent_path();
  const fs::path file = (dir.empty() ? fs::path(".") : dir) / kMeasuredPricingFile;
  if (!fs::exists(file, ec)) return std::optional<MeasuredPricing>();
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  return catch_errors([&]() -> std::optional<MeasuredPricing> {
    const JsonCursor c(*doc, file.string());
    c.expect_keys({"schema", "note", "calibration", "framework", "eager_bandwidth_factor_file", "host_cost"});
    if (c.get_string("schema") != "scalescope.measured_pricing/1")
      c.at("schema").fail("expected \"scalescope.measured_pricing/1\"");
    MeasuredPricing p;
    p.file = file.string();
    p.calibration = resolve(file.parent_path(), c.get_string("calibration", ""));
    p.framework = c.get_string("framework", "");
    p.host_cost = resolve(file.parent_path(), c.get_string("host_cost", ""));
    if (auto f = c.find("eager_bandwidth_factor_file")) {
      const std::string factor_file = resolve(file.parent_path(), f->as_string());
      auto fdoc = read_json_file(factor_file);
      if (!fdoc) throw ErrorException(fdoc.error());
      const JsonCursor fc(*fdoc, factor_file);
      const JsonCursor factor = fc.at("factor");
      p.eager_factor = factor.as_positive_number();
      if (*p.eager_factor > 10) factor.fail("expected a bandwidth factor in (0, 10], got " + std::to_string(*p.eager_factor));
      p.eager_factor_source = fc.get_string("source", factor_file);
    }
    return p;
  });
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const bool equal = fs::equivalent(a, b, ea);
  return (ea || eb) ? fs::path(a).lexically_normal() == fs::path(b).lexically_normal() : equal;
}

}  // namespace scalescope::planner
