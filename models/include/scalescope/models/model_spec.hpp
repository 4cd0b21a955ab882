// Transformer model specs: the native JSON format, its loader and writer, and the catalog lookup.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::models {

enum class FfnKind { gelu, swiglu };         ///< gelu: 2 matrices h x f; swiglu: 3 (gate, up, down)
enum class NormKind { layernorm, rmsnorm };  ///< layernorm: weight + bias (2h); rmsnorm: weight (h)
/// rope: rotary embedding (no parameters, kernels on q and k); learned: a seq_len x hidden table added to the
/// embedding output; alibi: a bias inside the attention kernel (no parameters, no separate kernels); none: nothing.
enum class Positional { rope, learned, alibi, none };

/// Mixture of experts (Megatron-Core / HF vocabulary; docs/moe.md). A layer is an MoE layer when
/// i >= first_dense_layers and (i - first_dense_layers) % layer_freq == layer_offset (0-based i): Mixtral and
/// Qwen3-MoE every layer (freq 1), DeepSeek-V3 after 3 dense layers, Llama 4 Maverick / Qwen2-MoE
/// decoder_sparse_step 2 every second layer (freq 2, offset 1), Megatron --moe-layer-freq 2 (offset 0). The
/// other layers are dense with the model's ffn_hidden.
struct MoeSpec {
  int experts = 0;               ///< routed experts; 0: a dense model
  int top_k = 0;                 ///< experts per token
  int ffn_hidden = 0;            ///< one routed expert's FFN width (moe_intermediate_size)
  int shared_experts = 0;        ///< always-active experts (DeepSeek, Qwen2-MoE)
  int shared_ffn_hidden = 0;     ///< their total width (0: shared_experts x ffn_hidden)
  bool shared_expert_gate = false;  ///< Qwen2-MoE's sigmoid gate on the shared expert (h parameters)
  int first_dense_layers = 0;
  int layer_freq = 1;
  int layer_offset = 0;
  double capacity_factor = 0.0;  ///< 0: dropless; else tokens per expert capped at factor x the mean
  bool router_fp32 = false;      ///< router GEMM and softmax in fp32 (Megatron --moe-router-dtype fp32)
  bool router_bias = false;      ///< DeepSeek-V3's expert score-correction bias (experts parameters)
  /// Group-limited routing (DeepSeek's node-limited routing, Megatron --moe-router-num-groups / -group-topk): the
  /// experts form router_groups groups and a token's top_k experts lie in at most router_group_topk of them.
  int router_groups = 0;
  int router_group_topk = 0;

  bool enabled() const { return experts > 0; }
  int shared_width() const { return shared_ffn_hidden > 0 ? shared_ffn_hidden : shared_experts * ffn_hidden; }
  bool operator==(const MoeSpec&) const = default;
};

/// Multi-head latent attention (DeepSeek-V2/V3): queries through a rank-q_lora_rank bottleneck (0: a plain
/// h x heads*(nope+rope) projection), keys and values through a shared rank-kv_lora_rank latent plus one
/// shared rope key of rope_head_dim; per head qk dims nope_head_dim + rope_head_dim, value dim v_head_dim.
struct MlaSpec {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int nope_head_dim = 0;
  int rope_head_dim = 0;
  int v_head_dim = 0;

  bool enabled() const { return kv_lora_rank > 0; }
  int qk_head_dim() const { return nope_head_dim + rope_head_dim; }
  bool operator==(const MlaSpec&) const = default;
};

/// Mamba-2 mixer (Dao & Gu 2024, "Transformers are SSMs": the SSD layer; Megatron-Core's MambaMixer, HF NemotronH /
/// Mamba2). The inner width d_i = heads x head_dim; B and C are shared by the heads of each of `groups` groups. A
/// layer runs in_proj h -> 2 d_i + 2 groups state + heads (z, x, B, C, dt), a depthwise causal conv of
/// `conv_kernel` taps over (x, B, C), the chunked state-space scan over chunks of `chunk` tokens, an RMSNorm of the
/// output gated by silu(z), and out_proj d_i -> h.
struct MambaSpec {
  int heads = 0;        ///< mamba_num_heads; 0: no Mamba layers
  int head_dim = 0;     ///< P
  int state = 0;        ///< N (ssm_state_size)
  int groups = 1;       ///< G (n_groups)
  int conv_kernel = 4;  ///< conv1d taps
  int chunk = 128;      ///< SSD chunk length Q

  bool enabled() const { return heads > 0; }
  std::int64_t inner() const { return std::int64_t{heads} * head_dim; }
  std::int64_t conv_channels() const { return inner() + 2 * std::int64_t{groups} * state; }
  std::int64_t in_proj_width() const { return 2 * inner() + 2 * std::int64_t{groups} * state + heads; }
  bool operator==(const MambaSpec&) const = default;
};

