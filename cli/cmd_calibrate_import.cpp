// `scalescope calibrate import-attention FILE --into PROFILE`: writes measured flash-attention timings
// (validation/attention/measure_attention.py output) into a calibration profile's `attention` section.
// `scalescope calibrate import-mamba FILE --into PROFILE`: the same for measured Mamba-2 kernel times
// (validation/session33/ssd_kernels.py output) and the profile's `mamba` section.
// `scalescope calibrate import-power SWEEP [MIX...] --into PROFILE`: the profile's `power` section fitted on a kernel
// sweep (validation/clocks/power_sweep.py), checked against power_mix.py mixes (docs/power.md).
// `scalescope calibrate import-section SECTION FROM --into PROFILE`: copies one section (e.g.
// `interference`) from another run of scalescope-calibrate into a profile.
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cli_common.hpp"
#include "scalescope/calibrate/profile.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::cli {

namespace {

struct ImportAttentionCmd {
  std::string file, into, source;
  Format format = Format::text;
};

struct ImportSectionCmd {
  std::string section = "interference", from, into;
  Format format = Format::text;
};

// Rewrites `file` with its top-level `key` set to `value`, keeping the profile's key order and one-space
// indent (a small diff), atomically.
Expected<bool> rewrite_section(const std::string& file, const std::string& key, const Json& value) {
  auto text = read_input_file(file, kMaxInputFileBytes, "calibration profile");
  if (!text) return text.error();
  if (auto checked = parse_json_text(*text, file); !checked) return checked.error();  // depth and numbers
  try {
    nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(*text);
    ordered[key] = nlohmann::ordered_json::parse(dump_json(value, -1));
    return write_file_atomic(file, dump_json(ordered, 1) + "\n");
  } catch (const nlohmann::json::exception& e) {  // the file changed since it was checked
    return input_error(file, "", std::string("malformed JSON: ") + e.what());
  }
}

/// What a measured section's import takes: its name, its maker, and what its rows are called in the report.
struct MeasuredSection {
  const char* command;
  const char* key;
  const char* rows_name;
  Expected<Json> (*make)(const Json&, const std::string&, const std::string&);
};

int run_import_measured(const ImportAttentionCmd& o, const MeasuredSection& m) {
  const std::string cmd = m.command;
  auto measurement = read_json_file(o.file);
  if (!measurement) return report(cmd, measurement.error());
  auto section = m.make(*measurement, o.file, o.source);
  if (!section) return report(cmd, section.error());
  auto profile = read_json_file(o.into);
  if (!profile) return report(cmd, profile.error());
  auto updated = models::with_profile_section(*profile, m.key, *section, o.into);
  if (!updated) return report(cmd, updated.error());
  if (auto ok = rewrite_section(o.into, m.key, (*updated)[m.key]); !ok) return report(cmd, ok.error());
  const std::size_t rows = (*section)["rows"].size();
  if (o.format == Format::json) {
    print_stdout(dump_json(Json{{"profile", o.into}, {"rows", rows}, {"source", (*section)["source"]}}));
  } else {
    print_stdout("wrote " + std::to_string(rows) + " " + m.rows_name + " rows into " + o.into + "\nsource: " +
                 ((*section)["source"].is_string() ? (*section)["source"].get<std::string>() : std::string("-")));
  }
  return 0;
}

constexpr MeasuredSection kAttention{"calibrate import-attention", "attention", "attention", models::make_attention_section};
constexpr MeasuredSection kMamba{"calibrate import-mamba", "mamba", "Mamba-2 kernel", models::make_mamba_section};

struct ImportPowerCmd {
  std::vector<std::string> files;
  std::string into, source;
  Format format = Format::text;
};

int run_import_power(const ImportPowerCmd& o) {
  const std::string cmd = "calibrate import-power";
  std::vector<std::pair<Json, std::string>> measurements;
  for (const std::string& f : o.files) {
    auto doc = read_json_file(f);
    if (!doc) return report(cmd, doc.error());
    measurements.emplace_back(std::move(doc).value(), f);
  }
  auto section = models::make_power_section(measurements, o.source);
  if (!section) return report(cmd, section.error());
  auto profile = read_json_file(o.into);
  if (!profile) return report(cmd, profile.error());
  auto updated = models::with_profile_section(*profile, "power", *section, o.into);
  if (!updated) return report(cmd, updated.error());
  if (auto ok = rewrite_section(o.into, "power", (*updated)["power"]); !ok) return report(cmd, ok.error());
  if (o.format == Format::json) {
    print_stdout(dump_json(Json{{"profile", o.into}, {"power", *section}}));
    return 0;
  }
  const Json& sec = *section;
  auto num = [](double v, const char* fmt) {
    char b[32];
    std::snprintf(b, sizeof b, fmt, v);
    return std::string(b);
  };
  std::string out = "wrote the power section into " + o.into + ": idle " + num(sec["idle_w"].get<double>(), "%.1f") +
                    " W, capped " + num(sec["capped_w"].get<double>(), "%.1f") + " W\n";
  Table t;
  t.header = {"class", "W while running", "per unit of work", "kernels"};
  t.right_align = {false, true, true, true};
  for (const auto& [name, c] : sec["classes"].items()) {
    const bool bytes = c["unit"] == "byte";
    t.rows.push_back({name, num(c["watts"].get<double>(), "%.0f"),
                      num(c["joules_per_unit"].get<double>() * 1e12, "%.3g") + (bytes ? " pJ/B" : " pJ/FLOP"),
                      std::to_string(c["kernels"].size())});
  }
  out += t.to_text();
  Table k;
  k.header = {"kernel", "class", "measured W", "modelled W"};
  k.right_align = {false, false, true, true};
  for (const Json& r : sec["kernels"]) {
    k.rows.push_back({r["name"].get<std::string>() + (r["fitted"].get<bool>() ? "" : " (not fitted)"),
                      r["class"].get<std::string>(),
                      num(r["measured_w"].get<double>(), "%.0f"), num(r["modelled_w"].get<double>(), "%.0f")});
  }
  out += "\n" + k.to_text();
  if (!sec["checks"].empty()) {
    Table c;
    c.header = {"mix (check: not fitted)", "GEMM share", "GEMM rate / bursts, measured", "modelled"};
    c.right_align = {false, true, true, true};
    for (const Json& r : sec["checks"]) {
      c.rows.push_back({r["file"].get<std::string>(), num(r["gemm_share"].get<double>(), "%.2f"),
                        num(r["measured"].get<double>(), "%.3f"), num(r["modelled"].get<double>(), "%.3f")});
    }
    out += "\n" + c.to_text();
  }
  print_stdout(out);
  return 0;
}

/// The profile's `tool.command_line` when it is a string, else "" (a wrong type is not an abort).
Json command_line_of(const Json& profile) {
  if (!profile.contains("tool") || !profile["tool"].is_object()) return "";
  const Json& tool = profile["tool"];
  return tool.contains("command_line") && tool["command_line"].is_string() ? tool["command_line"] : Json("");
}

int run_import_section(const ImportSectionCmd& o) {
  const std::string cmd = "calibrate import-section";
  auto from = read_json_file(o.from);
  if (!from) return report(cmd, from.error());
  if (auto checked = calib::profile_from_json(*from, o.from); !checked) return report(cmd, checked.error());
  if (o.section == "schema" || o.section == "collectives" || o.section == "gemm") {
    return report(cmd, input_error("", "SECTION",
                                   "'" + o.section + "' is not copied whole (collective and GEMM rows are merged by "
                                   "size and shape, not replaced); expected a section such as interference"));
  }
  if (!from->contains(o.section) || !(*from)[o.section].is_object()) {
    return report(cmd, input_error(o.from, "$." + o.section, "expected an object (the section to copy), found none"));
  }
  Json section = (*from)[o.section];
  Json gpus = Json::array();
  if (from->contains("gpus") && (*from)["gpus"].is_array()) {
    for (const auto& g : (*from)["gpus"])
      gpus.push_back(g.is_object() && g.contains("name") && g["name"].is_string() ? g["name"] : Json(""));
  }
  section["imported_from"] = {{"file", o.from},
                              {"created_utc", from->value("created_utc", Json(nullptr))},
                              {"command_line", command_line_of(*from)},
                              {"gpus", gpus}};
  auto profile = read_json_file(o.into);
  if (!profile) return report(cmd, profile.error());
  Json updated = *profile;
  updated[o.section] = section;
  // Both readers must accept the result before anything is written.
  if (auto ok = calib::profile_from_json(updated, o.into); !ok) return report(cmd, ok.error());
  if (auto ok = models::compute_profile_from_json(updated, o.into); !ok) return report(cmd, ok.error());
  if (auto ok = rewrite_section(o.into, o.section, section); !ok) return report(cmd, ok.error());
  if (o.format == Format::json) {
    print_stdout(dump_json(Json{{"profile", o.into}, {"section", o.section}, {"from", o.from}}));
  } else {
    print_stdout("wrote section '" + o.section + "' of " + o.from + " into " + o.into);
  }
  return 0;
}

}  // namespace

