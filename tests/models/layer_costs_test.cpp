// Tests for the per-layer kernel lists: FLOPs against the published GPT counts, tensor-parallel
// sharding, recompute variants and the optimizer's bytes per parameter.
#include <gtest/gtest.h>

#include "scalescope/models/layer_costs.hpp"
#include "gpu_fixtures.hpp"

namespace scalescope::models {
namespace {

GpuSpec a100() { return testing::a100_spec(); }

ComputeModel model_without_launch_cost() {
  ComputeAssumptions a;
  a.launch_overhead = Seconds(0);
  auto m = ComputeModel::datasheet(a100(), a);
  EXPECT_TRUE(m.has_value());
  return std::move(m).value();
}

// GPT-3 175B shapes (Brown et al. 2020): h = 12288, 96 heads, f = 4h, s = 2048, biases, layernorm.
ModelSpec gpt3() {
  ModelSpec s;
  s.name = "gpt3";
  s.layers = 96;
  s.hidden = 12288;
  s.heads = 96;
  s.kv_heads = 96;
  s.ffn_hidden = 4 * 12288;
  s.bias = true;
  s.vocab = 51200;
  s.seq_len = 2048;
  s.positional = Positional::learned;
  return s;
}

Plan plan(int tp, int mbs, Recompute r = Recompute::none) {
  Plan p;
  p.tp = tp;
  p.mbs = mbs;
  p.gbs = mbs;
  p.recompute = r;
  return p;
}

TEST(LayerCosts, ForwardFlopsAreTheGemmCountPlusHalfTheCausalAttention) {
  // Per token, forward GEMMs of a GPT layer: 2 * 12 h^2 = 24 h^2 (Narayanan et al. 2021 eq. 3 without
  // the 4x for fwd+bwd+recompute); the causal flash kernel does half of 4 s h: 2 s h. On one of tp = 8
  // ranks with t = mbs * s = 4096 tokens: t (24 h^2 + 2 s h) / 8.
  const ComputeModel m = model_without_launch_cost();
  const double h = 12288, s = 2048, t = 2 * s;
  const LayerCost c = layer_cost(gpt3(), plan(8, 2), m);
  EXPECT_NEAR(c.forward.flops, t * (24 * h * h + 2 * s * h) / 8, 1.0);
  // Backward: dgrad + wgrad per GEMM (2x) and 2.5x the attention forward.
  EXPECT_NEAR(c.backward.flops, t * (48 * h * h + 2.5 * 2 * s * h) / 8, 1.0);
  EXPECT_EQ(c.recompute.flops, 0.0);
}

TEST(LayerCosts, TensorParallelismDividesTheGemmTime) {
  // With a datasheet roofline, compute-bound GEMMs take F / (P eta): tp = 2 halves every GEMM's FLOPs, so
  // the GEMM share of the forward halves (the large GPT-3 GEMMs stay compute-bound at tp = 2).
  const ComputeModel m = model_without_launch_cost();
  const LayerCost one = layer_cost(gpt3(), plan(1, 2), m);
  const LayerCost two = layer_cost(gpt3(), plan(2, 2), m);
  EXPECT_NEAR(two.forward.flops, one.forward.flops / 2, 1.0);
  // Memory-bound kernels outside the TP region (norms, residuals) are not divided without sp, so
  // the time ratio lies strictly between 1/2 and 1.
  EXPECT_GT(two.forward.time.value, one.forward.time.value / 2);
  EXPECT_LT(two.forward.time.value, one.forward.time.value);
}

TEST(LayerCosts, FullRecomputeRepeatsTheForwardSelectiveOnlyTheAttentionCore) {
  const ComputeModel m = model_without_launch_cost();
  const LayerCost full = layer_cost(gpt3(), plan(8, 1, Recompute::full), m);
  EXPECT_EQ(full.recompute.time.value, full.forward.time.value);
  // Selective with flash attention: the backward kernel recomputes the scores already, nothing extra.
  EXPECT_EQ(layer_cost(gpt3(), plan(8, 1, Recompute::selective), m).recompute.kernels, 0);
  // Selective without flash (Megatron 2021): QK^T and AV again, 2 * 2 b a s^2 d / tp FLOPs =
  // 4 * 1 * 96 * 2048^2 * 128 / 8 = 2.577e10, plus the softmax (and dropout) kernels.
  CostOptions o;
  o.flash_attention = false;
  o.dropout = true;
  const LayerCost sel = layer_cost(gpt3(), plan(8, 1, Recompute::selective), m, o);
  EXPECT_NEAR(sel.recompute.flops, 4.0 * 96 * 2048.0 * 2048.0 * 128 / 8, 1.0);
  EXPECT_EQ(sel.recompute.kernels, 4);
}

TEST(LayerCosts, OptimizerMovesThirtyFourBytesPerParameterInMixedPrecision) {
  // Mixed: read fp32 grad for the norm (4) + Adam read grad, master, m, v (16) + write master, m, v (12)
  // + bf16 copy (2) = 34 bytes; 1e9 parameters at 2039e9 * 0.7 B/s.
  const ComputeModel m = model_without_launch_cost();
  auto at = [&](Precision p) {
    Plan plan;
    plan.precision = p;
    return optimizer_cost(1e9, gpt3(), plan, m).time.value;
  };
  EXPECT_NEAR(at(Precision::mixed), 34e9 / (2039e9 * 0.7), 1e-12);
  EXPECT_NEAR(at(Precision::bf16), 16e9 / (2039e9 * 0.7), 1e-12);
  // fp16: the mixed bytes with 16-bit gradients read twice (norm, update): 34 - 2 * 2 = 30.
  EXPECT_NEAR(at(Precision::fp16), 30e9 / (2039e9 * 0.7), 1e-12);
}

TEST(LayerCosts, LmHeadForwardIsTheLogitsGemmOverTheVocabularyShard) {
  // Logits GEMM: 2 t h V/tp FLOPs with V padded to a multiple of 128 * tp: 51200 at tp = 8, so
  // 2 * 2048 * 12288 * 6400 = 3.22e11 FLOPs for mbs = 1.
  const ComputeModel m = model_without_launch_cost();
  const EdgeCost e = edge_cost(gpt3(), plan(8, 1), m);
  EXPECT_NEAR(e.head_forward.flops, 2.0 * 2048 * 12288 * 6400, 1.0);
  EXPECT_NEAR(e.head_backward.flops, 2 * 2.0 * 2048 * 12288 * 6400, 1.0);
}

}  // namespace
}  // namespace scalescope::models
