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

std::string_view to_string(MambaGroup g) {
  switch (g) {
    case MambaGroup::ssd_forward: return "ssd_forward";
    case MambaGroup::ssd_backward: return "ssd_backward";
    case MambaGroup::gated_norm_forward: return "gated_norm_forward";
    case MambaGroup::gated_norm_backward: return "gated_norm_backward";
  }
  return "ssd_forward";
}

char pattern_char(LayerKind k) {
  switch (k) {
    case LayerKind::transformer: return 'T';
    case LayerKind::mamba: return 'M';
    case LayerKind::attention: return '*';
    case LayerKind::mlp: return '-';
    case LayerKind::moe: return 'E';
  }
  return 'T';
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

/// MoE and MLA keys: present together, in range, and leaving at least one MoE layer.
void check_moe_and_mla(const ModelSpec& s, const std::string& file) {
  const MoeSpec& e = s.moe;
  const auto at_most = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t max) {
    if (v < lo || v > max)
      fail(file, key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(max) + "], got " +
                          std::to_string(v));
  };
  if (e.experts > 0 || e.top_k > 0 || e.ffn_hidden > 0) {
    if (e.experts <= 0) fail(file, "experts", "expected a positive integer (MoE keys are given), got " + std::to_string(e.experts));
    at_most("experts", e.experts, 1, kMaxModelExperts);
    at_most("top_k", e.top_k, 1, e.experts);
    at_most("moe_ffn_hidden", e.ffn_hidden, 1, kMaxModelWidth * 4);
    at_most("shared_experts", e.shared_experts, 0, 1024);
    at_most("shared_ffn_hidden", e.shared_ffn_hidden, 0, kMaxModelWidth * 4);
    at_most("first_dense_layers", e.first_dense_layers, 0, s.layers - 1);
    at_most("moe_layer_freq", e.layer_freq, 1, s.layers);
    at_most("moe_layer_offset", e.layer_offset, 0, e.layer_freq - 1);
    if (!(e.capacity_factor >= 0.0 && e.capacity_factor <= 1000.0))
      fail(file, "capacity_factor", "expected 0 (dropless) or a factor in (0, 1000], got " + std::to_string(e.capacity_factor));
    if (e.router_groups > 0 || e.router_group_topk > 0) {
      at_most("router_groups", e.router_groups, 1, e.experts);
      if (e.experts % e.router_groups != 0)
        fail(file, "router_groups", "expected a divisor of experts=" + std::to_string(e.experts) + ", got " +
                                        std::to_string(e.router_groups));
      at_most("router_group_topk", e.router_group_topk, 1, e.router_groups);
    }
    if (s.moe_layers() == 0)
      fail(file, "first_dense_layers", "no layer is an MoE layer (first_dense_layers=" +
                                           std::to_string(e.first_dense_layers) + ", moe_layer_freq=" +
                                           std::to_string(e.layer_freq) + ", moe_layer_offset=" +
                                           std::to_string(e.layer_offset) + ")");
  } else if (e.shared_experts > 0 || e.shared_ffn_hidden > 0 || e.first_dense_layers > 0 || e.layer_freq != 1 ||
             e.layer_offset != 0 || e.capacity_factor > 0.0 || e.shared_expert_gate || e.router_fp32 || e.router_bias ||
             e.router_groups > 0 || e.router_group_topk > 0) {
    fail(file, "experts", "MoE keys need experts, top_k and moe_ffn_hidden");
  }
  const MlaSpec& a = s.mla;
  if (a.kv_lora_rank > 0 || a.q_lora_rank > 0 || a.nope_head_dim > 0 || a.rope_head_dim > 0 || a.v_head_dim > 0) {
    at_most("kv_lora_rank", a.kv_lora_rank, 1, kMaxModelWidth);
    at_most("q_lora_rank", a.q_lora_rank, 0, kMaxModelWidth);
    at_most("qk_nope_head_dim", a.nope_head_dim, 1, 65536);
    at_most("qk_rope_head_dim", a.rope_head_dim, 1, 65536);
    at_most("v_head_dim", a.v_head_dim, 1, 65536);
    if (s.kv_heads != s.heads)
      fail(file, "kv_heads", "multi-head latent attention has one key/value head per query head: expected kv_heads=" +
                                 std::to_string(s.heads) + ", got " + std::to_string(s.kv_heads));
    if (s.head_dim != a.qk_head_dim())
      fail(file, "head_dim", "with multi-head latent attention head_dim is qk_nope_head_dim + qk_rope_head_dim = " +
                                 std::to_string(a.qk_head_dim()) + ", got " + std::to_string(s.head_dim));
  }
}