/// The kernel groups of a Mamba-2 layer a profile measures (`mamba` rows) and the fused stack's rows name (`group`).
enum class MambaGroup : std::uint8_t { ssd_forward, ssd_backward, gated_norm_forward, gated_norm_backward };
inline constexpr int kNumMambaGroups = 4;
/// "ssd_forward", ...: the rows' `group` values and the measurement's keys without "_s".
std::string_view to_string(MambaGroup g);

/// What one layer runs. A transformer layer is attention then an MLP (or the MoE block of an MoE layer); the layers
/// of a hybrid model (ModelSpec::hybrid_pattern, Megatron-Core's hybrid_override_pattern) run one block each: a
/// Mamba-2 mixer ('M'), attention ('*'), an MLP ('-') or an MoE block ('E'), each behind its own norm and residual.
enum class LayerKind { transformer, mamba, attention, mlp, moe };
/// The hybrid_pattern character of a kind ('T' for transformer, which a pattern never holds).
char pattern_char(LayerKind k);

/// Upper bounds check_model() enforces (docs/plausible-ranges.md gives the reasons).
inline constexpr std::int64_t kMaxModelLayers = 16384;
inline constexpr std::int64_t kMaxModelWidth = 1 << 20;  ///< hidden and head_dim; ffn_hidden: 4x
inline constexpr std::int64_t kMaxModelHeads = 65536;
inline constexpr std::int64_t kMaxModelVocab = 1 << 24;
inline constexpr std::int64_t kMaxModelSeqLen = 1 << 24;
inline constexpr std::int64_t kMaxModelExperts = 65536;

