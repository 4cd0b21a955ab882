// Minimal reader of a calibration profile's GEMM rows, bandwidths and launch overhead.
#include "scalescope/models/compute_profile.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <system_error>
#include <vector>

#include "scalescope/sim/data_files.hpp"
#include "scalescope/sim/statistics.hpp"

namespace scalescope::models {

namespace fs = std::filesystem;

namespace {
/// "bf16 GEMM 8192x4096x2048" -> 8192, 4096, 2048 (scalescope-calibrate's interference row names).
bool parse_gemm_sizes(const std::string& name, std::int64_t& m, std::int64_t& n, std::int64_t& k) {
  const auto at = name.find("GEMM ");
  if (at == std::string::npos) return false;
  long long a = 0, b = 0, c = 0;
  char tail = 0;
  if (std::sscanf(name.c_str() + at + 5, "%lldx%lldx%lld%c", &a, &b, &c, &tail) != 3) return false;
  if (a <= 0 || b <= 0 || c <= 0) return false;
  m = a;
  n = b;
  k = c;
  return true;
}

/// The profile `power` section (make_power_section writes it).
PowerModel power_model_from_json(const JsonCursor& section) {
  section.expect_keys({"source", "imported_from", "gpu", "idle_w", "capped_w", "classes", "kernels", "checks"});
  PowerModel pm;
  pm.source = section.get_string("source");
  pm.idle_w = section.get_number_in("idle_w", 1.0, 1e4);
  pm.capped_w = section.get_number_in("capped_w", 1.0, 1e4);
  if (!(pm.capped_w > pm.idle_w)) section.at("capped_w").fail("expected more than idle_w=" + std::to_string(pm.idle_w));
  const JsonCursor classes = section.at("classes");
  classes.expect_keys({"gemm_bf16", "gemm_fp8", "attention_flash", "attention_cudnn", "memory"});
  auto read = [&](const char* name, PowerClass& into, bool required) {
    if (!required && !classes.has(name)) return;
    const JsonCursor c = classes.at(name);
    c.expect_keys({"watts", "joules_per_unit", "unit", "kernels"});
    into.watts = c.get_number_in("watts", 0.0, 1e4);
    into.joules_per_unit = c.get_number_in("joules_per_unit", 0.0, 1e-6);
    const std::string unit = c.at("unit").as_enum({"FLOP", "byte"});
    if (unit != (std::string_view(name) == "memory" ? "byte" : "FLOP"))
      c.at("unit").fail(std::string("expected ") + (std::string_view(name) == "memory" ? "\"byte\"" : "\"FLOP\""));
    into.kernels = static_cast<int>(c.at("kernels").items().size());
    if (into.kernels == 0) c.at("kernels").fail("expected the names of the kernels the class was fitted on");
    if (!(into.watts > 0.0 || into.joules_per_unit > 0.0)) c.fail("expected a draw above idle (watts or joules_per_unit > 0)");
  };
  read("gemm_bf16", pm.gemm_bf16, true);
  read("gemm_fp8", pm.gemm_fp8, false);
  read("attention_flash", pm.attention_flash, false);
  read("attention_cudnn", pm.attention_cudnn, false);
  read("memory", pm.memory, true);
  return pm;
}

}  // namespace

Expected<ComputeProfile> compute_profile_from_json(const Json& doc, const std::string& source) {
  return catch_errors([&] {
    const JsonCursor root(doc, source);
    root.expect_object();
    const std::string schema = root.get_string("schema");
    if (schema != "scalescope.calibration/1") {
      root.at("schema").fail("expected \"scalescope.calibration/1\", got \"" + schema + "\"");
    }
    ComputeProfile p;
    p.source = source;
    if (auto gpus = root.find("gpus"); gpus && gpus->size() > 0) {
      if (auto name = gpus->at(std::size_t{0}).find("name")) p.gpu = name->as_string();
    }
    if (auto gemm = root.find("gemm")) {
      for (const JsonCursor& row : gemm->items()) {
        row.expect_keys({"dtype", "transa", "transb", "m", "n", "k", "time_us", "time_us_min", "time_us_p90", "tflops",
                         "reps", "label", "error"});
        if (row.has("error")) continue;
        auto t = row.find("time_us");
        if (!t || t->json().is_null()) continue;
        GemmSample g;
        g.dtype = row.get_string("dtype");
        g.m = row.at("m").as_int_in(1, 1 << 20);  // 2*m*n*k inside 64 bits
        g.n = row.at("n").as_int_in(1, 1 << 20);
        g.k = row.at("k").as_int_in(1, 1 << 20);
        g.time = microseconds(t->as_number_in(1e-3, 1e9));
        // The rate a row implies stays below 1e6 TFLOP/s (1000x any GPU; docs/plausible-ranges.md).
        if (2.0 * static_cast<double>(g.m) * g.n * g.k / g.time.value > 1e18)
          t->fail("implies more than 1e6 TFLOP/s for " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" +
                  std::to_string(g.k));
        p.gemms.push_back(std::move(g));
      }
    }
    if (auto mem = root.find("memory")) {
      auto number = [&](std::string_view key) -> std::optional<double> {
        auto c = mem->find(key);
        if (!c || c->json().is_null()) return std::nullopt;
        return c->as_number_in(1e-3, 1e6);  // GB/s and us: plausible ranges (docs/plausible-ranges.md)
      };
      if (auto bw = number("d2d_copy_GBps")) p.hbm_bandwidth = GBps(*bw);
      if (auto l = number("launch_overhead_us")) p.launch_overhead = microseconds(*l);
      if (auto l = number("launch_sync_us")) p.launch_sync = microseconds(*l);
      if (auto rows = mem->find("elementwise")) {
        double best_bytes = 0;
        for (const JsonCursor& row : rows->items()) {
          auto gb = row.find("GBps");
          if (!gb || gb->json().is_null()) continue;
          const double bytes = row.at("bytes").as_number_in(1.0, 1125899906842624.0);
          const double rate = gb->as_number_in(1e-3, 1e6);
          p.elementwise_curve.emplace_back(Bytes(bytes), GBps(rate));
          if (bytes > best_bytes) {
            best_bytes = bytes;
            p.elementwise_bandwidth = GBps(rate);
          }
        }
        std::sort(p.elementwise_curve.begin(), p.elementwise_curve.end(),
                  [](const auto& a, const auto& b) { return a.first.value < b.first.value; });
      }
    }
    if (auto att = root.find("attention")) {
      att->expect_keys({"source", "method", "gpu", "torch", "cuda", "measured_utc", "imported_from", "rows"});
      p.attention_source = att->get_string("source");
      for (const JsonCursor& row : att->at("rows").items()) {
        row.expect_keys({"label", "batch", "heads", "kv_heads", "head_dim", "seq", "causal", "dtype", "backend", "dropout",
                         "fwd_s", "bwd_s"});
        AttentionSample a;
        a.shape.batch = row.at("batch").as_int_in(1, 1 << 24);
        a.shape.heads = row.at("heads").as_int_in(1, 1 << 24);
        a.shape.kv_heads = row.at("kv_heads").as_int_in(1, 1 << 24);
        a.shape.head_dim = row.at("head_dim").as_int_in(1, 1 << 24);
        a.shape.seq = row.at("seq").as_int_in(1, 1 << 24);
        a.shape.causal = row.at("causal").as_bool();
        if (auto b = row.find("backend"))
          a.shape.backend = attention_backend_named(b->as_enum({"flash", "cudnn", "varlen"}));
        if (auto d = row.find("dropout")) a.shape.dropout = d->as_dropout_probability();
        a.dtype = row.at("dtype").as_enum({"bf16", "fp16", "fp8", "fp8_e4m3", "fp32"});
        a.forward = Seconds(row.get_number_in("fwd_s", 1e-9, 1e3));
        a.backward = Seconds(row.get_number_in("bwd_s", 1e-9, 1e3));
        if (a.shape.heads % a.shape.kv_heads != 0) row.at("kv_heads").fail("expected a divisor of heads");
        p.attention.push_back(std::move(a));
      }
    }
    if (auto mb = root.find("mamba")) {
      mb->expect_keys({"source", "imported_from", "rows"});
      p.mamba_source = mb->get_string("source");
      for (const JsonCursor& row : mb->at("rows").items()) {
        row.expect_keys({"label", "batch", "seq", "heads", "head_dim", "groups", "state", "chunk", "ssd_forward_s",
                         "ssd_backward_s", "gated_norm_forward_s", "gated_norm_backward_s"});
        MambaSample m;
        m.batch = row.at("batch").as_int_in(1, 1 << 24);
        m.seq = row.at("seq").as_int_in(1, 1 << 24);
        m.heads = static_cast<int>(row.at("heads").as_int_in(1, 1 << 16));
        m.head_dim = static_cast<int>(row.at("head_dim").as_int_in(1, 1 << 16));
        m.groups = static_cast<int>(row.at("groups").as_int_in(1, m.heads));
        m.state = static_cast<int>(row.at("state").as_int_in(1, 1 << 16));
        m.chunk = static_cast<int>(row.at("chunk").as_int_in(1, 1 << 16));
        if (m.heads % m.groups != 0) row.at("groups").fail("expected a divisor of heads=" + std::to_string(m.heads));
        for (int g = 0; g < kNumMambaGroups; ++g) {
          const std::string key = std::string(to_string(static_cast<MambaGroup>(g))) + "_s";
          if (row.has(key)) m.seconds[static_cast<std::size_t>(g)] = row.get_number_in(key, 1e-9, 1e3);
        }
        p.mamba.push_back(m);
      }
    }
    if (auto pw = root.find("power")) p.power = power_model_from_json(*pw);
    if (auto interf = root.find("interference")) {
      interf->expect_keys({"method", "gpus", "rows", "skipped", "imported_from"});
      if (auto rows = interf->find("rows")) {
        for (const JsonCursor& row : rows->items()) {
          row.expect_keys({"compute", "class", "op", "bytes", "compute_alone_us", "compute_beside_us",
                           "compute_slowdown", "compute_covered", "coll_alone_us", "coll_beside_us", "coll_slowdown",
                           "coll_covered", "compute_reps", "coll_reps", "error"});
          if (row.has("error")) continue;
          InterferenceSample x;
          x.compute = row.get_string("compute");
          x.kernel_class = row.at("class").as_enum({"gemm", "memory"});
          x.op = row.get_string("op");
          x.compute_alone = Seconds(row.get_number_in("compute_alone_us", 1e-3, 1e9) * 1e-6);
          if (x.kernel_class == "gemm" && !parse_gemm_sizes(x.compute, x.m, x.n, x.k)) {
            row.at("compute").fail("expected a GEMM named 'DTYPE GEMM MxNxK' (e.g. \"bf16 GEMM 8192x4096x2048\")");
          }
          // A slowdown counts only when the other side ran for the whole timed window.
          if (row.at("compute_covered").as_bool()) x.compute_slowdown = row.get_number_in("compute_slowdown", 1e-3, 1e3);
          if (row.at("coll_covered").as_bool()) x.coll_slowdown = row.get_number_in("coll_slowdown", 1e-3, 1e3);
          p.interference.push_back(std::move(x));
        }
      }
    }
    return p;
  });
}

Expected<ComputeProfile> load_compute_profile(const fs::path& file) {
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  return compute_profile_from_json(*doc, file.string());
}

Expected<ComputeProfile> load_compute_profile_by_name_or_path(std::string_view name_or_path) {
  const std::string s(name_or_path);
  if (looks_like_path(s)) return load_compute_profile(s);
  if (const auto f = find_data_file("calibrate/profiles", s)) {
    auto doc = read_json_file(f->path);
    if (!doc) return doc.error();
    return compute_profile_from_json(*doc, f->label);
  }
  const auto dirs = data_dirs("calibrate/profiles");
  return input_error("--calibration", "", "no calibration profile named '" + s + "' (looked for " + s +
                                              ".json in " + dirs.back().string() + ")");
}

}  // namespace scalescope::models
