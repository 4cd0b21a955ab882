// Native model JSON: reading with path-aware errors, writing, checking, and the catalog lookup.
#include "scalescope/models/model_spec.hpp"

#include <algorithm>
#include <system_error>

#include "scalescope/models/hf_import.hpp"

namespace scalescope::models {

namespace fs = std::filesystem;

std::string_view to_string(FfnKind k) { return k == FfnKind::gelu ? "gelu" : "swiglu"; }
std::string_view to_string(NormKind k) {
  return k == NormKind::layernorm ? "layernorm" : "rmsnorm";
}
std::string_view to_string(Positional p) {
  switch (p) {
    case Positional::rope: return "rope";
    case Positional::learned: return "learned";
    case Positional::alibi: return "alibi";
    case Positional::none: return "none";
  }
  return "rope";
}

namespace {

[[noreturn]] void fail(const std::string& file, const std::string& key,
                       const std::string& message) {
  throw ErrorException(input_error(file, key.empty() ? "" : "$." + key, message));
}

int to_int(const JsonCursor& c) {
  const std::int64_t v = c.as_positive_int();
  if (v > 1'000'000'000) c.fail("expected a positive integer below 1e9, got " + std::to_string(v));
  return static_cast<int>(v);
}

void check_or_throw(const ModelSpec& s, const std::string& file) {
  // Plausible ranges (docs/plausible-ranges.md): far above any published model, low enough that the
  // exact counts stay inside 64-bit integers and the results inside what a double holds exactly.
  const auto in_range = [&](const char* key, std::int64_t v, std::int64_t max) {
    if (v <= 0 || v > max)
      fail(file, key, "expected a positive integer at most " + std::to_string(max) + ", got " + std::to_string(v));
  };
  in_range("layers", s.layers, kMaxModelLayers);
  in_range("hidden", s.hidden, kMaxModelWidth);
  in_range("heads", s.heads, kMaxModelHeads);
  in_range("kv_heads", s.kv_heads, kMaxModelHeads);
  in_range("ffn_hidden", s.ffn_hidden, kMaxModelWidth * 4);
  in_range("vocab", s.vocab, kMaxModelVocab);
  in_range("seq_len", s.seq_len, kMaxModelSeqLen);
  if (s.head_dim > kMaxModelWidth)
    fail(file, "head_dim", "expected a positive integer at most " + std::to_string(kMaxModelWidth) + ", got " +
                               std::to_string(s.head_dim));
  if (s.head_dim < 0)
    fail(file, "head_dim", "expected a positive integer, got " + std::to_string(s.head_dim));
  if (s.kv_heads > s.heads || s.heads % s.kv_heads != 0) {
    fail(file, "kv_heads",
         "expected a divisor of heads=" + std::to_string(s.heads) + ", got " +
             std::to_string(s.kv_heads));
  }
  if (s.head_dim == 0 && s.hidden % s.heads != 0) {
    fail(file, "heads",
         "hidden=" + std::to_string(s.hidden) + " is not divisible by heads=" +
             std::to_string(s.heads) + " (give head_dim explicitly)");
  }
}

}  // namespace

Expected<ModelSpec> check_model(ModelSpec spec, const std::string& file) {
  return catch_errors([&] {
    check_or_throw(spec, file);
    return spec;
  });
}

Expected<ModelSpec> model_from_json(const Json& json, const std::string& file) {
  return catch_errors([&] {
    const JsonCursor c(json, file);
    c.expect_keys({"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "ffn", "norm",
                   "bias", "vocab", "tied_embeddings", "seq_len", "head_dim", "positional",
                   "qkv_bias", "source"});
    ModelSpec s;
    s.name = c.get_string("name");
    if (s.name.empty()) c.at("name").fail("expected a non-empty string");
    s.layers = to_int(c.at("layers"));
    s.hidden = to_int(c.at("hidden"));
    s.heads = to_int(c.at("heads"));
    s.kv_heads = to_int(c.at("kv_heads"));
    s.ffn_hidden = to_int(c.at("ffn_hidden"));
    s.ffn = c.at("ffn").as_enum({"gelu", "swiglu"}) == "gelu" ? FfnKind::gelu : FfnKind::swiglu;
    s.norm = c.at("norm").as_enum({"layernorm", "rmsnorm"}) == "layernorm" ? NormKind::layernorm
                                                                           : NormKind::rmsnorm;
    s.bias = c.at("bias").as_bool();
    s.vocab = c.at("vocab").as_positive_int();
    s.tied_embeddings = c.at("tied_embeddings").as_bool();
    s.seq_len = to_int(c.at("seq_len"));
    if (auto hd = c.find("head_dim")) s.head_dim = to_int(*hd);
    if (auto p = c.find("positional")) {
      const std::string v = p->as_enum({"rope", "learned", "alibi", "none"});
      s.positional = v == "rope" ? Positional::rope : v == "learned" ? Positional::learned
                   : v == "alibi" ? Positional::alibi : Positional::none;
    }
    if (auto qb = c.find("qkv_bias")) s.qkv_bias = qb->as_bool();
    s.source = c.get_string("source", "");
    check_or_throw(s, file);
    return s;
  });
}

Expected<ModelSpec> load_model(const fs::path& file) {
  auto json = read_json_file(file);
  if (!json) return json.error();
  return model_from_json(*json, file.string());
}

Json to_json(const ModelSpec& s) {
  Json j = {{"name", s.name},
            {"layers", s.layers},
            {"hidden", s.hidden},
            {"heads", s.heads},
            {"kv_heads", s.kv_heads},
            {"ffn_hidden", s.ffn_hidden},
            {"ffn", std::string(to_string(s.ffn))},
            {"norm", std::string(to_string(s.norm))},
            {"bias", s.bias},
            {"vocab", s.vocab},
            {"tied_embeddings", s.tied_embeddings},
            {"seq_len", s.seq_len},
            {"positional", std::string(to_string(s.positional))}};
  if (s.head_dim > 0 && !(s.hidden % s.heads == 0 && s.head_dim == s.hidden / s.heads))
    j["head_dim"] = s.head_dim;
  if (s.qkv_bias && *s.qkv_bias != s.bias) j["qkv_bias"] = *s.qkv_bias;
  if (!s.source.empty()) j["source"] = s.source;
  return j;
}

fs::path default_catalog_dir() { return fs::path(SCALESCOPE_SOURCE_DIR) / "models" / "catalog"; }

std::vector<std::string> catalog_names(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".json")
      names.push_back(it->path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Expected<ModelSpec> load_model_by_name_or_path(std::string_view name_or_path,
                                               const fs::path& catalog) {
  const fs::path as_path(name_or_path);
  std::error_code ec;
  const bool looks_like_path = name_or_path.find('/') != std::string_view::npos ||
                               as_path.extension() == ".json" || fs::exists(as_path, ec);
  if (looks_like_path) {
    auto json = read_json_file(as_path);
    if (!json) return json.error();
    if (json->is_object() && json->contains("model_type"))
      return import_hf_config_json(*json, as_path.string());
    return model_from_json(*json, as_path.string());
  }
  const fs::path entry = catalog / (std::string(name_or_path) + ".json");
  if (fs::exists(entry, ec)) return load_model(entry);
  std::string list;
  for (const auto& n : catalog_names(catalog)) list += (list.empty() ? "" : ", ") + n;
  return input_error("", "",
                     "unknown model '" + std::string(name_or_path) +
                         "': not a file and not in the catalog (" + list + ")");
}

}  // namespace scalescope::models