void register_calibrate_import_section(CLI::App* calibrate, Context& ctx) {
  auto o = std::make_shared<ImportSectionCmd>();
  CLI::App* sub = calibrate->add_subcommand(
      "import-section",
      "Copy one section (default interference) of a profile written by scalescope-calibrate (e.g. a run with "
      "`--sections interf`) into another profile, replacing the old one; the copy records the run it came from in "
      "`imported_from` and the profile is rewritten atomically, only if both profile readers accept the result");
  sub->add_option("SECTION", o->section, "Top-level section to copy")->capture_default_str();
  sub->add_option("FROM", o->from, "Profile to copy it from")->required();
  sub->add_option("--into", o->into, "Calibration profile to update (a file path)")->required();
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run_import_section(*o); });
}

void register_calibrate_import_attention(CLI::App* calibrate, Context& ctx) {
  auto o = std::make_shared<ImportAttentionCmd>();
  CLI::App* sub = calibrate->add_subcommand(
      "import-attention",
      "Write measured flash-attention forward/backward times (scalescope.attention-measurement/1, from "
      "validation/attention/measure_attention.py) into a calibration profile's `attention` section (replacing an "
      "old one; the profile is rewritten atomically)");
  sub->add_option("FILE", o->file, "Attention measurement JSON")->required();
  sub->add_option("--into", o->into, "Calibration profile to update (a file path)")->required();
  sub->add_option("--source", o->source,
                  "Text for the section's `source` (where and how it was measured; default: from the file's gpu, "
                  "date and method)");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run_import_measured(*o, kAttention); });
}