/// A decoder-only transformer as the counts, the memory model and the task graphs see it.
///
/// Native JSON (every key below; unknown keys are rejected):
///   name, layers, hidden, heads, kv_heads, ffn_hidden, ffn ("gelu"|"swiglu"),
///   norm ("layernorm"|"rmsnorm"), bias, vocab, tied_embeddings, seq_len
/// optional: head_dim (when it is not hidden/heads), positional ("rope" default | "learned" | "alibi" | "none"),
///   qkv_bias (default: bias; Qwen2 has qkv bias and no other linear bias), qk_norm (Qwen3: RMSNorm on each
///   query and key head), qk_norm_full (with qk_norm, OLMo 2: one RMSNorm over the whole projection),
///   composed_norm, composed_gelu (the model's code writes its norms / its tanh GELU out of elementwise operators, as
///   transformers' LlamaRMSNorm and gelu_new do, instead of calling a fused kernel: what autograd keeps differs,
///   docs/stack-profile.md), source (free text);
///   MoE (MoeSpec): experts, top_k, moe_ffn_hidden (all three together), shared_experts, shared_ffn_hidden,
///   shared_expert_gate, first_dense_layers, moe_layer_freq, moe_layer_offset, capacity_factor (0 = dropless),
///   router_dtype ("fp32" | "bf16"), router_bias, router_groups and router_group_topk (group-limited routing);
///   MLA (MlaSpec): q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim (the last four
///   together; head_dim is then qk_nope + qk_rope);
///   attention_dropout, hidden_dropout (training dropout probabilities, 0 <= p < 1, default 0);
///   hybrid models: hybrid_pattern (one of M * - E per layer), mamba_heads, mamba_head_dim, mamba_state (all three
///   with an 'M'), mamba_groups (default 1), mamba_conv_kernel (4), mamba_chunk (128); docs/hybrid.md.
/// The tokens a windowed layer's attention is priced and counted over: `span` (the sequence, or a packed document),
/// at most twice the window (each query sees `window` keys: the FLOPs and kernel of causal attentions of 2 x window
/// tokens). 0: no window.
inline double sliding_window_span(double span, double window) { return window > 0 ? std::min(span, 2.0 * window) : span; }
/// The window a windowed layer's kernel is priced with (AttentionShape::window): `window` where it narrows the span
/// (2 x window < span), else 0, so that a shape with a window and its span shape describe the same attention.
inline double sliding_window_priced(double span, double window) {
  return sliding_window_span(span, window) < span ? window : 0.0;
}

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int ffn_hidden = 0;
  FfnKind ffn = FfnKind::gelu;
  NormKind norm = NormKind::layernorm;
  bool bias = false;  ///< biases on every linear layer (GPT-2, Megatron GPT, GPT-NeoX)
  std::int64_t vocab = 0;
  bool tied_embeddings = false;
  int seq_len = 0;
  int head_dim = 0;  ///< 0 means hidden / heads
  Positional positional = Positional::rope;
  std::optional<bool> qkv_bias;  ///< unset: same as `bias`
  bool qk_norm = false;          ///< RMSNorm over each query and key head (2 x head_dim weights)
  /// With qk_norm: one RMSNorm over the whole query and the whole key projection (OLMo 2: (heads + kv_heads) x
  /// head_dim weights) instead of one per head; the same bytes move either way.
  bool qk_norm_full = false;
  /// The norms are written out of elementwise operators (transformers' LlamaRMSNorm and its copies: an fp32 copy,
  /// pow, mean, rsqrt, two multiplies), which keep the fp32 normalised tensor for the weight's multiply; false: one
  /// fused kernel (F.layer_norm, F.rms_norm, Megatron / Transformer Engine) that keeps its input only.
  bool composed_norm = false;
  /// The tanh GELU is written out of elementwise operators (transformers' gelu_new / NewGELUActivation, GPT-2's
  /// default), which keep five FFN-sized tensors (an fp32 copy under autocast); false: F.gelu keeps its input only.
  bool composed_gelu = false;
  MoeSpec moe;
  MlaSpec mla;
  /// Sliding-window attention (Mistral, Gemma, gpt-oss): a windowed layer's query sees the `sliding_window` tokens
  /// up to itself. 0: every layer attends over the whole sequence.
  int sliding_window = 0;
  /// With sliding_window: layer i keeps full attention when (i + 1) % global_attention_every == 0 (gpt-oss: 2,
  /// alternate layers; Gemma 3: 6); 0: every layer is windowed.
  int global_attention_every = 0;
  /// Training dropout (HF attention_dropout / attn_pdrop, resid_pdrop; Megatron --attention-dropout,
  /// --hidden-dropout; 0: none). Attention dropout runs inside a flash kernel (a random mask per score, priced at the
  /// profile's rates with dropout: compute_model.hpp) or as its own kernel on the scores (unfused attention); hidden
  /// dropout on each residual branch and on the embedding output writes a 1-byte mask forward and applies it backward.
  /// Neither changes a count or a FLOP.
  double attention_dropout = 0.0;
  double hidden_dropout = 0.0;
  /// Hybrid models: one character per layer, 'M' Mamba-2, '*' attention, '-' MLP (ffn_hidden), 'E' MoE (MoeSpec);
  /// empty: every layer is a transformer layer.
  std::string hybrid_pattern;
  MambaSpec mamba;
  std::string source;            ///< where the numbers come from (paper, HF config)

  int head_size() const { return head_dim > 0 ? head_dim : hidden / heads; }
  std::int64_t q_dim() const { return std::int64_t{heads} * head_size(); }
  std::int64_t kv_dim() const { return std::int64_t{kv_heads} * head_size(); }
  bool has_qkv_bias() const { return qkv_bias.value_or(bias); }
  bool is_moe() const { return moe.enabled(); }
  /// Layer `i` (0-based) is an MoE layer (MoeSpec's rule); false for every layer of a dense model.
  bool is_moe_layer(int i) const {
    if (is_hybrid()) return moe.enabled() && layer_kind(i) == LayerKind::moe;
    return moe.enabled() && i >= moe.first_dense_layers &&
           (i - moe.first_dense_layers) % moe.layer_freq == moe.layer_offset;
  }
  bool is_hybrid() const { return !hybrid_pattern.empty(); }
  /// What layer `i` (0-based) runs.
  LayerKind layer_kind(int i) const;
  /// Layers of kind `k` among layers [first, first + count).
  int layers_of_kind(LayerKind k, int first, int count) const;
  int layers_of_kind(LayerKind k) const { return layers_of_kind(k, 0, layers); }
  /// The layer has an attention block (every transformer layer; '*' of a hybrid model).
  bool has_attention(int i) const {
    const LayerKind k = layer_kind(i);
    return k == LayerKind::transformer || k == LayerKind::attention;
  }
  /// Layer `i` (0-based) attends over a sliding window.
  bool is_windowed_layer(int i) const {
    return sliding_window > 0 && (global_attention_every == 0 || (i + 1) % global_attention_every != 0);
  }
  /// The share of layers with windowed attention (0 without a window).
  double windowed_layer_fraction() const;
  /// MoE layers among layers [first, first + count).
  int moe_layers_in(int first, int count) const;
  int moe_layers() const { return moe_layers_in(0, layers); }
};

std::string_view to_string(FfnKind k);
std::string_view to_string(NormKind k);
std::string_view to_string(Positional p);

/// Checks the fields of a spec built in code or read from a file (positive sizes, heads divisible
/// by kv_heads, hidden divisible by heads unless head_dim is given). `file` names it in errors.
Expected<ModelSpec> check_model(ModelSpec spec, const std::string& file = "");

/// Reads the native format from parsed JSON; `file` names it in errors.
Expected<ModelSpec> model_from_json(const Json& json, const std::string& file);
/// Reads a native model file.
Expected<ModelSpec> load_model(const std::filesystem::path& file);
/// The native format (keys sorted; optional keys written only when they carry information).
Json to_json(const ModelSpec& spec);

/// models/catalog in the source tree.
std::filesystem::path default_catalog_dir();
/// Names (file stems) of the catalog entries, sorted.
std::vector<std::string> catalog_names(const std::filesystem::path& dir = default_catalog_dir());
/// A catalog name ("llama3-8b"), a native model file, or a Hugging Face config.json (recognised by
/// its "model_type" key). Unknown names fail with the list of catalog names.
Expected<ModelSpec> load_model_by_name_or_path(
    std::string_view name_or_path, const std::filesystem::path& catalog = default_catalog_dir());

}  // namespace scalescope::models
