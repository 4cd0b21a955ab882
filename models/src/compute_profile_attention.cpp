// Import of measured flash-attention and Mamba-2 kernel timings into a calibration profile's `attention` and `mamba`
// sections.
#include "scalescope/models/compute_profile.hpp"

namespace scalescope::models {

Expected<Json> make_attention_section(const Json& measurement, const std::string& file, const std::string& source) {
  return catch_errors([&] {
    const JsonCursor root(measurement, file);
    root.expect_object();
    root.expect_keys({"schema", "gpu", "torch", "cuda", "measured_utc", "method", "rows"});
    const std::string schema = root.get_string("schema");
    if (schema != "scalescope.attention-measurement/1") {
      root.at("schema").fail("expected \"scalescope.attention-measurement/1\", got \"" + schema + "\"");
    }
    Json section = Json::object();
    const std::string gpu = root.get_string("gpu", ""), method = root.get_string("method", "");
    const std::string when = root.get_string("measured_utc", "");
    section["source"] = source.empty() ? "measured on one " + (gpu.empty() ? std::string("GPU") : gpu) +
                                             (when.empty() ? "" : " at " + when) + ": " + method
                                       : source;
    for (const char* key : {"gpu", "torch", "cuda", "measured_utc", "method"}) {
      if (auto c = root.find(key)) section[key] = c->as_string();
    }
    section["imported_from"] = file;
    Json rows = Json::array();
    for (const JsonCursor& r : root.at("rows").items()) {
      r.expect_keys({"model", "batch", "heads", "kv_heads", "head_dim", "seq", "causal", "dtype", "backend", "fwd_s",
                     "bwd_s", "fwd_bwd_s", "fwd_TFLOPS", "bwd_TFLOPS", "dropout"});
      Json row = Json::object();
      if (auto m = r.find("model")) row["label"] = m->as_string();
      for (const char* key : {"batch", "heads", "kv_heads", "head_dim", "seq"}) row[key] = r.get_positive_int(key);
      row["causal"] = r.at("causal").as_bool();
      row["dtype"] = r.at("dtype").as_string();
      if (auto b = r.find("backend")) row["backend"] = b->as_enum({"flash", "cudnn", "varlen"});  // absent: flash
      if (auto d = r.find("dropout")) {  // SDPA's dropout_p: the kernel's dropout factor (compute_model.hpp)
        const double p = d->as_dropout_probability();
        if (p > 0.0) row["dropout"] = p;
      }
      row["fwd_s"] = r.get_positive("fwd_s");
      row["bwd_s"] = r.get_positive("bwd_s");
      rows.push_back(std::move(row));
    }
    if (rows.empty()) root.at("rows").fail("expected at least one row");
    section["rows"] = std::move(rows);
    return section;
  });
}

Expected<Json> with_profile_section(const Json& profile, const std::string& key, const Json& section,
                                    const std::string& profile_file) {
  if (!profile.is_object()) return input_error(profile_file, "$", "expected a calibration profile object");
  Json out = profile;
  out[key] = section;
  auto check = compute_profile_from_json(out, profile_file);
  if (!check) return check.error();
  return out;
}

Expected<Json> with_attention_section(const Json& profile, const Json& section, const std::string& profile_file) {
  return with_profile_section(profile, "attention", section, profile_file);
}

Expected<Json> make_mamba_section(const Json& measurement, const std::string& file, const std::string& source) {
  return catch_errors([&] {
    const JsonCursor root(measurement, file);
    root.expect_object();
    root.expect_keys({"schema", "meta", "rows"});
    const JsonCursor meta = root.at("meta");
    const std::string gpu = meta.get_string("gpu", ""), timing = meta.get_string("timing", "");
    Json section = Json::object();
    section["source"] = source.empty() ? "measured on one " + (gpu.empty() ? std::string("GPU") : gpu) + " (mamba_ssm " +
                                             meta.get_string("mamba_ssm", "?") + ", triton " +
                                             meta.get_string("triton", "?") + ", torch " + meta.get_string("torch", "?") +
                                             "): " + timing
                                       : source;
    section["imported_from"] = file;
    Json rows = Json::array();
    for (const JsonCursor& r : root.at("rows").items()) {
      Json row = Json::object();
      if (auto n = r.find("name")) row["label"] = n->as_string();
      for (const char* key : {"batch", "seq", "heads", "head_dim", "groups", "state", "chunk"})
        row[key] = r.get_positive_int(key);
      if (row["heads"].get<std::int64_t>() % row["groups"].get<std::int64_t>() != 0)
        r.at("groups").fail("expected a divisor of heads=" + std::to_string(row["heads"].get<std::int64_t>()));
      bool timed = false;
      for (int g = 0; g < kNumMambaGroups; ++g) {
        const std::string key = std::string(to_string(static_cast<MambaGroup>(g))) + "_s";
        if (r.has(key)) row[key] = r.get_positive(key), timed = true;
      }
      if (!timed) r.fail("expected at least one of ssd_forward_s, ssd_backward_s, gated_norm_forward_s, gated_norm_backward_s");
      rows.push_back(std::move(row));
    }
    if (rows.empty()) root.at("rows").fail("expected at least one row");
    section["rows"] = std::move(rows);
    return section;
  });
}

}  // namespace scalescope::models
