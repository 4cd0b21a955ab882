// Fine-tuning plans: LoRA (frozen base weights, rank-r adapters on chosen linear modules) and packed documents
// (attention inside each document). Expected values are counted by hand from the model's shapes (comments), not
// read back from the code under test.
#include <gtest/gtest.h>

#include "datasheet_rig.hpp"

#include <memory>
#include <string>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/counts.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/memory.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {
namespace {

// 4 layers, h 1024, 8 heads of 128 (kv 8), ffn 4096 gelu with biases and layernorm, vocabulary 32,000 untied.
ModelSpec small() {
  ModelSpec s;
  s.name = "small";
  s.layers = 4;
  s.hidden = 1024;
  s.heads = 8;
  s.kv_heads = 8;
  s.ffn_hidden = 4096;
  s.bias = true;
  s.vocab = 32000;
  s.seq_len = 1024;
  return s;
}

Plan plan(const std::string& text) {
  auto p = parse_plan(text);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().str());
  return p ? *p : Plan{};
}

std::unique_ptr<testing::DatasheetRig> fused_rig() {
  auto c = load_cluster_by_name_or_path("dgx-h100-8");
  EXPECT_TRUE(c.has_value());
  auto r = std::make_unique<testing::DatasheetRig>(std::move(c).value());
  auto fused = load_stack("fused");
  EXPECT_TRUE(fused.has_value());
  r->compute.set_stack(*fused);
  return r;
}

TEST(FineTuningPlan, KeysParseRoundTripAndNameTheirErrors) {
  const Plan p = plan("gbs=8,lora_rank=16,lora_modules=fc2+qkv,packed_doc_tokens=180");
  EXPECT_EQ(p.lora_rank, 16);
  EXPECT_EQ(p.lora_modules, kLoraQkv | kLoraFc2);
  EXPECT_EQ(p.packed_doc_tokens, 180);
  EXPECT_EQ(parse_plan(to_string(p)).value(), p);
  EXPECT_NE(to_string(p).find("lora_modules=qkv+fc2"), std::string::npos) << to_string(p);
  EXPECT_EQ(plan_from_json(to_json(p), "t.json").value(), p);
  EXPECT_EQ(to_string(plan("gbs=8")).find("lora"), std::string::npos);  // full training writes no LoRA keys
  for (const char* bad : {"gbs=8,lora_modules=qkv+mlp", "gbs=8,lora_modules=qkv+qkv", "gbs=8,lora_modules="}) {
    auto e = parse_plan(bad);
    ASSERT_FALSE(e.has_value()) << bad;
    EXPECT_NE(e.error().str().find("key 'lora_modules'"), std::string::npos) << e.error().str();
  }
}

TEST(FineTuningPlan, ValidateRejectsWhatIsNotModelled) {
  const ModelSpec m = small();
  auto reject = [&](const std::string& text, const std::string& key) {
    auto r = validate(plan(text), m, 8);
    ASSERT_FALSE(r.has_value()) << text;
    EXPECT_NE(r.error().str().find(key), std::string::npos) << r.error().str();
  };
  reject("gbs=2,dp=2,zero=3,lora_rank=16", "zero");
  reject("gbs=1,lora_rank=2048", "lora_rank");            // above hidden: not low rank
  reject("gbs=1,packed_doc_tokens=2048", "packed_doc_tokens");  // longer than the sequence
  reject("gbs=1,cp=2,packed_doc_tokens=256", "packed_doc_tokens");
  EXPECT_TRUE(validate(plan("gbs=2,dp=2,zero=1,lora_rank=16,packed_doc_tokens=256"), m, 8).has_value());
  ModelSpec moe = m;
  moe.moe.experts = 8;
  moe.moe.top_k = 2;
  moe.moe.ffn_hidden = 1024;
  auto r = validate(plan("gbs=1,lora_rank=16"), moe, 8);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("dense models only"), std::string::npos) << r.error().str();
}

// r (in + out) per module at the rank's widths, r = 16: tp 1: qkv 16 (1024 + 3072) = 65,536; proj 16 (1024 + 1024)
// = 32,768; fc1 16 (1024 + 4096) = 81,920; fc2 16 (4096 + 1024) = 81,920; total 262,144. tp 2: qkv 16 (1024 + 1536)
// = 40,960; proj 16 (512 + 1024) = 24,576; fc1 16 (1024 + 2048) = 49,152; fc2 49,152; total 163,840.
TEST(FineTuningParams, AdapterParametersPerLayerAndRank) {
  const ModelSpec m = small();
  EXPECT_DOUBLE_EQ(lora_params_per_layer(m, plan("gbs=1,lora_rank=16")), 262144.0);
  EXPECT_DOUBLE_EQ(lora_params_per_layer(m, plan("gbs=1,tp=2,lora_rank=16")), 163840.0);
  EXPECT_DOUBLE_EQ(lora_params_per_layer(m, plan("gbs=1,lora_rank=16,lora_modules=qkv")), 65536.0);
  EXPECT_DOUBLE_EQ(lora_params_per_layer(m, plan("gbs=1")), 0.0);
}

