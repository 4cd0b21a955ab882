// Tests for FLOPs per token (forward, backward, recompute) and memory-bound bytes per layer.
#include <gtest/gtest.h>

#include "scalescope/models/counts.hpp"

namespace scalescope::models {
namespace {

ModelSpec catalog(const char* name) {
  auto m = load_model_by_name_or_path(name);
  EXPECT_TRUE(m.has_value()) << m.error().str();
  return m.has_value() ? *m : ModelSpec{};
}

TEST(Flops, FullRecomputeMatchesNarayananEquation3) {
  // Narayanan et al. 2021 eq. (3): F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) per iteration with
  // full recompute, i.e. per token 96 l h^2 (1 + s/(6h) + V/(16 l h)).
  for (const char* name :
       {"gpt3-175b", "megatron-gpt-1.7b", "megatron-gpt-530b", "megatron-gpt-1t"}) {
    const ModelSpec m = catalog(name);
    const double l = m.layers, h = m.hidden, s = m.seq_len, v = static_cast<double>(m.vocab);
    const double eq3 = 96 * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
    const FlopsPerToken f = flops_per_token(m, {.recompute = Recompute::full});
    EXPECT_NEAR(f.total() / eq3, 1.0, 1e-12) << name;
  }
}

TEST(Flops, GptForwardPerTokenIs24h2Plus4shPerLayerPlusLogits) {
  const ModelSpec m = catalog("gpt3-175b");
  const double h = 12288, s = 2048, v = 51200, l = 96;
  const FlopsPerToken f = flops_per_token(m);
  // Narayanan et al. 2021 sec. 5.1: a layer's forward is 24 B s h^2 + 4 B s^2 h; the logits 2 B s h
  // V.
  EXPECT_EQ(f.layer_matmul, 24 * h * h);
  EXPECT_EQ(f.layer_attention, 4 * s * h);
  EXPECT_EQ(f.lm_head, 2 * h * v);
  EXPECT_EQ(f.forward, l * (24 * h * h + 4 * s * h) + 2 * h * v);
  EXPECT_EQ(f.backward, 2 * f.forward);
  EXPECT_EQ(f.recompute, 0);
}

TEST(Flops, SixNWithoutAttentionScores) {
  // Without attention scores and recompute, training is 6 FLOPs per matmul weight per token (the
  // "6N" rule). Llama-2-7B matmul weights: 32 layers x (4*4096^2 + 3*4096*11008) = 32 x 202,375,168
  // = 6,476,005,376, plus the untied head 32000*4096 = 131,072,000 -> N = 6,607,077,376.
  const FlopsPerToken f = flops_per_token(catalog("llama2-7b"), {.attention_scores = false});
  EXPECT_EQ(f.total(), 6.0 * 6'607'077'376.0);
}

TEST(Flops, SelectiveRecomputeAddsOnlyTheAttentionCore) {
  const ModelSpec m = catalog("llama3-8b");
  const double s = 8192, q = 4096, l = 32;
  const FlopsPerToken none = flops_per_token(m);
  const FlopsPerToken sel = flops_per_token(m, {.recompute = Recompute::selective});
  const FlopsPerToken full = flops_per_token(m, {.recompute = Recompute::full});
  // Selective: + 4 s q per layer (QK^T and AV recomputed); full: + a whole forward of the layers.
  EXPECT_EQ(sel.total() - none.total(), l * 4 * s * q);
  EXPECT_EQ(full.total() - none.total(), none.forward - none.lm_head);
  // Causal halving and an explicit sequence length change only the score term: 4 * 4096 * q / 2.
  const FlopsPerToken causal = flops_per_token(m, {.causal = true, .seq_len = 4096});
  EXPECT_EQ(causal.layer_attention, 4.0 * 4096 * q / 2);
  EXPECT_EQ(causal.layer_matmul, none.layer_matmul);
}

TEST(Flops, GroupedQueryAttentionShrinksOnlyKvProjections) {
  const ModelSpec m = catalog("llama3-8b");
  // Matmul weights per layer: qkv 4096*(4096 + 2*1024) + o 4096^2 + MLP 3*4096*14336
  // = 25,165,824 + 16,777,216 + 176,160,768 = 218,103,808 -> 2x per token.
  EXPECT_EQ(flops_per_token(m).layer_matmul, 2.0 * 218'103'808);
}

TEST(LayerIo, BytesPerOperationFollowTheFormulas) {
  const ModelSpec m =
      catalog("llama3-8b");  // h = 4096, q = 4096, k = 1024, f = 14336, swiglu, rope
  const std::int64_t tokens = 1000;
  const double e = 2, t = tokens;
  const LayerIoBytes io = layer_io_bytes(m, tokens);
  EXPECT_EQ(io.forward.norms.value, 2 * 2 * 4096 * e * t);
  EXPECT_EQ(io.backward.norms.value, 2 * 3 * 4096 * e * t);
  EXPECT_EQ(io.forward.activation.value, 3 * 14336 * e * t);  // read gate, up; write silu(gate)*up
  EXPECT_EQ(io.backward.activation.value, 5 * 14336 * e * t);
  EXPECT_EQ(io.forward.residual.value, 2 * 3 * 4096 * e * t);
  EXPECT_EQ(io.forward.rope.value, 2 * (4096 + 1024) * e * t);
  EXPECT_EQ(io.forward.attention.value, (2 * 4096 + 2 * 1024) * e * t);
  EXPECT_EQ(io.backward.attention.value, (4 * 4096 + 4 * 1024) * e * t);
  // tp = 4 divides the q, k, f terms; the h terms only with sequence parallelism.
  const LayerIoBytes tp4 = layer_io_bytes(m, tokens, 4, false);
  EXPECT_EQ(tp4.forward.norms.value, io.forward.norms.value);
  EXPECT_EQ(tp4.forward.activation.value, io.forward.activation.value / 4);
  const LayerIoBytes sp4 = layer_io_bytes(m, tokens, 4, true);
  EXPECT_EQ(sp4.forward.norms.value, io.forward.norms.value / 4);
}

TEST(LayerIo, GeluModelWithLearnedPositionsHasNoRopeTraffic) {
  const ModelSpec m = catalog("gpt3-175b");
  const LayerIoBytes io = layer_io_bytes(m, 10);
  EXPECT_EQ(io.forward.rope.value, 0);
  EXPECT_EQ(io.forward.activation.value, 2 * 49152 * 2.0 * 10);  // read and write f = 4h
}

}  // namespace
}  // namespace scalescope::models
