// Import of Hugging Face transformers config.json files into a ModelSpec.
#pragma once

#include <filesystem>
#include <string>

#include "scalescope/models/model_spec.hpp"

namespace scalescope::models {

/// model_type values import_hf_config understands, sorted.
inline constexpr const char* kSupportedHfModelTypes =
    "deepseek_v2, deepseek_v3, gpt2, gpt_neox, gpt_oss, llama, llama4, llama4_text, mistral, mixtral, nemotron_h, olmo2, "
    "phi3, qwen2, qwen2_moe, qwen3, qwen3_moe";

/// Reads a Hugging Face config.json. Supported model_type values and what they map to:
///  - llama, mistral: swiglu (gate/up/down), rmsnorm, rope; biases only with attention_bias and
///    mlp_bias both true; num_key_value_heads defaults to num_attention_heads; untied unless
///    tie_word_embeddings.
///  - qwen2: as llama, plus q/k/v biases (the output projection and the MLP have none).
///  - gpt2: n_embd, n_layer, n_head, n_positions, n_inner (null: 4 * n_embd); gelu, layernorm,
///    biases everywhere, learned positions, tied embeddings unless tie_word_embeddings is false.
///  - gpt_neox: gelu, layernorm, biases (attention_bias, default true), rope, untied unless
///    tie_word_embeddings; the parallel residual and rotary_pct do not change the counts.
///  - qwen3: as llama with head_dim and an RMSNorm on every query and key head (qk_norm).
///  - olmo2: as llama with one RMSNorm over the whole query and key projections (qk_norm, qk_norm_full); its
///    norms after the attention and the MLP instead of before them change no count.
///  - phi3: as llama (qkv_proj and gate_up_proj fused, the same weights); a sliding_window shorter than
///    max_position_embeddings windows every layer; partial_rotary_factor changes no count.
///  - gpt_oss: every layer an MoE layer of num_local_experts experts of intermediate_size (num_experts_per_tok or
///    experts_per_token per token), biases on attention, experts and router, head_dim, sliding_window on the layers
///    layer_types marks sliding_attention (full attention every n-th layer: global_attention_every), the sequence
///    initial_context_length (the pre-training context; max_position_embeddings is YaRN's). Attention sinks (a
///    logit per head) are not counted.
///  - mixtral: as mistral, every layer an MoE layer of num_local_experts experts of intermediate_size,
///    num_experts_per_tok per token.
///  - qwen2_moe / qwen3_moe: as qwen2 / qwen3 with num_experts experts of moe_intermediate_size,
///    num_experts_per_tok per token, every decoder_sparse_step-th layer sparse ((i+1) % step == 0); qwen2_moe
///    adds one shared expert of shared_expert_intermediate_size with its sigmoid gate. mlp_only_layers must be
///    empty (a list of dense layers is not representable).
///  - deepseek_v2 / deepseek_v3: multi-head latent attention (q_lora_rank, null for V2-Lite, kv_lora_rank,
///    qk_nope_head_dim, qk_rope_head_dim, v_head_dim), n_routed_experts of moe_intermediate_size,
///    n_shared_experts, first_k_dense_replace dense layers of intermediate_size, then every moe_layer_freq-th
///    layer MoE; V3's noaux_tc routing keeps a score-correction bias per expert.
///  - llama4 (its text_config) / llama4_text: num_local_experts experts of intermediate_size with one shared
///    expert of the same width, every interleave_moe_layer_step-th layer MoE ((i+1) % step == 0), the other
///    layers dense of intermediate_size_mlp; the vision tower is not counted.
/// seq_len is max_position_embeddings (n_positions for gpt2): the context the model was built for,
/// which may be longer than the sequence one trains with. Keys the model does not need are ignored
/// (HF configs carry many); the ones it needs are checked with file and JSON path. The name is
/// "_name_or_path" when present, else the folder holding config.json, else the file stem.
Expected<ModelSpec> import_hf_config(const std::filesystem::path& file);
/// The same from parsed JSON; `file` names the source in errors and gives the fallback name.
Expected<ModelSpec> import_hf_config_json(const Json& json, const std::string& file);

}  // namespace scalescope::models
