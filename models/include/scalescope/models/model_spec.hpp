// Transformer model specs: the native JSON format, its loader and writer, and the catalog lookup.
#pragma once

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

/// Upper bounds check_model() enforces (docs/plausible-ranges.md gives the reasons).
inline constexpr std::int64_t kMaxModelLayers = 16384;
inline constexpr std::int64_t kMaxModelWidth = 1 << 20;  ///< hidden and head_dim; ffn_hidden: 4x
inline constexpr std::int64_t kMaxModelHeads = 65536;
inline constexpr std::int64_t kMaxModelVocab = 1 << 24;
inline constexpr std::int64_t kMaxModelSeqLen = 1 << 24;

/// A decoder-only transformer as the counts, the memory model and the task graphs see it.
///
/// Native JSON (every key below; unknown keys are rejected):
///   name, layers, hidden, heads, kv_heads, ffn_hidden, ffn ("gelu"|"swiglu"),
///   norm ("layernorm"|"rmsnorm"), bias, vocab, tied_embeddings, seq_len
/// optional: head_dim (when it is not hidden/heads), positional ("rope" default | "learned" | "alibi" | "none"),
///   qkv_bias (default: bias; Qwen2 has qkv bias and no other linear bias), source (free text).
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
  std::string source;            ///< where the numbers come from (paper, HF config)

  int head_size() const { return head_dim > 0 ? head_dim : hidden / heads; }
  std::int64_t q_dim() const { return std::int64_t{heads} * head_size(); }
  std::int64_t kv_dim() const { return std::int64_t{kv_heads} * head_size(); }
  bool has_qkv_bias() const { return qkv_bias.value_or(bias); }
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
