// Loading collective parameters and the compute model from calibration files that compose: each part from the
// first file that measured it, the rest from the cluster's datasheet (hardware.hpp).
#include "scalescope/calibrate/hardware.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>

#include "scalescope/calibrate/fit.hpp"
#include "scalescope/calibrate/profile.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/sim/data_files.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::calib {

namespace fs = std::filesystem;

std::string gpu_family(const std::string& name) {
  // The product token of a GPU name: "NVIDIA H100 80GB HBM3" -> H100, "H200 SXM 141GB" -> H200,
  // "NVIDIA GB200" -> GB200, "NVIDIA A100-SXM4-80GB" -> A100, "NVIDIA L40S" -> L40S.
  static const std::regex token(R"((?:^|[^A-Za-z0-9])((?:GB|GH|[ABHLV])[0-9]{2,3}[A-Z]?)(?:[^A-Za-z0-9]|$))");
  std::smatch m;
  if (std::regex_search(name, m, token)) return m[1].str();
  return name;
}

namespace {

/// One item of --calibration resolved to files: a name (calibrate/profiles/NAME.json), a file, or a directory
/// (its *.json files in name order).
Expected<std::vector<std::string>> resolve(const std::string& item) {
  std::error_code ec;
  if (fs::is_directory(item, ec)) {
    std::vector<std::string> files;
    for (fs::directory_iterator it(item, ec), end; !ec && it != end; it.increment(ec))
      if (it->is_regular_file(ec) && it->path().extension() == ".json") files.push_back(it->path().string());
    std::sort(files.begin(), files.end());
    if (files.empty()) return input_error(item, "", "a calibration directory with no .json files");
    return files;
  }
  if (looks_like_path(item)) return std::vector<std::string>{item};
  if (auto f = find_data_file("calibrate/profiles", item)) {
    // Named by its place in the repository where that is the same file (run from the checkout: the same output on
    // every machine), else by its full path.
    const bool here = fs::equivalent(f->label, f->path, ec) && !ec;
    return std::vector<std::string>{here ? f->label : f->path.string()};
  }
  std::string known;
  for (const auto& n : available_data_names("calibrate/profiles")) known += (known.empty() ? "" : ", ") + n;
  return input_error("--calibration", "", "no calibration profile named '" + item + "' (known: " + known +
                                              "); give a file, a directory or a name");
}

bool has_rows(const Json& doc, const char* key) {
  auto it = doc.find(key);
  return it != doc.end() && it->is_array() && !it->empty();
}

bool has_gpu_part(const Json& doc) {
  return has_rows(doc, "gemm") || (doc.contains("memory") && doc["memory"].is_object()) || doc.contains("attention") ||
         doc.contains("mamba") || doc.contains("power");
}

/// `into` gains what `part` measured and `into` did not (section by section).
void merge(models::ComputeProfile& into, models::ComputeProfile part, std::vector<std::string>& from,
           const std::string& file) {
  auto take = [&](bool missing, bool present, const char* what, auto&& move) {
    if (missing && present) {
      move();
      from.push_back(std::string(what) + " from " + file);
    }
  };
  take(into.gemms.empty(), !part.gemms.empty(), "GEMM", [&] { into.gemms = std::move(part.gemms); });
  take(!into.hbm_bandwidth && !into.elementwise_bandwidth && !into.launch_overhead,
       part.hbm_bandwidth || part.elementwise_bandwidth || part.launch_overhead, "memory and launch", [&] {
         into.hbm_bandwidth = part.hbm_bandwidth;
         into.elementwise_bandwidth = part.elementwise_bandwidth;
         into.elementwise_curve = std::move(part.elementwise_curve);
         into.launch_overhead = part.launch_overhead;
       });
  take(into.attention.empty(), !part.attention.empty(), "attention", [&] {
    into.attention = std::move(part.attention);
    into.attention_source = part.attention_source;
  });
  take(into.mamba.empty(), !part.mamba.empty(), "Mamba-2 kernels", [&] {
    into.mamba = std::move(part.mamba);
    into.mamba_source = part.mamba_source;
  });
  take(!into.power, part.power.has_value(), "power cap", [&] { into.power = std::move(part.power); });
  take(into.interference.empty(), !part.interference.empty(), "interference",
       [&] { into.interference = std::move(part.interference); });
  if (into.gpu.empty()) into.gpu = part.gpu;
}

}  // namespace

Expected<std::string> default_calibration(const std::string& gpu_model) {
  const auto file = find_data_file("calibrate", "gpu-defaults");
  if (!file) return std::string();
  auto doc = read_json_file(file->path);
  if (!doc) return doc.error();
  return catch_errors([&] {
    const JsonCursor c(*doc, file->label);
    c.expect_keys({"schema", "note", "defaults"});
    const std::string schema = c.get_string("schema");
    if (schema != "scalescope.gpu-defaults/1")
      c.at("schema").fail("expected \"scalescope.gpu-defaults/1\", got \"" + schema + "\"");
    const auto defaults = c.at("defaults");
    if (const auto name = defaults.find(gpu_model)) return name->as_string();
    return std::string();
  });
}

