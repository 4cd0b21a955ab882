// Import of Hugging Face transformers config.json files into a ModelSpec.
#pragma once

#include <filesystem>
#include <string>

#include "scalescope/models/model_spec.hpp"

namespace scalescope::models {

/// model_type values import_hf_config understands, sorted.
inline constexpr const char* kSupportedHfModelTypes = "gpt2, gpt_neox, llama, mistral, qwen2";

/// Reads a Hugging Face config.json. Supported model_type values and what they map to:
///  - llama, mistral: swiglu (gate/up/down), rmsnorm, rope; biases only with attention_bias and
///    mlp_bias both true; num_key_value_heads defaults to num_attention_heads; untied unless
///    tie_word_embeddings.
///  - qwen2: as llama, plus q/k/v biases (the output projection and the MLP have none).
///  - gpt2: n_embd, n_layer, n_head, n_positions, n_inner (null: 4 * n_embd); gelu, layernorm,
///    biases everywhere, learned positions, tied embeddings unless tie_word_embeddings is false.
///  - gpt_neox: gelu, layernorm, biases (attention_bias, default true), rope, untied unless
///    tie_word_embeddings; the parallel residual and rotary_pct do not change the counts.
/// seq_len is max_position_embeddings (n_positions for gpt2): the context the model was built for,
/// which may be longer than the sequence one trains with. Keys the model does not need are ignored
/// (HF configs carry many); the ones it needs are checked with file and JSON path. The name is
/// "_name_or_path" when present, else the folder holding config.json, else the file stem.
Expected<ModelSpec> import_hf_config(const std::filesystem::path& file);
/// The same from parsed JSON; `file` names the source in errors and gives the fallback name.
Expected<ModelSpec> import_hf_config_json(const Json& json, const std::string& file);

}  // namespace scalescope::models