// Per token: weight matmuls 2 x 12,582,912 (4h^2 + 2hf) per layer; attention over a 256-token document
// 2 x 256 x 8 heads x (128 + 128) = 1,048,576 (full product, as Narayanan counts it); LM head 2 x 1024 x 32,000.
// Frozen: the backward has one matmul (input gradient) per weight matmul, attention and adapters twice.
TEST(FineTuningFlops, FrozenBaseAndPackedDocuments) {
  const ModelSpec m = small();
  const double matmul = 4 * 2.0 * 12582912.0, head = 2.0 * 1024 * 32000, adapters = 4 * 2.0 * 262144.0;
  const FlopsPerToken f = flops_per_token(m, {.attention_span = 256, .frozen_base = true, .adapter_params = 262144.0});
  EXPECT_DOUBLE_EQ(f.layer_attention, 1048576.0);
  EXPECT_DOUBLE_EQ(f.forward, matmul + 4 * 1048576.0 + head + adapters);
  EXPECT_DOUBLE_EQ(f.backward, matmul + head + 2.0 * (4 * 1048576.0 + adapters));
  const FlopsPerToken full = flops_per_token(m);
  EXPECT_DOUBLE_EQ(full.layer_attention, 2.0 * 1024 * 8 * 256);
  EXPECT_DOUBLE_EQ(full.backward, 2.0 * full.forward);
}

// The fused stack's layer: LoRA on qkv removes the four weight-gradient GEMMs (2 T x 12,582,912 FLOPs; T = 1,024
// tokens) and adds the adapter pair: forward A (16 x T x 1024) and B (3072 x T x 16): 2 T 16 (1024 + 3072); backward
// four GEMMs of that size (B dgrad and wgrad, A dgrad and wgrad): 4 T 16 (1024 + 3072); kernels: +3 forward (A, B,
// the add), -4 + 5 backward. Packing 1,024 tokens into documents of 256 leaves 4 causal attentions of 256: a quarter
// of the causal 1,024-token kernel's 4 x 8 x 1024^2 x 128 / 2 = 2,147,483,648 forward FLOPs.
TEST(FineTuningCosts, LoraDropsWeightGradientsAndPackingShrinksAttention) {
  const auto r = fused_rig();
  const ModelSpec m = small();
  const double T = 1024.0, adapter = 16.0 * (1024.0 + 3072.0);
  const LayerCost full = layer_cost(m, plan("gbs=1"), r->compute);
  const LayerCost lora = layer_cost(m, plan("gbs=1,lora_rank=16,lora_modules=qkv"), r->compute);
  EXPECT_NEAR(lora.forward.flops, full.forward.flops + 2.0 * T * adapter, 1.0);
  EXPECT_NEAR(lora.backward.flops, full.backward.flops - 2.0 * T * 12582912.0 + 4.0 * T * adapter, 1.0);
  EXPECT_EQ(lora.forward.kernels, full.forward.kernels + 3);
  EXPECT_EQ(lora.backward.kernels, full.backward.kernels + 1);
  EXPECT_LT(lora.backward.time.value, full.backward.time.value);
  const LayerCost packed = layer_cost(m, plan("gbs=1,packed_doc_tokens=256"), r->compute);
  EXPECT_NEAR(full.forward.flops - packed.forward.flops, 0.75 * 2147483648.0, 1.0);
  EXPECT_NEAR(full.backward.flops - packed.backward.flops, 2.5 * 0.75 * 2147483648.0, 1.0);
}

// Model states of the fused stack, mixed precision, one rank: weights 2 bytes per base parameter and per adapter
// parameter, fp32 main gradients (4) and Adam with the fp32 master (12) for the adapters only: 4 layers x 262,144.
TEST(FineTuningMemory, OnlyAdaptersHaveGradientsAndOptimizerStates) {
  const ModelSpec m = small();
  MemoryOptions o;
  const MemoryBreakdown full = memory_per_rank(m, plan("gbs=1"), 0, o);
  const MemoryBreakdown lora = memory_per_rank(m, plan("gbs=1,lora_rank=16"), 0, o);
  const double adapters = 4 * 262144.0;
  EXPECT_DOUBLE_EQ(lora.weights.value, full.weights.value + 2.0 * adapters);
  EXPECT_DOUBLE_EQ(lora.grads.value, 4.0 * adapters);
  EXPECT_DOUBLE_EQ(lora.optimizer.value, 12.0 * adapters);
  EXPECT_DOUBLE_EQ(full.grads.value, 4.0 * static_cast<double>(full.params));
}

// Distributed optimizer over 2 ranks: rank 0 reduce-scatters the adapters' fp32 gradients, 4 x 262,144 x 4 bytes,
// and nothing of the frozen weights.
TEST(FineTuningBuilder, OnlyAdapterGradientsAreReduced) {
  const auto r = fused_rig();
  auto g = build_task_graph(small(), plan("gbs=2,dp=2,zero=1,lora_rank=16"), r->cluster, r->compute);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  double reduced = 0.0;
  for (const Task& t : g->tasks())
    if (t.rank == 0 && t.kind == TaskKind::collective && t.category == TaskCategory::zero_comm &&
        g->name(t.name).find("reduce-scatter") != std::string::npos)
      reduced += t.amount;
  EXPECT_NEAR(reduced, 4.0 * 262144.0 * 4.0, 1.0);
}

// A stack whose rows have every weight gradient cannot price LoRA: predict says so and names the property.
TEST(FineTuningPredict, StacksWithoutFineTuningRowsAreRefused) {
  auto c = load_cluster_by_name_or_path("dgx-h100-8");
  ASSERT_TRUE(c.has_value());
  testing::DatasheetRig r(std::move(c).value());
  auto eager = load_stack("pytorch-eager");
  ASSERT_TRUE(eager.has_value());
  r.compute.set_stack(*eager);
  auto p = predict(small(), plan("gbs=1,lora_rank=16"), r.cluster, r.coll, r.compute, {});
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().str().find("fine_tuning"), std::string::npos) << p.error().str();
  const auto f = fused_rig();
  auto ok = predict(small(), plan("gbs=1,lora_rank=16,packed_doc_tokens=256"), f->cluster, f->coll, f->compute, {});
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  EXPECT_GT(ok->mfu, 0.0);
  EXPECT_LT(ok->mfu, 1.0);
}

}  // namespace
}  // namespace scalescope::models
