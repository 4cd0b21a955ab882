// `scalescope calibrate import-attention FILE --into PROFILE`: writes measured flash-attention timings
// (validation/attention/measure_attention.py output) into a calibration profile's `attention` section.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "cli_common.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::cli {

namespace {

struct ImportAttentionCmd {
  std::string file, into, source;
  Format format = Format::text;
};

int run_import_attention(const ImportAttentionCmd& o) {
  const std::string cmd = "calibrate import-attention";
  auto measurement = read_json_file(o.file);
  if (!measurement) return report(cmd, measurement.error());
  auto section = models::make_attention_section(*measurement, o.file, o.source);
  if (!section) return report(cmd, section.error());
  auto profile = read_json_file(o.into);
  if (!profile) return report(cmd, profile.error());
  auto updated = models::with_attention_section(*profile, *section, o.into);
  if (!updated) return report(cmd, updated.error());
  // Rewrite keeping the profile's key order and one-space indent (a small diff): parse it again as an
  // ordered document and set only `attention`.
  std::ifstream in(o.into);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(text.str());
  ordered["attention"] = nlohmann::ordered_json::parse((*updated)["attention"].dump());
  if (auto ok = write_file_atomic(o.into, ordered.dump(1) + "\n"); !ok) return report(cmd, ok.error());
  const std::size_t rows = (*section)["rows"].size();
  if (o.format == Format::json) {
    print_stdout(Json{{"profile", o.into}, {"rows", rows}, {"source", (*section)["source"]}}.dump(2));
  } else {
    print_stdout("wrote " + std::to_string(rows) + " attention rows into " + o.into + "\nsource: " +
                 (*section)["source"].get<std::string>());
  }
  return 0;
}

}  // namespace

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
  sub->callback([o, &ctx] { ctx.exit_code = run_import_attention(*o); });
}

}  // namespace scalescope::cli
