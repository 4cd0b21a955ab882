// The profile `power` section from power-cap measurements (validation/clocks/power_sweep.py and power_mix.py;
// docs/power.md).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scalescope/models/compute_profile.hpp"
#include "scalescope/sim/statistics.hpp"

namespace scalescope::models {

namespace {

/// A sweep kernel's draw above idle at the rate it ran (header of make_power_section).
struct Point {
  std::string name;
  double rate = 0.0;  ///< work per second (FLOP/s or B/s)
  double watts = 0.0;
};

/// The class a sweep kernel belongs to: gemm_bf16, gemm_fp8, attention_flash, attention_cudnn or memory.
std::string class_of(const JsonCursor& k) {
  const std::string cls = k.at("class").as_enum({"gemm", "attention", "memory"});
  if (cls == "memory") return cls;
  if (cls == "gemm") return k.at("dtype").as_enum({"bf16", "fp16", "fp8"}) == "fp8" ? "gemm_fp8" : "gemm_bf16";
  const std::string name = k.get_string("name");
  const std::string backend = name.substr(0, name.find(' '));
  if (backend != "flash" && backend != "cudnn") k.at("name").fail("expected an attention kernel named 'flash ...' or 'cudnn ...'");
  return "attention_" + backend;
}

/// Least squares watts + joules x rate over the points; a fixed time part where the rates span less than 1.5x (or
/// the line would draw less than nothing at rate 0): then only the work part is fitted; where the draw falls with
/// the rate, the time part alone (the points' mean draw).
PowerClass fit(const std::vector<Point>& pts, std::optional<double> fixed_watts) {
  PowerClass c;
  c.kernels = static_cast<int>(pts.size());
  double lo = pts.front().rate, hi = lo;
  for (const Point& p : pts) lo = std::min(lo, p.rate), hi = std::max(hi, p.rate);
  auto work_only = [&](double watts) {
    double num = 0.0, den = 0.0;
    for (const Point& p : pts) num += (p.watts - watts) * p.rate, den += p.rate * p.rate;
    c.watts = watts;
    c.joules_per_unit = den > 0.0 ? num / den : 0.0;
  };
  if (pts.size() >= 2 && hi >= 1.5 * lo) {
    double mx = 0.0, my = 0.0;
    for (const Point& p : pts) mx += p.rate, my += p.watts;
    mx /= static_cast<double>(pts.size());
    my /= static_cast<double>(pts.size());
    double sxx = 0.0, sxy = 0.0;
    for (const Point& p : pts) sxx += (p.rate - mx) * (p.rate - mx), sxy += (p.rate - mx) * (p.watts - my);
    c.joules_per_unit = sxy / sxx;
    c.watts = my - c.joules_per_unit * mx;
    if (c.joules_per_unit < 0.0) {  // draw falling with the rate: the time part alone, the mean draw
      c.watts = my;
      c.joules_per_unit = 0.0;
    } else if (c.watts < 0.0) {
      work_only(0.0);
    }
  } else {
    work_only(fixed_watts.value_or(0.0));
    if (c.joules_per_unit < 0.0) work_only(0.0);
  }
  return c;
}

Json class_json(const PowerClass& c, const std::vector<Point>& pts, bool bytes) {
  Json names = Json::array();
  for (const Point& p : pts) names.push_back(p.name);
  return {{"watts", c.watts}, {"joules_per_unit", c.joules_per_unit}, {"unit", bytes ? "byte" : "FLOP"},
          {"kernels", names}};
}

/// The mix of `share` in a power_mix.py file, or fails naming what is missing.
JsonCursor mix_of(const JsonCursor& mixes, double share) {
  for (const JsonCursor& m : mixes.items()) {
    if (m.get_number_in("gemm_share", 0.0, 1.0) == share) return m;
  }
  mixes.fail("expected a mix with gemm_share " + std::string(share == 1.0 ? "1 (the GEMM alone)" : "0 (the add alone)"));
}

/// power_mix.py's mixes against the fitted model: per second of burst time, the GEMM's share G draws its class's
/// power at its burst rate and the add the memory class's at its bandwidth; r = G / (E / (capped - idle) - (1 - G)).
void add_checks(Json& checks, const JsonCursor& root, const std::map<std::string, PowerClass>& classes, double idle,
                double capped) {
  const std::string gemm = root.get_string("gemm");
  const std::string dtype = gemm.substr(gemm.find_last_of(' ') + 1);
  const auto cls = classes.find(dtype == "fp8" ? "gemm_fp8" : "gemm_bf16");
  if (cls == classes.end()) return;
  const JsonCursor mixes = root.at("mixes");
  const JsonCursor alone = mix_of(mixes, 1.0), add = mix_of(mixes, 0.0);
  const double burst_flops =
      alone.get_number_in("gemm_TFLOPS", 1e-3, 1e5) * 1e12 / alone.get_number_in("gemm_relative_to_bursts", 0.05, 2.0);
  const double add_bytes = add.get_number_in("add_GBps", 1e-3, 1e6) * 1e9;
  const PowerClass& mem = classes.at("memory");
  for (const JsonCursor& m : mixes.items()) {
    const double g = m.get_number_in("gemm_share", 0.0, 1.0);
    if (!(g > 0.0) || !m.has("gemm_relative_to_bursts") || !m.at("gemm_relative_to_bursts").json().is_number()) continue;
    const double energy = cls->second.energy(g, g * burst_flops) + mem.energy(1.0 - g, (1.0 - g) * add_bytes);
    const double window = energy / (capped - idle) - (1.0 - g);
    checks.push_back({{"file", root.file()}, {"gemm", gemm}, {"gemm_share", g},
                      {"measured", m.get_number_in("gemm_relative_to_bursts", 0.05, 2.0)},
                      {"modelled", window > g ? g / window : 1.0}});
  }
}

}  // namespace

Expected<Json> make_power_section(const std::vector<std::pair<Json, std::string>>& measurements,
                                  const std::string& source) {
  return catch_errors([&] {
    const Json* sweep = nullptr;
    std::string sweep_file;
    for (const auto& [doc, file] : measurements) {
      if (doc.is_object() && doc.value("schema", "") == "scalescope.power-sweep/1") {
        if (sweep) throw ErrorException(input_error(file, "$.schema", "expected one power sweep, got a second (first: " +
                                                                          sweep_file + ")"));
        sweep = &doc;
        sweep_file = file;
      }
    }
    if (!sweep) {
      throw ErrorException(input_error(measurements.empty() ? std::string() : measurements.front().second, "$.schema",
                                       "expected a power sweep (\"scalescope.power-sweep/1\", written by "
                                       "validation/clocks/power_sweep.py) among the files"));
    }
    const JsonCursor root(*sweep, sweep_file);
    const double idle = root.at("idle").get_number_in("power_W", 1.0, 1e4);
    // The GPU's L2 in bytes (power_sweep.py records it; sweeps before it did not: 50 MiB, the H100's and H200's).
    const bool has_l2 = root.has("l2_bytes") && !root.at("l2_bytes").json().is_null();
    const double l2_bytes = has_l2 ? root.get_number_in("l2_bytes", 1.0, 1e12) : 50.0 * 1024 * 1024;
    std::map<std::string, std::vector<Point>> points, unfitted;
    std::vector<double> capped;
    for (const JsonCursor& k : root.at("kernels").items()) {
      if (k.has("error") && !k.at("error").json().is_null()) continue;
      const double rel = k.get_number_in("relative", 1e-3, 1e3);
      if (rel < 0.05 || rel > 1.2) continue;  // bursts and sustained runs disagree: a burst artefact, not a rate
      const double power = k.get_number_in("power_W", 1.0, 1e4);
      const bool cap = k.get_number_in("cap_share", 0.0, 1.0) >= 0.5;
      if (cap) capped.push_back(power);
      const std::string cls = class_of(k);
      // The memory class is fitted on every memory-bound kernel that moves at least twice the L2 cache: on H200
      // streaming adds, norms, activations, softmax and AdamW all draw 580-750 W whatever their bytes per second
      // (session 34), while kernels that stay in L2 draw less; those are listed against the class, not fitted.
      const std::string name = k.get_string("name");
      const double work = cls == "memory" ? k.get_positive("bytes") : k.get_positive("flops");
      const bool in_l2 = cls == "memory" && work < 2.0 * l2_bytes;
      // Capped: the kernel ran at rel of its burst rate and drew (power - idle); at its burst rate it would draw that
      // / rel (energy per kernel does not change with the clock). Not capped: as it ran.
      const double seconds = cap ? k.get_positive("burst_s") : k.get_positive("sustained_s");
      const Point p{name, work / seconds, std::max(0.0, power - idle) / (cap ? rel : 1.0)};
      (in_l2 ? unfitted[cls] : points[cls]).push_back(p);
    }
    if (capped.empty()) {
      root.at("kernels").fail("expected a kernel at the power cap (reason 0x4 in half its samples or more): none reached "
                              "it, so this GPU does not clock down under these kernels and there is nothing to model");
    }
    const double capped_w = median(capped);
    if (!(capped_w > idle)) root.at("kernels").fail("expected the capped draw above the idle draw");
    for (const char* required : {"gemm_bf16", "memory"}) {
      if (!points.count(required)) root.at("kernels").fail(std::string("expected kernels of class ") + required);
    }
    std::map<std::string, PowerClass> classes;
    classes["gemm_bf16"] = fit(points["gemm_bf16"], std::nullopt);
    for (const auto& [name, pts] : points) {
      if (name == "gemm_bf16") continue;
      classes[name] = fit(pts, name == "memory" ? std::optional<double>(0.0) : classes["gemm_bf16"].watts);
    }
    Json section = Json::object();
    const std::string gpu = root.get_string("gpu", "");
    section["source"] = source.empty() ? "power_sweep.py on one " + (gpu.empty() ? std::string("GPU") : gpu) + " (" +
                                             std::to_string(root.at("kernels").size()) +
                                             " kernels, each alone back to back; torch " + root.get_string("torch", "?") + ")"
                                       : source;
    Json files = Json::array();
    for (const auto& m : measurements) files.push_back(m.second);
    section["imported_from"] = files;
    section["gpu"] = gpu;
    section["idle_w"] = idle;
    section["capped_w"] = capped_w;
    Json cls = Json::object(), kernels = Json::array();
    auto list = [&](const std::string& name, const std::vector<Point>& pts, bool fitted) {
      for (const Point& p : pts) {
        kernels.push_back({{"name", p.name}, {"class", name}, {"fitted", fitted}, {"rate", p.rate},
                           {"measured_w", idle + p.watts},
                           {"modelled_w", idle + classes[name].watts + classes[name].joules_per_unit * p.rate}});
      }
    };
    for (const auto& [name, pts] : points) {
      cls[name] = class_json(classes[name], pts, name == "memory");
      list(name, pts, true);
    }
    for (const auto& [name, pts] : unfitted) list(name, pts, false);
    section["classes"] = cls;
    section["kernels"] = kernels;
    Json checks = Json::array();
    for (const auto& [doc, file] : measurements) {
      if (&doc == sweep) continue;
      const JsonCursor mix(doc, file);
      mix.expect_object();
      add_checks(checks, mix, classes, idle, capped_w);
    }
    section["checks"] = checks;
    return section;
  });
}

}  // namespace scalescope::models