void register_calibrate_import_mamba(CLI::App* calibrate, Context& ctx) {
  auto o = std::make_shared<ImportAttentionCmd>();
  CLI::App* sub = calibrate->add_subcommand(
      "import-mamba",
      "Write measured Mamba-2 kernel times (mamba_ssm's SSD scan and gated RMSNorm, forward and backward, from "
      "validation/session33/ssd_kernels.py) into a calibration profile's `mamba` section (replacing an old one; the "
      "profile is rewritten atomically). The fused stack's Mamba-2 rows are then scaled to the nearest measured shape "
      "(docs/hybrid.md)");
  sub->add_option("FILE", o->file, "Mamba-2 kernel measurement JSON")->required();
  sub->add_option("--into", o->into, "Calibration profile to update (a file path)")->required();
  sub->add_option("--source", o->source,
                  "Text for the section's `source` (where and how it was measured; default: from the file's meta)");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run_import_measured(*o, kMamba); });
}

void register_calibrate_import_power(CLI::App* calibrate, Context& ctx) {
  auto o = std::make_shared<ImportPowerCmd>();
  CLI::App* sub = calibrate->add_subcommand(
      "import-power",
      "Fit what a GPU draws by kernel class (GEMM by precision, attention by backend, memory-bound) on a sweep of "
      "kernels each run alone back to back (validation/clocks/power_sweep.py) and write it, with the idle and capped "
      "draw, into a calibration profile's `power` section (replacing an old one; the profile is rewritten "
      "atomically). Predictions then slow the tensor-core kernels of ranks whose draw reaches the cap "
      "(docs/power.md). validation/clocks/power_mix.py files given beside the sweep are checks: each mix's GEMM rate "
      "is printed beside the rate the fitted classes give it");
  sub->add_option("FILE", o->files, "One power_sweep.py output and any power_mix.py outputs (JSON)")->required();
  sub->add_option("--into", o->into, "Calibration profile to update (a file path)")->required();
  sub->add_option("--source", o->source,
                  "Text for the section's `source` (where and how it was measured; default: from the files' GPU)");
  add_format_option(sub, o->format);
  sub->callback([o, &ctx] { ctx.exit_code = run_import_power(*o); });
}

}  // namespace scalescope::cli
