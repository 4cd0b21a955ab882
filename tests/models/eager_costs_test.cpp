// Tests for the built-in pytorch-eager stack's byte table (models/stacks/pytorch-eager.json): per-layer totals
// counted by hand from validation/harness/model.py for llama-1b, the FSDP2 bf16 variant, and the fused AdamW step.
#include <gtest/gtest.h>

#include "gpu_fixtures.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {
namespace {

// validation/models/llama-1b.json: 16 layers, h 2048, 32 heads, 8 kv heads (q 2048, kv 512), ffn 8192 swiglu.
ModelSpec llama1b() {
  ModelSpec s;
  s.name = "llama-1b";
  s.layers = 16;
  s.hidden = 2048;
  s.heads = 32;
  s.kv_heads = 8;
  s.ffn_hidden = 8192;
  s.ffn = FfnKind::swiglu;
  s.norm = NormKind::rmsnorm;
  s.bias = false;
  s.vocab = 32000;
  s.seq_len = 4096;
  s.positional = Positional::rope;
  return s;
}

Plan plan(int zero, int tp = 1) {
  Plan p;
  p.tp = tp;
  p.dp = zero >= 2 ? 2 : 1;
  p.zero = zero;
  p.mbs = 1;
  p.gbs = 16;
  return p;
}

struct Totals {
  double fwd = 0, bwd = 0;
};
/// Bytes of the byte-table rows (memory rows with bandwidth_factor) of two phases of the pytorch-eager stack.
Totals sum(StackPhase fwd, StackPhase bwd, const Plan& p) {
  const auto stack = load_stack("pytorch-eager").value();
  const std::vector<double> v = stack->bind(llama1b(), p, true, false, 128);
  auto phase = [&](StackPhase ph) {
    double b = 0.0;
    for (const StackRow& r : stack->phases[static_cast<std::size_t>(ph)]) {
      if (r.kind != RowKind::memory || !r.bandwidth_factor) continue;
      if (!r.when.empty() && r.when.eval(v) == 0.0) continue;
      b += r.bytes.eval(v);
    }
    return b;
  };
  return {phase(fwd), phase(bwd)};
}
Totals layer(const Plan& p) { return sum(StackPhase::layer_forward, StackPhase::layer_backward, p); }

// Linear weights of one layer: h(q + 2kv) + qh + 3fh = 2048*3072 + 2048*2048 + 3*8192*2048 = 60,817,408.
constexpr double kLayerWeights = 60817408.0;
// RoPE cos/sin casts per micro-batch: 2 tensors (q, k) x 2 (cos, sin) x s d x (4 + 2) = 6,291,456 bytes.
constexpr double kRopeTables = 2.0 * 2.0 * 4096 * 64 * 6;

TEST(EagerCosts, AutocastLayerBytesMatchTheHandCountFromTheHarness) {
  // Per token, forward: norms 2*2*4*2048 = 32768; residual 2*(8+2)*2048 = 40960; input casts 5*6*2048 = 61440;
  // rope 10*2*(2048+512) = 51200; swiglu 5*2*8192 = 81920 -> 268,288 B; x 4096 tokens, + rope tables,
  // + 6 B per weight (cast to bf16).
  // Backward: norms 2*5*4*2048 = 81920; residual 2*(6+12)*2048 = 73728; casts 5*6*2048 + 3*12*2048 = 135168;
  // rope 51200; layout copies 2*2*2560 = 10240; swiglu 9*2*8192 = 147456 -> 499,712 B per token, + 18 B per weight.
  const Totals t = layer(plan(0));
  EXPECT_DOUBLE_EQ(t.fwd, 268288.0 * 4096 + kRopeTables + 6 * kLayerWeights);
  EXPECT_DOUBLE_EQ(t.bwd, 499712.0 * 4096 + 18 * kLayerWeights);
}

TEST(EagerCosts, Fsdp2Bf16LayerHasNoCastsAndABf16ResidualStream) {
  // zero=3 on 2 shards: a = 2, no casts. Forward per token: norms 2*2*2*2048 = 16384; residual
  // 2*(4+2)*2048 = 24576; rope 51200; swiglu 81920 -> 174,080. Weights, per parameter: one all-gather =
  // copy-in cast of the fp32 shard (6/2) + copy-out (4) = 7 B.
  // Backward: norms 2*5*2*2048 = 40960; residual 2*(0+6)*2048 = 24576; grad sums 3*3*2*2048 = 36864;
  // rope 51200; layout 10240; swiglu 147456 -> 311,296 per token. Weights: the second all-gather (7) +
  // reduce-scatter copy-in to fp32 (6) + accumulation into the sharded fp32 grad (12/2) = 19 B.
  const Totals t = layer(plan(3));
  EXPECT_DOUBLE_EQ(t.fwd, 174080.0 * 4096 + kRopeTables + 7 * kLayerWeights);
  EXPECT_DOUBLE_EQ(t.bwd, 311296.0 * 4096 + 19 * kLayerWeights);
}

TEST(EagerCosts, Fsdp2WithoutReshardAfterForwardGathersOncePerMicroBatch) {
  // zero=2 is FSDP2 with reshard_after_forward=False in the harness: the same bf16 activations as zero=3,
  // weights 7 B forward (one gather) and 6 + 12/2 = 12 B backward (no second gather).
  const Totals z2 = layer(plan(2));
  const Totals z3 = layer(plan(3));
  EXPECT_DOUBLE_EQ(z2.fwd, z3.fwd);
  EXPECT_DOUBLE_EQ(z3.bwd - z2.bwd, 7 * kLayerWeights);
}

TEST(EagerCosts, TensorParallelShardsOnlyTheHeadAndFfnTerms) {
  // tp = 2: H terms stay (norms, residual, casts replicated, no sequence parallel); Q, K, F and the weights
  // halve. Forward per token: 32768 + 40960 + 61440 + 10*2*1280 + 5*2*4096 = 201,728. The cos/sin casts
  // are s x d per call whatever the head count: 6,291,456 B stay.
  const Totals t = layer(plan(0, 2));
  EXPECT_DOUBLE_EQ(t.fwd, 201728.0 * 4096 + kRopeTables + 6 * kLayerWeights / 2);
}

TEST(EagerCosts, HeadCrossEntropyIsFp32OverTheVocabulary) {
  // Per token: final norm 2*4*2048 = 16384 fwd, 5*4*2048 = 40960 bwd; input cast 6*2048 = 12288 each way;
  // cross entropy fwd (2+4+8)*32000 = 448,000, bwd (4+12+4+2)*32000 = 704,000; head weight 32000*2048 x 6 / 18.
  const Totals t = sum(StackPhase::head_forward, StackPhase::head_backward, plan(0));
  EXPECT_DOUBLE_EQ(t.fwd, (16384.0 + 12288 + 448000) * 4096 + 6.0 * 32000 * 2048);
  EXPECT_DOUBLE_EQ(t.bwd, (40960.0 + 12288 + 704000) * 4096 + 18.0 * 32000 * 2048);
}

TEST(EagerCosts, EagerOptimizerIsFusedAdamWAt28BytesPerParameter) {
  // 1e9 parameters x 28 B at the datasheet elementwise bandwidth 4800e9 * 0.7 (assumed) = 8.333 ms, one kernel.
  auto m = ComputeModel::datasheet(testing::h200_spec());
  ASSERT_TRUE(m.has_value());
  m->set_stack(load_stack("pytorch-eager").value());
  const PhaseCost c = optimizer_cost(1e9, llama1b(), plan(0), *m);
  EXPECT_EQ(c.kernels, 1);
  EXPECT_NEAR(c.time.value, 28e9 / (4800e9 * 0.7), 1e-12);
}

TEST(EagerCosts, BandwidthFactorSlowsOnlyTheRowsThatAskForIt) {
  // 1 GB at 4800e9 * 0.7 (assumed elementwise) x 0.5 = 1.68e12 B/s -> 0.595 ms, provenance fitted when the factor
  // was fitted (weaker of assumed and fitted: assumed); a plain memory-bound kernel stays at 4800e9 * 0.7 -> 0.298 ms.
  auto m = ComputeModel::datasheet(testing::h200_spec());
  ASSERT_TRUE(m.has_value());
  EXPECT_NEAR(m->memory_bound(Bytes(1e9), 0.5, true).time.value, 1e9 / (4800e9 * 0.7 * 0.5), 1e-15);
  EXPECT_EQ(m->memory_bound(Bytes(1e9), 0.5, true).provenance, Provenance::assumed);
  EXPECT_NEAR(m->memory_bound(Bytes(1e9)).time.value, 1e9 / (4800e9 * 0.7), 1e-15);
}

TEST(EagerCosts, StackNamesLoadAndUnknownOnesAreInputErrors) {
  EXPECT_EQ(load_stack("pytorch-eager-autocast").value()->name, "pytorch-eager");
  EXPECT_EQ(load_stack("megatron").value()->name, "fused");
  auto bad = load_stack("jax");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().exit_code(), 2);
}

}  // namespace
}  // namespace scalescope::models
