// Hugging Face config.json import (model types: hf_import.hpp).
#include "scalescope/models/hf_import.hpp"

#include <algorithm>
#include <optional>
#include <vector>

namespace scalescope::models {

namespace fs = std::filesystem;

namespace {

/// An optional key that HF may also write as null.
std::optional<JsonCursor> present(const JsonCursor& c, std::string_view key) {
  auto v = c.find(key);
  if (!v || v->json().is_null()) return std::nullopt;
  return v;
}

int req_int(const JsonCursor& c, std::string_view key) {
  const auto v = c.at(key).as_positive_int();
  if (v > 1'000'000'000)
    c.at(key).fail("expected a positive integer below 1e9, got " + std::to_string(v));
  return static_cast<int>(v);
}

int opt_int(const JsonCursor& c, std::string_view key, int dflt) {
  auto v = present(c, key);
  return v ? static_cast<int>(v->as_int_in(1, 1'000'000'000)) : dflt;  // range-checked before narrowing
}

bool opt_bool(const JsonCursor& c, std::string_view key, bool dflt) {
  auto v = present(c, key);
  return v ? v->as_bool() : dflt;
}

/// A dropout probability (attention_dropout, attn_pdrop, ...): the model's default where the key is absent or null.
double opt_prob(const JsonCursor& c, std::string_view key, double dflt) {
  auto v = present(c, key);
  return v ? v->as_dropout_probability() : dflt;
}

std::string fallback_name(const std::string& file) {
  const fs::path p(file);
  if (p.stem() == "config" && p.has_parent_path() && !p.parent_path().filename().empty()) {
    return p.parent_path().filename().string();
  }
  return p.stem().string().empty() ? std::string("hf-model") : p.stem().string();
}

/// The gated-MLP, RMSNorm, RoPE layout with the transformers key names (llama and its descendants, gpt_oss).
ModelSpec gated_rope(const JsonCursor& c, int seq_len) {
  ModelSpec s;
  s.hidden = req_int(c, "hidden_size");
  s.ffn_hidden = req_int(c, "intermediate_size");
  s.heads = req_int(c, "num_attention_heads");
  s.layers = req_int(c, "num_hidden_layers");
  s.vocab = c.at("vocab_size").as_positive_int();
  s.kv_heads = opt_int(c, "num_key_value_heads", s.heads);
  s.head_dim = opt_int(c, "head_dim", 0);
  s.seq_len = seq_len;
  s.tied_embeddings = opt_bool(c, "tie_word_embeddings", false);
  s.ffn = FfnKind::swiglu;
  s.norm = NormKind::rmsnorm;
  s.positional = Positional::rope;
  s.attention_dropout = opt_prob(c, "attention_dropout", 0.0);  // LlamaConfig and its descendants: 0.0
  return s;
}

/// llama, mistral and qwen2 share the gated-MLP, RMSNorm, RoPE layout.
ModelSpec llama_like(const JsonCursor& c, const std::string& type, int default_positions) {
  ModelSpec s = gated_rope(c, opt_int(c, "max_position_embeddings", default_positions));
  if (type == "qwen2") {
    s.bias = false;
    s.qkv_bias = true;  // Qwen2Attention: q/k/v_proj bias=True, o_proj bias=False; MLP without bias
  } else {
    const bool attn = opt_bool(c, "attention_bias", false);
    const bool mlp = opt_bool(c, "mlp_bias", false);
    if (attn != mlp) {
      c.at(attn ? "attention_bias" : "mlp_bias")
          .fail(
              "attention_bias and mlp_bias differ; a ModelSpec has one bias flag for all linear "
              "layers");
    }
    s.bias = attn;
  }
  return s;
}

/// The sparse-layer rule of Qwen-MoE and Llama 4: every step-th layer, (i + 1) % step == 0.
void every_step(ModelSpec& s, int step) {
  s.moe.layer_freq = step;
  s.moe.layer_offset = step - 1;
}

/// qwen2_moe / qwen3_moe on top of their dense base.
void qwen_moe(const JsonCursor& c, ModelSpec& s, bool shared) {
  s.moe.experts = req_int(c, "num_experts");
  s.moe.top_k = req_int(c, "num_experts_per_tok");
  s.moe.ffn_hidden = req_int(c, "moe_intermediate_size");
  every_step(s, opt_int(c, "decoder_sparse_step", 1));
  if (auto dense = present(c, "mlp_only_layers"); dense && !dense->json().empty()) {
    dense->fail("a list of dense layers (mlp_only_layers) is not representable: MoE layers follow "
                "first_dense_layers / moe_layer_freq (expected an empty list)");
  }
  if (shared) {
    s.moe.shared_experts = 1;
    s.moe.shared_ffn_hidden = req_int(c, "shared_expert_intermediate_size");
    s.moe.shared_expert_gate = true;  // Qwen2MoeSparseMoeBlock.shared_expert_gate: Linear(h, 1)
  }
}

ModelSpec mixtral(const JsonCursor& c) {
  ModelSpec s = llama_like(c, "mixtral", 4096 * 32);
  s.moe.experts = req_int(c, "num_local_experts");
  s.moe.top_k = req_int(c, "num_experts_per_tok");
  s.moe.ffn_hidden = s.ffn_hidden;
  return s;
}

ModelSpec deepseek(const JsonCursor& c, const std::string& type) {
  ModelSpec s;
  s.hidden = req_int(c, "hidden_size");
  s.ffn_hidden = req_int(c, "intermediate_size");
  s.heads = req_int(c, "num_attention_heads");
  s.kv_heads = s.heads;  // latent attention: one key/value head per query head
  s.attention_dropout = opt_prob(c, "attention_dropout", 0.0);
  s.layers = req_int(c, "num_hidden_layers");
  s.vocab = c.at("vocab_size").as_positive_int();
  s.seq_len = opt_int(c, "max_position_embeddings", 4096);
  s.tied_embeddings = opt_bool(c, "tie_word_embeddings", false);
  s.ffn = FfnKind::swiglu;
  s.norm = NormKind::rmsnorm;
  s.positional = Positional::rope;
  MlaSpec& a = s.mla;
  a.q_lora_rank = opt_int(c, "q_lora_rank", 0);  // null in DeepSeek-V2-Lite: a plain query projection
  a.kv_lora_rank = req_int(c, "kv_lora_rank");
  a.nope_head_dim = req_int(c, "qk_nope_head_dim");
  a.rope_head_dim = req_int(c, "qk_rope_head_dim");
  a.v_head_dim = req_int(c, "v_head_dim");
  s.head_dim = a.qk_head_dim();
  if (present(c, "n_routed_experts")) {
    s.moe.experts = req_int(c, "n_routed_experts");
    s.moe.top_k = req_int(c, "num_experts_per_tok");
    s.moe.ffn_hidden = req_int(c, "moe_intermediate_size");
    s.moe.shared_experts = present(c, "n_shared_experts") ? static_cast<int>(c.at("n_shared_experts").as_int_in(0, 1024)) : 0;
    s.moe.first_dense_layers = present(c, "first_k_dense_replace")
                                   ? static_cast<int>(c.at("first_k_dense_replace").as_int_in(0, s.layers - 1))
                                   : 0;
    s.moe.layer_freq = opt_int(c, "moe_layer_freq", 1);
    s.moe.router_bias = type == "deepseek_v3" || (present(c, "topk_method") && c.get_string("topk_method") == "noaux_tc");
    // Group-limited routing (n_group groups, a token's experts in at most topk_group of them); 1 group: none.
    const int groups = opt_int(c, "n_group", 1), group_topk = opt_int(c, "topk_group", groups);
    if (groups > 1 && group_topk < groups) {
      s.moe.router_groups = groups;
      s.moe.router_group_topk = group_topk;
    }
  }
  return s;
}

ModelSpec llama4_text(const JsonCursor& c) {
  ModelSpec s = llama_like(c, "llama4", 4096 * 32);
  s.moe.experts = req_int(c, "num_local_experts");
  s.moe.top_k = opt_int(c, "num_experts_per_tok", 1);
  s.moe.ffn_hidden = s.ffn_hidden;  // intermediate_size: each routed expert and the shared one
  s.moe.shared_experts = 1;
  every_step(s, opt_int(c, "interleave_moe_layer_step", 1));
  s.ffn_hidden = opt_int(c, "intermediate_size_mlp", s.ffn_hidden);  // the dense layers
  return s;
}

/// The sliding-window layout of layer_types: every layer "sliding_attention" but each n-th "full_attention"
/// ((i + 1) % n == 0) -> n; all sliding -> 0; all full -> no window (-1). Other layouts are not representable.
int global_every_of(const JsonCursor& types, int layers) {
  const std::vector<JsonCursor> t = types.items();
  if (static_cast<int>(t.size()) != layers)
    types.fail("expected one entry per layer (" + std::to_string(layers) + "), got " + std::to_string(t.size()));
  std::vector<bool> full;
  for (const JsonCursor& x : t) full.push_back(x.as_enum({"sliding_attention", "full_attention"}) == "full_attention");
  int first = -1;
  for (int i = 0; i < layers && first < 0; ++i)
    if (full[static_cast<std::size_t>(i)]) first = i;
  if (first == 0) {
    if (std::all_of(full.begin(), full.end(), [](bool f) { return f; })) return -1;
    types.fail("a first layer with full attention and sliding ones after it is not representable "
               "(global_attention_every n keeps full attention on layers (i + 1) % n == 0)");
  }
  const int n = first < 0 ? 0 : first + 1;
  for (int i = 0; i < layers; ++i)
    if (full[static_cast<std::size_t>(i)] != (n > 0 && (i + 1) % n == 0))
      types.fail("layer " + std::to_string(i) + " breaks the pattern of full attention every " + std::to_string(n) +
                 " layers, the only one a model describes (global_attention_every)");
  return n;
}

ModelSpec gpt_oss(const JsonCursor& c) {
  ModelSpec s = gated_rope(c, opt_int(c, "initial_context_length", opt_int(c, "max_position_embeddings", 4096)));
  if (!opt_bool(c, "attention_bias", true))
    c.at("attention_bias").fail("attention_bias=false with the experts' biases cannot be represented by a ModelSpec");
  s.bias = true;  // GptOssAttention q/k/v/o and GptOssExperts gate_up/down have biases
  s.moe.experts = req_int(c, "num_local_experts");
  s.moe.top_k = present(c, "num_experts_per_tok") ? req_int(c, "num_experts_per_tok") : req_int(c, "experts_per_token");
  s.moe.ffn_hidden = s.ffn_hidden;
  s.moe.router_bias = true;  // GptOssTopKRouter: a bias per expert
  s.sliding_window = present(c, "sliding_window") ? static_cast<int>(c.at("sliding_window").as_int_in(0, kMaxModelSeqLen)) : 0;
  if (s.sliding_window > 0) {
    const int every = present(c, "layer_types") ? global_every_of(c.at("layer_types"), s.layers) : 2;
    if (every < 0) s.sliding_window = 0;
    else s.global_attention_every = every;
  }
  return s;
}

/// Phi-3 / Phi-3.5 / Phi-4-mini: the llama layout with fused qkv_proj and gate_up_proj (the same weights). A
/// sliding_window shorter than the context windows every layer (Phi-3-mini-4k: 2,047); partial_rotary_factor
/// (Phi-4-mini: 0.75) changes no count.
ModelSpec phi3(const JsonCursor& c) {
  ModelSpec s = llama_like(c, "phi3", 4096);
  s.hidden_dropout = opt_prob(c, "resid_pdrop", 0.0);  // Phi3DecoderLayer: resid_attn_dropout, resid_mlp_dropout
  if (auto w = present(c, "sliding_window")) {
    const auto window = w->as_int_in(1, std::int64_t{1} << 40);
    if (window < s.seq_len) s.sliding_window = static_cast<int>(window);
  }
  return s;
}

ModelSpec gpt2(const JsonCursor& c) {
  ModelSpec s;
  s.hidden = req_int(c, "n_embd");
  s.layers = req_int(c, "n_layer");
  s.heads = req_int(c, "n_head");
  s.kv_heads = s.heads;
  s.seq_len = opt_int(c, "n_positions", 1024);
  s.ffn_hidden = opt_int(c, "n_inner", 4 * s.hidden);
  s.vocab = present(c, "vocab_size") ? c.at("vocab_size").as_positive_int() : 50257;
  s.tied_embeddings = opt_bool(c, "tie_word_embeddings", true);
  s.ffn = FfnKind::gelu;
  s.norm = NormKind::layernorm;
  s.bias = true;
  s.positional = Positional::learned;
  // GPT2Config's defaults (0.1 each): the attention probabilities, the residual branches (resid_pdrop) and the
  // embedding output (embd_pdrop, priced as the residual branches' probability: hidden_dropout).
  s.attention_dropout = opt_prob(c, "attn_pdrop", 0.1);
  s.hidden_dropout = opt_prob(c, "resid_pdrop", 0.1);
  // GPT2MLP's act: ACT2FN[activation_function], "gelu_new" by default: NewGELUActivation, tanh GELU in Python ops.
  const std::string act = present(c, "activation_function") ? c.get_string("activation_function") : "gelu_new";
  s.composed_gelu = act == "gelu_new";
  return s;
}

ModelSpec gpt_neox(const JsonCursor& c) {
  ModelSpec s;
  s.hidden = req_int(c, "hidden_size");
  s.layers = req_int(c, "num_hidden_layers");
  s.heads = req_int(c, "num_attention_heads");
  s.kv_heads = s.heads;
  s.ffn_hidden = req_int(c, "intermediate_size");
  s.vocab = c.at("vocab_size").as_positive_int();
  s.seq_len = opt_int(c, "max_position_embeddings", 2048);
  s.tied_embeddings = opt_bool(c, "tie_word_embeddings", false);
  s.ffn = FfnKind::gelu;
  s.norm = NormKind::layernorm;
  s.positional = Positional::rope;
  s.bias = true;  // GPTNeoXMLP: dense_h_to_4h and dense_4h_to_h always have biases
  s.attention_dropout = opt_prob(c, "attention_dropout", 0.0);
  s.hidden_dropout = opt_prob(c, "hidden_dropout", 0.0);
  s.composed_gelu = present(c, "hidden_act") && c.get_string("hidden_act") == "gelu_new";  // NewGELUActivation
  if (!opt_bool(c, "attention_bias", true)) {
    c.at("attention_bias")
        .fail("attention_bias=false with MLP biases cannot be represented by a ModelSpec");
  }
  return s;
}

/// A NemotronH layer type (transformers' layers_block_type, with the legacy names of configs on the Hub) as its
/// hybrid_override_pattern character.
char nemotron_h_layer_char(const JsonCursor& t) {
  const std::string v = t.as_enum({"linear_attention", "mamba", "moe", "full_attention", "attention", "mlp"});
  if (v == "linear_attention" || v == "mamba") return 'M';
  if (v == "moe") return 'E';
  if (v == "mlp") return '-';
  return '*';
}

/// NemotronH (Nemotron-H, Nemotron 3 Nano): Mamba-2, attention (no positional encoding), squared-ReLU MLP and MoE
/// layers of one block each (docs/hybrid.md).
ModelSpec nemotron_h(const JsonCursor& c) {
  ModelSpec s;
  s.hidden = req_int(c, "hidden_size");
  s.heads = req_int(c, "num_attention_heads");
  s.kv_heads = opt_int(c, "num_key_value_heads", s.heads);
  s.head_dim = opt_int(c, "head_dim", opt_int(c, "attention_head_dim", 0));
  s.vocab = c.at("vocab_size").as_positive_int();
  s.seq_len = opt_int(c, "max_position_embeddings", 4096);
  s.tied_embeddings = opt_bool(c, "tie_word_embeddings", false);
  s.norm = NormKind::rmsnorm;
  s.positional = Positional::none;  // NemotronHAttention applies no rotary embedding
  const std::string act = present(c, "mlp_hidden_act") ? c.get_string("mlp_hidden_act") : "relu2";
  if (act != "relu2") c.at("mlp_hidden_act").fail("expected relu2 (squared ReLU, an ungated MLP), got '" + act + "'");
  s.ffn = FfnKind::gelu;  // two matrices, as squared ReLU has
  const bool bias = opt_bool(c, "use_bias", false) || opt_bool(c, "attention_bias", false) || opt_bool(c, "mlp_bias", false);
  if (bias) c.at("use_bias").fail("linear biases in a NemotronH model are not modelled (expected use_bias, attention_bias "
                                  "and mlp_bias false)");
  if (opt_bool(c, "mamba_proj_bias", false))
    c.at("mamba_proj_bias").fail("biases on the Mamba projections are not modelled (expected false)");
  if (auto latent = present(c, "moe_latent_size"))
    latent->fail("LatentMoE (moe_latent_size: experts working in a narrower latent space) is not modelled; expected null");
  if (auto types = present(c, "layers_block_type") ? present(c, "layers_block_type") : present(c, "layer_types")) {
    for (const JsonCursor& t : types->items()) s.hybrid_pattern += nemotron_h_layer_char(t);
  } else {
    s.hybrid_pattern = c.get_string("hybrid_override_pattern");
  }
  s.layers = static_cast<int>(s.hybrid_pattern.size());
  if (s.layers == 0) c.at("hybrid_override_pattern").fail("expected a non-empty layer pattern");
  if (auto n = present(c, "num_hidden_layers"); n && n->as_positive_int() != s.layers)
    n->fail("expected " + std::to_string(s.layers) + " (the layer pattern's length), got " +
            std::to_string(n->as_positive_int()));
  const bool has_mlp = s.hybrid_pattern.find('-') != std::string::npos;
  const bool has_moe = s.hybrid_pattern.find('E') != std::string::npos;
  s.ffn_hidden = has_mlp ? req_int(c, "intermediate_size") : opt_int(c, "intermediate_size", s.hidden);
  if (s.hybrid_pattern.find('M') != std::string::npos) {
    MambaSpec& mb = s.mamba;
    mb.heads = req_int(c, "mamba_num_heads");
    mb.head_dim = req_int(c, "mamba_head_dim");
    mb.state = req_int(c, "ssm_state_size");
    mb.groups = opt_int(c, "n_groups", opt_int(c, "mamba_n_groups", 8));
    mb.conv_kernel = opt_int(c, "conv_kernel", opt_int(c, "mamba_d_conv", 4));
    mb.chunk = opt_int(c, "chunk_size", opt_int(c, "mamba_chunk_size", 128));
  }
  if (has_moe) {
    MoeSpec& e = s.moe;
    e.experts = req_int(c, "n_routed_experts");
    e.top_k = req_int(c, "num_experts_per_tok");
    e.ffn_hidden = req_int(c, "moe_intermediate_size");
    e.shared_experts = present(c, "n_shared_experts") ? static_cast<int>(c.at("n_shared_experts").as_int_in(0, 1024)) : 1;
    if (e.shared_experts > 0) e.shared_ffn_hidden = req_int(c, "moe_shared_expert_intermediate_size");
    e.router_bias = true;  // NemotronHTopkRouter: sigmoid scores with e_score_correction_bias
    const int groups = opt_int(c, "n_group", 1), group_topk = opt_int(c, "topk_group", groups);
    if (groups > 1 && group_topk < groups) {
      e.router_groups = groups;
      e.router_group_topk = group_topk;
    }
  }
  return s;
}

}  // namespace

Expected<ModelSpec> import_hf_config_json(const Json& json, const std::string& file) {
  return catch_errors([&] {
    const JsonCursor c(json, file);
    c.expect_object();
    const std::string type = c.get_string("model_type");
    ModelSpec s;
    if (type == "llama") {
      s = llama_like(c, type, 2048);
    } else if (type == "mistral") {
      s = llama_like(c, type, 4096 * 32);
    } else if (type == "qwen2") {
      s = llama_like(c, type, 32768);
    } else if (type == "qwen3" || type == "qwen3_moe") {
      s = llama_like(c, type, 32768);
      s.qk_norm = true;  // Qwen3Attention: q_norm, k_norm (RMSNorm over head_dim)
      if (type == "qwen3_moe") qwen_moe(c, s, false);
    } else if (type == "qwen2_moe") {
      s = llama_like(c, "qwen2", 32768);
      qwen_moe(c, s, true);
    } else if (type == "mixtral") {
      s = mixtral(c);
    } else if (type == "deepseek_v2" || type == "deepseek_v3") {
      s = deepseek(c, type);
    } else if (type == "llama4_text") {
      s = llama4_text(c);
    } else if (type == "llama4") {
      s = llama4_text(c.at("text_config"));
    } else if (type == "gpt_oss") {
      s = gpt_oss(c);
    } else if (type == "gpt2") {
      s = gpt2(c);
    } else if (type == "gpt_neox") {
      s = gpt_neox(c);
    } else if (type == "phi3") {
      s = phi3(c);
    } else if (type == "nemotron_h") {
      s = nemotron_h(c);
    } else if (type == "olmo2") {
      s = llama_like(c, type, 4096);
      s.qk_norm = true;  // Olmo2Attention: q_norm over heads x head_dim, k_norm over kv_heads x head_dim
      s.qk_norm_full = true;
    } else {
      c.at("model_type")
          .fail("model_type '" + type + "' is not supported (supported: " + kSupportedHfModelTypes +
                ")");
    }
    // transformers writes every RMSNorm of these architectures out of elementwise operators (LlamaRMSNorm and its
    // copies: hidden.to(float32), pow(2).mean, rsqrt, two multiplies); LayerNorm is nn.LayerNorm (one kernel).
    s.composed_norm = s.norm == NormKind::rmsnorm;
    const std::string hf_name = present(c, "_name_or_path") ? c.get_string("_name_or_path") : "";
    s.name = hf_name.empty() ? fallback_name(file) : hf_name;
    s.source = "Hugging Face config.json (" + type + "): " + file;
    return check_model(std::move(s), file).take_or_throw();
  });
}

Expected<ModelSpec> import_hf_config(const fs::path& file) {
  auto json = read_json_file(file);
  if (!json) return json.error();
  return import_hf_config_json(*json, file.string());
}

}  // namespace scalescope::models