/// Hybrid models: a pattern of one known character per layer, the Mamba keys with its 'M' layers, experts exactly
/// with its 'E' layers (the transformer MoE placement keys do not apply), no sliding window.
void check_hybrid(const ModelSpec& s, const std::string& file) {
  const MambaSpec& mb = s.mamba;
  const bool mamba_keys = mb.heads > 0 || mb.head_dim > 0 || mb.state > 0;
  if (!s.is_hybrid()) {
    if (mamba_keys) fail(file, "hybrid_pattern", "Mamba keys (mamba_heads, mamba_head_dim, mamba_state) need a hybrid_pattern");
    return;
  }
  if (static_cast<std::int64_t>(s.hybrid_pattern.size()) != s.layers)
    fail(file, "hybrid_pattern", "expected one character per layer (layers=" + std::to_string(s.layers) + "), got " +
                                     std::to_string(s.hybrid_pattern.size()));
  for (std::size_t i = 0; i < s.hybrid_pattern.size(); ++i) {
    const char ch = s.hybrid_pattern[i];
    if (ch != 'M' && ch != '*' && ch != '-' && ch != 'E')
      fail(file, "hybrid_pattern", std::string("expected only M (Mamba-2), * (attention), - (MLP) and E (MoE); got '") +
                                       ch + "' at layer " + std::to_string(i));
  }
  const bool has_m = s.hybrid_pattern.find('M') != std::string::npos;
  const bool has_e = s.hybrid_pattern.find('E') != std::string::npos;
  if (has_m != mamba_keys || (has_m && (mb.heads <= 0 || mb.head_dim <= 0 || mb.state <= 0)))
    fail(file, has_m ? "mamba_heads" : "hybrid_pattern",
         has_m ? "'M' layers need mamba_heads, mamba_head_dim and mamba_state"
               : "Mamba keys are given but hybrid_pattern has no 'M' layer");
  if (has_m) {
    const auto in = [&](const char* key, std::int64_t v, std::int64_t lo, std::int64_t hi) {
      if (v < lo || v > hi)
        fail(file, key, "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                            std::to_string(v));
    };
    in("mamba_heads", mb.heads, 1, kMaxModelHeads);
    in("mamba_head_dim", mb.head_dim, 1, 65536);
    in("mamba_state", mb.state, 1, 65536);
    in("mamba_groups", mb.groups, 1, mb.heads);
    if (mb.heads % mb.groups != 0)
      fail(file, "mamba_groups", "expected a divisor of mamba_heads=" + std::to_string(mb.heads) + ", got " +
                                     std::to_string(mb.groups));
    in("mamba_conv_kernel", mb.conv_kernel, 1, 1024);
    in("mamba_chunk", mb.chunk, 1, 65536);
    if (mb.inner() > kMaxModelWidth * 4)
      fail(file, "mamba_heads", "mamba_heads x mamba_head_dim = " + std::to_string(mb.inner()) + " is above " +
                                    std::to_string(kMaxModelWidth * 4));
  }
  if (has_e != s.moe.enabled())
    fail(file, has_e ? "experts" : "hybrid_pattern",
         has_e ? "'E' layers need experts, top_k and moe_ffn_hidden" : "experts are given but hybrid_pattern has no 'E' layer");
  const MoeSpec& e = s.moe;
  if (e.first_dense_layers > 0 || e.layer_freq != 1 || e.layer_offset != 0)
    fail(file, "first_dense_layers", "a hybrid model places its MoE layers by hybrid_pattern ('E'): first_dense_layers, "
                                     "moe_layer_freq and moe_layer_offset do not apply");
  if (s.sliding_window > 0)
    fail(file, "sliding_window", "sliding-window attention in a hybrid model is not modelled");
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
  check_hybrid(s, file);
  check_moe_and_mla(s, file);
  if (s.sliding_window < 0 || s.sliding_window > kMaxModelSeqLen)
    fail(file, "sliding_window", "expected 0 (none) or a window of 1.." + std::to_string(kMaxModelSeqLen) +
                                     " tokens, got " + std::to_string(s.sliding_window));
  if (s.global_attention_every < 0 || s.global_attention_every == 1 || s.global_attention_every > s.layers ||
      (s.global_attention_every > 0 && s.sliding_window == 0))
    fail(file, "global_attention_every",
         "expected 0 (every layer windowed) or 2.." + std::to_string(s.layers) +
             " (every n-th layer global) with a sliding_window, got " + std::to_string(s.global_attention_every));
  for (const auto& [key, p] : {std::pair<const char*, double>{"attention_dropout", s.attention_dropout},
                                {"hidden_dropout", s.hidden_dropout}}) {
    if (!(p >= 0.0 && p < 1.0))
      fail(file, key, "expected a dropout probability in [0, 1), got " + std::to_string(p));
  }
  // Every count is exact at 64 bits and in a double: an upper bound of the parameters (each layer with every block
  // the model has, in double) at most 2^53, ~4,000x the largest published model.
  const double h = s.hidden, d = s.head_dim > 0 ? s.head_dim : static_cast<double>(s.hidden) / s.heads;
  const double q = s.heads * d, k = s.kv_heads * d, e = s.moe.experts, fe = s.moe.ffn_hidden;
  const MlaSpec& a = s.mla;
  const MambaSpec& mb = s.mamba;
  // In double from the first factor: the products of a file's int fields overflow int (fuzz: q_lora_rank x heads).
  const double heads = s.heads, q_lora = a.q_lora_rank, kv_lora = a.kv_lora_rank;
  const double attention = h * (q + 2 * k) + q * h + h * q_lora +
                           q_lora * heads * (static_cast<double>(a.nope_head_dim) + a.rope_head_dim) +
                           h * (kv_lora + a.rope_head_dim) +
                           kv_lora * heads * (static_cast<double>(a.nope_head_dim) + a.v_head_dim) +
                           heads * a.v_head_dim * h;
  const double shared = s.moe.shared_ffn_hidden > 0 ? s.moe.shared_ffn_hidden
                                                    : static_cast<double>(s.moe.shared_experts) * s.moe.ffn_hidden;
  const double mlp = 3 * h * s.ffn_hidden + 3 * h * shared + e * (3 * h * fe + h + 1);
  const double mamba = static_cast<double>(h) * static_cast<double>(mb.in_proj_width()) +
                       static_cast<double>(mb.inner()) * h +
                       static_cast<double>(mb.conv_channels()) * (mb.conv_kernel + 1) + 4.0 * mb.heads + mb.inner();
  const double bound = s.layers * (attention + mlp + mamba + 4 * h + 2 * q) + 2.0 * static_cast<double>(s.vocab) * h +
                       static_cast<double>(s.seq_len) * h;
  if (!(bound <= 9007199254740992.0))
    fail(file, "layers", "the model's parameters (up to " + std::to_string(bound) + ") exceed 2^53 = 9.0e15, "
                         "beyond what the counts hold exactly (the largest published model has ~2e12)");
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
    c.expect_keys({"name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "ffn", "norm", "bias", "vocab",
                   "tied_embeddings", "seq_len", "head_dim", "positional", "qkv_bias", "qk_norm", "qk_norm_full",
                   "composed_norm", "composed_gelu", "source", "experts",
                   "top_k", "moe_ffn_hidden", "shared_experts", "shared_ffn_hidden", "shared_expert_gate",
                   "first_dense_layers", "moe_layer_freq", "moe_layer_offset", "capacity_factor", "router_dtype",
                   "router_bias", "router_groups", "router_group_topk", "q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim",
                   "sliding_window", "global_attention_every", "attention_dropout", "hidden_dropout",
                   "hybrid_pattern", "mamba_heads", "mamba_head_dim", "mamba_state", "mamba_groups",
                   "mamba_conv_kernel", "mamba_chunk"});
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
    if (auto qn = c.find("qk_norm")) s.qk_norm = qn->as_bool();
    if (auto qf = c.find("qk_norm_full")) {
      s.qk_norm_full = qf->as_bool();
      if (s.qk_norm_full && !s.qk_norm) qf->fail("qk_norm_full (one norm over the whole projection) needs qk_norm: true");
    }
    if (auto cn = c.find("composed_norm")) s.composed_norm = cn->as_bool();
    if (auto cg = c.find("composed_gelu")) {
      s.composed_gelu = cg->as_bool();
      if (s.composed_gelu && s.ffn != FfnKind::gelu)
        cg->fail("composed_gelu (a tanh GELU written out) needs ffn: \"gelu\"");
    }
    const auto opt = [&](std::string_view key, std::int64_t lo, int dflt) {
      auto v = c.find(key);
      return v ? static_cast<int>(v->as_int_in(lo, 1'000'000'000)) : dflt;
    };
    MoeSpec& e = s.moe;
    e.experts = opt("experts", 1, 0);
    e.top_k = opt("top_k", 1, 0);
    e.ffn_hidden = opt("moe_ffn_hidden", 1, 0);
    e.shared_experts = opt("shared_experts", 0, 0);
    e.shared_ffn_hidden = opt("shared_ffn_hidden", 0, 0);
    if (auto g = c.find("shared_expert_gate")) e.shared_expert_gate = g->as_bool();
    e.first_dense_layers = opt("first_dense_layers", 0, 0);
    e.layer_freq = opt("moe_layer_freq", 1, 1);
    e.layer_offset = opt("moe_layer_offset", 0, 0);
    if (auto f = c.find("capacity_factor")) e.capacity_factor = f->as_nonnegative_number();
    if (auto r = c.find("router_dtype")) e.router_fp32 = r->as_enum({"fp32", "bf16"}) == "fp32";
    if (auto r = c.find("router_bias")) e.router_bias = r->as_bool();
    e.router_groups = opt("router_groups", 1, 0);
    e.router_group_topk = opt("router_group_topk", 1, 0);
    MlaSpec& a = s.mla;
    a.q_lora_rank = opt("q_lora_rank", 0, 0);
    a.kv_lora_rank = opt("kv_lora_rank", 1, 0);
    a.nope_head_dim = opt("qk_nope_head_dim", 1, 0);
    a.rope_head_dim = opt("qk_rope_head_dim", 1, 0);
    a.v_head_dim = opt("v_head_dim", 1, 0);
    if (a.enabled() && !c.has("head_dim")) s.head_dim = a.qk_head_dim();
    s.sliding_window = opt("sliding_window", 0, 0);
    s.global_attention_every = opt("global_attention_every", 0, 0);
    for (const auto& [key, p] : {std::pair<const char*, double*>{"attention_dropout", &s.attention_dropout},
                                 {"hidden_dropout", &s.hidden_dropout}}) {
      if (auto d = c.find(key)) *p = d->as_number_in(0.0, 1.0);  // 1 is refused by the check below
    }
    s.hybrid_pattern = c.get_string("hybrid_pattern", "");
    if (c.has("hybrid_pattern") && s.hybrid_pattern.empty()) c.at("hybrid_pattern").fail("expected a non-empty string of M * - E");
    MambaSpec& mb = s.mamba;
    mb.heads = opt("mamba_heads", 1, 0);
    mb.head_dim = opt("mamba_head_dim", 1, 0);
    mb.state = opt("mamba_state", 1, 0);
    mb.groups = opt("mamba_groups", 1, 1);
    mb.conv_kernel = opt("mamba_conv_kernel", 1, 4);
    mb.chunk = opt("mamba_chunk", 1, 128);
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
  if (s.qk_norm) j["qk_norm"] = true;
  if (s.qk_norm_full) j["qk_norm_full"] = true;
  if (s.composed_norm) j["composed_norm"] = true;
  if (s.composed_gelu) j["composed_gelu"] = true;
  if (const MoeSpec& e = s.moe; e.enabled()) {
    j["experts"] = e.experts;
    j["top_k"] = e.top_k;
    j["moe_ffn_hidden"] = e.ffn_hidden;
    if (e.shared_experts > 0) j["shared_experts"] = e.shared_experts;
    if (e.shared_ffn_hidden > 0) j["shared_ffn_hidden"] = e.shared_ffn_hidden;
    if (e.shared_expert_gate) j["shared_expert_gate"] = true;
    if (e.first_dense_layers > 0) j["first_dense_layers"] = e.first_dense_layers;
    if (e.layer_freq != 1) j["moe_layer_freq"] = e.layer_freq;
    if (e.layer_offset != 0) j["moe_layer_offset"] = e.layer_offset;
    if (e.capacity_factor > 0.0) j["capacity_factor"] = e.capacity_factor;
    j["router_dtype"] = e.router_fp32 ? "fp32" : "bf16";
    if (e.router_bias) j["router_bias"] = true;
    if (e.router_groups > 0) j["router_groups"] = e.router_groups;
    if (e.router_group_topk > 0) j["router_group_topk"] = e.router_group_topk;
  }
  if (const MlaSpec& a = s.mla; a.enabled()) {
    if (a.q_lora_rank > 0) j["q_lora_rank"] = a.q_lora_rank;
    j["kv_lora_rank"] = a.kv_lora_rank;
    j["qk_nope_head_dim"] = a.nope_head_dim;
    j["qk_rope_head_dim"] = a.rope_head_dim;
    j["v_head_dim"] = a.v_head_dim;
  }
  if (s.sliding_window > 0) {
    j["sliding_window"] = s.sliding_window;
    if (s.global_attention_every > 0) j["global_attention_every"] = s.global_attention_every;
  }
  if (s.is_hybrid()) j["hybrid_pattern"] = s.hybrid_pattern;
  if (const MambaSpec& mb = s.mamba; mb.enabled()) {
    j["mamba_heads"] = mb.heads;
    j["mamba_head_dim"] = mb.head_dim;
    j["mamba_state"] = mb.state;
    j["mamba_groups"] = mb.groups;
    j["mamba_conv_kernel"] = mb.conv_kernel;
    j["mamba_chunk"] = mb.chunk;
  }
  if (s.attention_dropout > 0.0) j["attention_dropout"] = s.attention_dropout;
  if (s.hidden_dropout > 0.0) j["hidden_dropout"] = s.hidden_dropout;
  if (!s.source.empty()) j["source"] = s.source;
  return j;
}

double ModelSpec::windowed_layer_fraction() const {
  if (sliding_window <= 0 || layers <= 0) return 0.0;
  int n = 0;
  for (int i = 0; i < layers; ++i) n += is_windowed_layer(i) ? 1 : 0;
  return static_cast<double>(n) / layers;
}

LayerKind ModelSpec::layer_kind(int i) const {
  if (!is_hybrid() || i < 0 || i >= static_cast<int>(hybrid_pattern.size())) return LayerKind::transformer;
  switch (hybrid_pattern[static_cast<std::size_t>(i)]) {
    case 'M': return LayerKind::mamba;
    case '*': return LayerKind::attention;
    case '-': return LayerKind::mlp;
    case 'E': return LayerKind::moe;
    default: return LayerKind::transformer;
  }
}

int ModelSpec::layers_of_kind(LayerKind k, int first, int count) const {
  int n = 0;
  for (int i = first; i < first + count; ++i) n += layer_kind(i) == k ? 1 : 0;
  return n;
}

int ModelSpec::moe_layers_in(int first, int count) const {
  if (!moe.enabled()) return 0;
  int n = 0;
  for (int i = first; i < first + count; ++i) n += is_moe_layer(i) ? 1 : 0;
  return n;
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