Expected<HardwareModels> load_hardware_models(const std::string& calibration, const Cluster& cluster,
                                              const CalibrationOptions& opt) {
  const GpuSpec& gpu = cluster.gpu_spec();
  auto sheet = models::ComputeModel::datasheet(gpu);
  if (!sheet) return sheet.error();
  HardwareModels hw{datasheet_collective_params(), "built-in datasheet parameters", std::move(sheet).value(),
                    "datasheet roofline", "", {}};
  if (calibration == "none") return hw;
  const bool defaulted = calibration.empty();
  std::string chosen = calibration;
  if (defaulted) {  // the shipped profile of the cluster's GPU type, if there is one
    auto d = default_calibration(gpu.model);
    if (!d) return d.error();
    if (d->empty()) return hw;
    chosen = *d;
  }

  std::vector<std::string> files;
  std::size_t start = 0;
  while (start <= chosen.size()) {
    const std::size_t comma = chosen.find(',', start);
    const std::string item = chosen.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) return input_error("--calibration", "", "expected a profile name, file or directory between commas");
    auto r = resolve(item);
    if (!r) return r.error();
    files.insert(files.end(), r->begin(), r->end());
    if (comma == std::string::npos) break;
    start = comma + 1;
  }

  bool have_collectives = false;
  models::ComputeProfile compute;
  std::vector<std::string> parts, notes;
  for (const std::string& file : files) {
    auto doc = read_json_file(file);
    if (!doc) return doc.error();
    // A file is a profile only when its schema says so (`calibrate fit -o` writes
    // "scalescope.collective_params/1", a parameters file; measure_attention.py an attention measurement).
    const std::string schema = doc->is_object() ? doc->value("schema", "") : "";
    if (schema == "scalescope.calibration-shapes/1") continue;  // what `calibrate run --model` measured, not a result
    const bool params_file = doc->is_object() && schema != kProfileSchema &&
                             schema != "scalescope.attention-measurement/1";
    // Fabric part: collective rows of a profile, or a collective-parameters file (`calibrate fit -o`).
    if (!have_collectives && (params_file || has_rows(*doc, "collectives"))) {
      std::string desc;
      auto p = load_collective_calibration(file, &cluster, &desc);
      if (!p) return p.error();
      hw.params = std::move(p).value();
      hw.collective_source = desc;
      have_collectives = true;
    }
    const bool attention_file = schema == "scalescope.attention-measurement/1";
    if (params_file || (!attention_file && !has_gpu_part(*doc))) continue;
    Expected<models::ComputeProfile> cp = input_error(file, "", "");
    if (attention_file) {  // validation/attention/measure_attention.py output: the attention part alone
      auto section = models::make_attention_section(*doc, file, "");
      if (!section) return section.error();
      Json wrapper{{"schema", "scalescope.calibration/1"}, {"gpus", Json::array({{{"name", doc->value("gpu", "")}}})},
                   {"attention", *section}};
      cp = models::compute_profile_from_json(wrapper, file);
    } else {
      cp = models::compute_profile_from_json(*doc, file);
    }
    if (!cp) return cp.error();
    if (!cp->gpu.empty() && gpu_family(cp->gpu) != gpu_family(gpu.model)) {
      const std::string note = "calibration " + file + " was measured on '" + cp->gpu + "', the cluster's GPU is '" +
                               gpu.model + "'";
      if (opt.strict) return input_error(file, "$.gpus[0].name", note + " (--strict)");
      notes.push_back(note);
    }
    merge(compute, std::move(cp).value(), parts, file);
  }
  if (!parts.empty()) {
    compute.source = files.size() == 1 ? files.front() : std::string("composed profile");
    std::string src;
    std::vector<std::string> from;
    for (const auto& p : parts) {
      src += (src.empty() ? "" : "; ") + p;
      from.push_back(p.substr(p.find(" from ") + 6));
    }
    const bool one_file = std::all_of(from.begin(), from.end(), [&](const std::string& f) { return f == from.front(); });
    auto cm = models::ComputeModel::with_profile(gpu, std::move(compute));
    if (!cm) return cm.error();
    hw.compute = std::move(cm).value();
    hw.compute_source = one_file ? "profile " + from.front() : "profile parts: " + src;
  }
  std::vector<std::string> unmeasured;
  if (!have_collectives) unmeasured.push_back("collectives and P2P (cluster datasheet link model)");
  if (parts.empty()) unmeasured.push_back("GPU compute (datasheet roofline of '" + gpu.model + "')");
  if (defaulted) {
    std::string line = "no --calibration: the shipped " + gpu_family(gpu.model) + " profile " + files.front() +
                       " prices the GPU";
    if (!unmeasured.empty()) line += ", the cluster's datasheet link model the collectives";
    notes.push_back(line + " (--calibration none: datasheet only)");
  } else if (!unmeasured.empty()) {
    std::string line = "not measured in " + chosen + ": ";
    for (std::size_t i = 0; i < unmeasured.size(); ++i) line += (i ? ", " : "") + unmeasured[i];
    notes.push_back(line);
  }
  for (const auto& n : notes) hw.gpu_note += (hw.gpu_note.empty() ? "" : "; ") + n;
  hw.notes = std::move(notes);
  return hw;
}

}  // namespace scalescope::calib
