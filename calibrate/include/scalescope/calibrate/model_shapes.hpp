// What to calibrate for a model: the GEMM and attention shapes its layers run at given micro-batch sizes,
// sequence lengths and tensor-parallel widths, and the file (`scalescope.calibration-shapes/1`) that carries them
// to the GPU program (`scalescope-calibrate --gemm-shapes FILE`) and to the attention timing
// (validation/attention/measure_attention.py --shapes FILE).
//
// GEMMs of one layer on one tensor-parallel rank, t = mbs * seq / cp tokens, h hidden, q / k query / kv widths,
// f ffn width, V vocab (each of q, k, f, V divided by tp), cuBLAS layouts as gemm_shapes.hpp (forward NN
// (out, t, in), dgrad TN (in, t, out), wgrad NT (out, in, t)):
//   attention inputs: fused qkv (q + 2k), and separate q, k (v has k's shape) as Hugging Face models run them;
//   attention output (in q, out h); MLP: swiglu fused gate+up (2f) and separate gate / up (f), down (in f);
//   gelu fc1 (f) and fc2 (in f); LM head (V). Each with forward, dgrad and wgrad.
// Attention: batch mbs, heads / tp, kv heads / tp (at least 1), head size, seq / cp, causal.
// Repeated problems are listed once (labels joined).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scalescope/calibrate/gemm_shapes.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::calib {

struct AttentionCall {
  std::int64_t batch = 1, heads = 1, kv_heads = 1, head_dim = 1, seq = 1;
  bool causal = true;
  std::string label;
  /// "flash" (SDPA) or "varlen" (FlashAttention's varlen kernel: `batch` packed documents of `seq` tokens).
  std::string backend = "flash";
  /// Attention dropout inside the kernel (SDPA's dropout_p; 0: none): a model with attention_dropout > 0 gets each
  /// of its shapes twice, without and with, so that the profile measures the kernel's dropout factor on this GPU.
  double dropout = 0.0;
};

struct CalibrationShapes {
  std::vector<std::string> models;       ///< names, for the record
  std::vector<std::string> dtypes;       ///< GEMM dtypes (gemm_dtype_name)
  std::vector<GemmShape> gemms;          ///< timed in every dtype of `dtypes`
  std::vector<AttentionCall> attention;  ///< bf16 flash attention
};

struct ShapeRequest {
  std::vector<int> micro_batches{1, 2, 4};
  std::vector<int> seqs;  ///< empty: the model's seq_len
  std::vector<int> tps{1};
  /// Context-parallel sizes: a rank runs mbs * seq / cp tokens and causal attention over seq / cp (the diagonal step
  /// of the ring; models/src/cp_costs.cpp prices the other steps at that shape's rate). cp values whose 2 cp does not
  /// divide seq (Megatron's rule) are skipped.
  std::vector<int> cps{1};
  std::vector<int> eps{1};  ///< MoE models: expert-parallel sizes (the tokens per expert of each)
  std::vector<std::string> dtypes{"bf16"};
  /// Packed-document lengths (plan key packed_doc_tokens): each also adds the attention shape a packed plan is
  /// priced at, mbs x seq / doc causal sequences of doc tokens (docs/plan-format.md). Empty: none.
  std::vector<int> packed_doc_tokens;
};

/// The shapes of `models` at every (micro-batch, seq, tp, cp) of `request`; tp values that do not divide a model's
/// heads, kv heads (or exceed them) and ffn are skipped for that model. Fails on an unknown dtype or a
/// non-positive size.
Expected<CalibrationShapes> calibration_shapes(const std::vector<models::ModelSpec>& models,
                                               const ShapeRequest& request);

/// The same for models given as catalog names, native model JSON or HF config.json files (loaded in order; the
/// first that fails to load is the error).
Expected<CalibrationShapes> calibration_shapes(const std::vector<std::string>& model_names_or_files,
                                               const ShapeRequest& request);

/// `scalescope.calibration-shapes/1`: {schema, models[], dtypes[], gemm: [{transa, transb, m, n, k, label}],
/// attention: [{batch, heads, kv_heads, head_dim, seq, causal, label}]}.
Json to_json(const CalibrationShapes& shapes);
Expected<CalibrationShapes> calibration_shapes_from_json(const Json& doc, const std::string& file);
Expected<CalibrationShapes> load_calibration_shapes(const std::string& file);

}  // namespace scalescope::calib
