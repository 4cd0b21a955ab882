// Tests for training dropout (ModelSpec attention_dropout / hidden_dropout): the attention kernel's dropout factor
// (from a profile's rows with dropout, else the H200 factors of validation/attention/dropout24), the hidden-dropout
// masks of the fused and eager stacks, the model keys and their Hugging Face import.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include "scalescope/models/compute_profile.hpp"
#include "scalescope/models/hf_import.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/memory.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "gpu_fixtures.hpp"

namespace scalescope::models {
namespace {

AttentionShape shape(std::int64_t b, std::int64_t heads, std::int64_t d, std::int64_t s, double dropout = 0.0) {
  AttentionShape a;
  a.batch = b;
  a.heads = heads;
  a.kv_heads = heads;
  a.head_dim = d;
  a.seq = s;
  a.dropout = dropout;
  return a;
}

AttentionSample row(const AttentionShape& sh, double fwd_ms, double bwd_ms) {
  AttentionSample a;
  a.shape = sh;
  a.forward = Seconds(fwd_ms * 1e-3);
  a.backward = Seconds(bwd_ms * 1e-3);
  return a;
}

ComputeModel with_rows(std::vector<AttentionSample> rows) {
  ComputeProfile p;
  p.source = "test.json";
  p.attention = std::move(rows);
  p.attention_source = "test rows";
  auto m = ComputeModel::with_profile(testing::h200_spec(), p);
  EXPECT_TRUE(m.has_value()) << m.error().str();
  return std::move(m).value();
}

double fwd_flops(const AttentionShape& a) { return a.forward_flops(); }

TEST(Dropout, AProfilesPairOfRowsGivesTheKernelsFactorAtEveryShape) {
  // One shape measured without dropout (1 ms / 2 ms) and with dropout 0.1 (1.5 ms / 2.2 ms): factor 1.5 forward,
  // 1.1 backward. The measured shape with dropout costs the dropout row's times; another shape (seq 4096, priced
  // from the one plain row's rate) costs its plain price x the factor, whatever its probability.
  const AttentionShape s2k = shape(4, 32, 128, 2048);
  const ComputeModel m = with_rows({row(s2k, 1.0, 2.0), row(shape(4, 32, 128, 2048, 0.1), 1.5, 2.2)});
  EXPECT_NEAR(m.attention_dropout_factor(AttentionBackend::flash, false), 1.5, 1e-12);
  EXPECT_NEAR(m.attention_dropout_factor(AttentionBackend::flash, true), 1.1, 1e-12);
  const double f = fwd_flops(s2k);
  EXPECT_NEAR(m.attention(shape(4, 32, 128, 2048, 0.1), false, Flops(f), Bytes(0)).time.value, 1.5e-3, 1e-12);
  EXPECT_NEAR(m.attention(shape(4, 32, 128, 2048, 0.1), true, Flops(2.5 * f), Bytes(0)).time.value, 2.2e-3, 1e-12);
  const AttentionShape s4k = shape(4, 32, 128, 4096), s4k_drop = shape(4, 32, 128, 4096, 0.3);
  const double f4 = fwd_flops(s4k);
  const double plain = m.attention(s4k, false, Flops(f4), Bytes(0)).time.value;
  EXPECT_NEAR(plain, 4e-3, 1e-12);  // 4x the FLOPs at the one row's rate
  EXPECT_NEAR(m.attention(s4k_drop, false, Flops(f4), Bytes(0)).time.value, 1.5 * plain, 1e-12);
  // The rows with dropout take no part in pricing plain shapes.
  EXPECT_NEAR(m.attention(s2k, false, Flops(f), Bytes(0)).time.value, 1e-3, 1e-12);
}

TEST(Dropout, WithoutPairsAKernelTakesTheFactorsMeasuredOnOneH200) {
  // validation/attention/dropout24/measured.json (one H200, torch 2.11 SDPA, dropout 0.1): the geometric mean of
  // t(0.1) / t(0) over its shapes, per backend and pass, read here from the measurement itself.
  std::ifstream in("validation/attention/dropout24/measured.json");
  ASSERT_TRUE(in) << "run from the source tree";
  const Json doc = Json::parse(in);
  std::map<std::string, const Json*> plain;
  auto key = [](const Json& r) {
    return r["backend"].get<std::string>() + "/" + std::to_string(r["batch"].get<int>()) + "/" +
           std::to_string(r["heads"].get<int>()) + "/" + std::to_string(r["seq"].get<int>());
  };
  for (const Json& r : doc["rows"])
    if (!r.contains("dropout")) plain[key(r)] = &r;
  std::map<std::string, std::array<double, 3>> acc;  // backend -> sum log fwd, sum log bwd, count
  for (const Json& r : doc["rows"]) {
    if (!r.contains("dropout")) continue;
    const Json& p = *plain.at(key(r));
    auto& a = acc[r["backend"].get<std::string>()];
    a[0] += std::log(r["fwd_s"].get<double>() / p["fwd_s"].get<double>());
    a[1] += std::log(r["bwd_s"].get<double>() / p["bwd_s"].get<double>());
    a[2] += 1;
  }
  ASSERT_EQ(acc.size(), 2u);
  const ComputeModel m = with_rows({row(shape(1, 16, 128, 1024), 0.2, 0.5)});
  for (const auto& [name, a] : acc) {
    const AttentionBackend b = attention_backend_named(name);
    // The built-in factors are these measurements rounded to 3 decimals.
    EXPECT_NEAR(m.attention_dropout_factor(b, false), std::exp(a[0] / a[2]), 6e-4) << name;
    EXPECT_NEAR(m.attention_dropout_factor(b, true), std::exp(a[1] / a[2]), 6e-4) << name;
  }
  // cuDNN's forward roughly doubles with dropout (2.04x), FlashAttention-2's grows a fifth.
  EXPECT_GT(m.attention_dropout_factor(AttentionBackend::cudnn, false), 2.0);
  EXPECT_LT(m.attention_dropout_factor(AttentionBackend::flash, false), 1.25);
}

ComputeModel datasheet_without_launch_cost() {
  ComputeAssumptions a;
  a.launch_overhead = Seconds(0);
  auto m = ComputeModel::datasheet(testing::h200_spec(), a);
  EXPECT_TRUE(m.has_value());
  return std::move(m).value();
}

// A GPT-2-medium-like layer: h 1024, 16 heads, seq 1024, mbs 8 (T = 8192 tokens), biases, learned positions.
ModelSpec gpt(double attention_dropout, double hidden_dropout) {
  ModelSpec s;
  s.name = "gpt";
  s.layers = 24;
  s.hidden = 1024;
  s.heads = 16;
  s.kv_heads = 16;
  s.ffn_hidden = 4096;
  s.bias = true;
  s.vocab = 50257;
  s.tied_embeddings = true;
  s.seq_len = 1024;
  s.positional = Positional::learned;
  s.attention_dropout = attention_dropout;
  s.hidden_dropout = hidden_dropout;
  return s;
}

Plan plan(int tp = 1, bool sp = false) {
  Plan p;
  p.tp = tp;
  p.sp = sp;
  p.mbs = 8;
  p.gbs = 8;
  return p;
}

TEST(Dropout, HiddenDropoutWritesAMaskForwardAndAppliesItBackwardAtBothResidualBranches) {
  // Fused stack (Megatron's bias-dropout-add): each of the two residual adds writes a 1-byte mask (+1 B per element
  // of T x Hs), and the backward of each branch reads the gradient and the mask and writes the gradient (5 B). T =
  // 8192, Hs = 1024 / tp with sp: tp 2 -> forward +2 x 8192 x 512, backward +2 x 5 x 8192 x 512 bytes.
  const ComputeModel m = datasheet_without_launch_cost();
  for (const auto& [tp, sp] : {std::pair{1, false}, std::pair{2, true}}) {
    const double t_hs = 8192.0 * 1024 / (sp ? tp : 1);
    const LayerCost plain = layer_cost(gpt(0.0, 0.0), plan(tp, sp), m);
    const LayerCost drop = layer_cost(gpt(0.0, 0.1), plan(tp, sp), m);
    EXPECT_NEAR(drop.forward.bytes.value - plain.forward.bytes.value, 2 * t_hs, 1.0) << tp;
    EXPECT_NEAR(drop.backward.bytes.value - plain.backward.bytes.value, 2 * 5 * t_hs, 1.0) << tp;
    EXPECT_EQ(drop.backward.kernels - plain.backward.kernels, 2) << tp;
    EXPECT_EQ(drop.forward.flops, plain.forward.flops);
  }
  // The embedding output's dropout, forward and backward: read 2, write 2 and the mask, 5 B per element of T x H.
  const EdgeCost e0 = edge_cost(gpt(0.0, 0.0), plan(), m), e1 = edge_cost(gpt(0.0, 0.1), plan(), m);
  EXPECT_NEAR(e1.embedding_forward.bytes.value - e0.embedding_forward.bytes.value, 5 * 8192.0 * 1024, 1.0);
  EXPECT_NEAR(e1.embedding_backward.bytes.value - e0.embedding_backward.bytes.value, 5 * 8192.0 * 1024, 1.0);
}

TEST(Dropout, AttentionDropoutSlowsTheFlashKernelsByTheFactorAndNothingElse) {
  // The layer's flash kernels (forward and backward) are the only ones that change: forward time grows by
  // (f_fwd - 1) x the forward kernel's time, backward by (f_bwd - 1) x the backward kernel's; no bytes or FLOPs.
  const ComputeModel m = datasheet_without_launch_cost();
  const LayerCost plain = layer_cost(gpt(0.0, 0.0), plan(), m);
  const LayerCost drop = layer_cost(gpt(0.1, 0.0), plan(), m);
  const AttentionShape a = shape(8, 16, 64, 1024);
  const double f = a.forward_flops();
  const double t_fwd = m.attention(a, false, Flops(f), Bytes(4.0 * 2 * 1024 * 8192)).time.value;
  const double t_bwd = m.attention(a, true, Flops(2.5 * f), Bytes(8.0 * 2 * 1024 * 8192)).time.value;
  EXPECT_NEAR(drop.forward.time.value - plain.forward.time.value,
              (m.attention_dropout_factor(AttentionBackend::flash, false) - 1.0) * t_fwd, 1e-12);
  EXPECT_NEAR(drop.backward.time.value - plain.backward.time.value,
              (m.attention_dropout_factor(AttentionBackend::flash, true) - 1.0) * t_bwd, 1e-12);
  EXPECT_EQ(drop.forward.bytes.value, plain.forward.bytes.value);
  EXPECT_EQ(drop.forward.flops, plain.forward.flops);
}

TEST(Dropout, UnfusedAttentionRunsItsDropoutKernelsForAModelsAttentionDropout) {
  // Without flash attention, a model's attention_dropout adds the dropout kernel on the scores (5 B per score
  // element forward, 5 backward: b heads s^2 = 8 x 16 x 1024^2), as the cost option `dropout` always did.
  const ComputeModel m = datasheet_without_launch_cost();
  CostOptions unfused;
  unfused.flash_attention = false;
  const LayerCost plain = layer_cost(gpt(0.0, 0.0), plan(), m, unfused);
  const LayerCost drop = layer_cost(gpt(0.1, 0.0), plan(), m, unfused);
  const double scores = 8.0 * 16 * 1024 * 1024;
  EXPECT_NEAR(drop.forward.bytes.value - plain.forward.bytes.value, 5 * scores, 1.0);
  EXPECT_NEAR(drop.backward.bytes.value - plain.backward.bytes.value, 5 * scores, 1.0);
}

TEST(Dropout, TheEagerStackPricesNnDropoutOnEachBranch) {
  // pytorch-eager: nn.Dropout on the two branch outputs (bf16 under autocast: read 2, write 2 + a 1-byte mask)
  // and its backward (read 2 + 1, write 2): +2 x 5 x T x H bytes each way.
  auto eager = load_stack("pytorch-eager");
  ASSERT_TRUE(eager.has_value()) << eager.error().str();
  ComputeModel m = datasheet_without_launch_cost();
  m.set_stack(*eager);
  Plan p = plan();
  p.precision = Precision::mixed;
  const LayerCost plain = layer_cost(gpt(0.0, 0.0), p, m);
  const LayerCost drop = layer_cost(gpt(0.0, 0.1), p, m);
  EXPECT_NEAR(drop.forward.bytes.value - plain.forward.bytes.value, 2 * 5 * 8192.0 * 1024, 1.0);
  EXPECT_NEAR(drop.backward.bytes.value - plain.backward.bytes.value, 2 * 5 * 8192.0 * 1024, 1.0);
}

TEST(Dropout, HiddenDropoutKeepsTheTwoMasksAsActivations) {
  // Korthikanti et al. 2022's 2sbh of dropout masks (1 byte per element, two branches) per layer.
  Plan p = plan();
  p.precision = Precision::mixed;
  MemoryOptions o;
  o.dropout = false;
  const MemoryBreakdown plain = memory_per_rank(gpt(0.0, 0.0), p, 0, o);
  const MemoryBreakdown drop = memory_per_rank(gpt(0.0, 0.1), p, 0, o);
  EXPECT_NEAR(drop.activations.value - plain.activations.value, 24 * 2 * 8192.0 * 1024, 1.0);
  // The first stage keeps the embedding output's mask too (T x H x 1 byte).
  EXPECT_NEAR(drop.embedding_logits.value - plain.embedding_logits.value, 8192.0 * 1024, 1.0);
}

TEST(Dropout, ModelKeysAreProbabilitiesBelowOne) {
  ModelSpec s = gpt(0.1, 0.2);
  const Json j = to_json(s);
  EXPECT_EQ(j.at("attention_dropout").get<double>(), 0.1);
  auto back = model_from_json(j, "m.json");
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(back->hidden_dropout, 0.2);
  Json bad = j;
  bad["hidden_dropout"] = 1.0;
  auto e = model_from_json(bad, "m.json");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().str().find("hidden_dropout"), std::string::npos) << e.error().str();
  EXPECT_NE(e.error().str().find("[0, 1)"), std::string::npos) << e.error().str();
  bad["hidden_dropout"] = -0.1;
  EXPECT_FALSE(model_from_json(bad, "m.json").has_value());
  EXPECT_FALSE(to_json(gpt(0.0, 0.0)).contains("attention_dropout"));
}

TEST(Dropout, HuggingFaceConfigsGiveTheirDropout) {
  // GPT-2's config.json: attn_pdrop 0.1, resid_pdrop 0.1; without the keys GPT2Config's defaults (0.1) apply.
  auto gpt2 = import_hf_config(std::string(SCALESCOPE_TEST_DATA) + "/hf/gpt2.json");
  ASSERT_TRUE(gpt2.has_value()) << gpt2.error().str();
  EXPECT_EQ(gpt2->attention_dropout, 0.1);
  EXPECT_EQ(gpt2->hidden_dropout, 0.1);
  const Json bare = {{"model_type", "gpt2"}, {"n_embd", 768}, {"n_layer", 2}, {"n_head", 12}, {"attn_pdrop", 0.0}};
  auto b = import_hf_config_json(bare, "config.json");
  ASSERT_TRUE(b.has_value()) << b.error().str();
  EXPECT_EQ(b->attention_dropout, 0.0);
  EXPECT_EQ(b->hidden_dropout, 0.1);
  // Llama: attention_dropout (0.0 in the published configs; LlamaConfig's default when absent).
  const Json llama = {{"model_type", "llama"}, {"hidden_size", 512}, {"intermediate_size", 1024},
                      {"num_attention_heads", 8}, {"num_hidden_layers", 2}, {"vocab_size", 1000},
                      {"attention_dropout", 0.05}};
  auto l = import_hf_config_json(llama, "config.json");
  ASSERT_TRUE(l.has_value()) << l.error().str();
  EXPECT_EQ(l->attention_dropout, 0.05);
  EXPECT_EQ(l->hidden_dropout, 0.0);
  Json one = llama;
  one["attention_dropout"] = 1.0;
  auto e = import_hf_config_json(one, "config.json");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().str().find("attention_dropout"), std::string::npos) << e.error().str();
}

}  // namespace
}  // namespace scalescope::models
