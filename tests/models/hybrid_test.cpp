// Tests for hybrid models (ModelSpec::hybrid_pattern: Mamba-2, attention, MLP and MoE layers of one block each;
// docs/hybrid.md) against hand-derived numbers: Nemotron 3 Nano's exact parameter counts against the model card,
// the HF nemotron_h import, the errors of bad hybrid keys and plans, FLOPs per token, the kernels of a Mamba-2 layer
// (FLOPs of its projections, bytes of its memory-bound kernels), the mean layer the builder prices, the memory of
// a Mamba-2 stage, the TP collectives of single-block layers and the stacks that refuse hybrid models.
#include <gtest/gtest.h>

#include "model_fixtures.hpp"

#include "datasheet_rig.hpp"

#include <string>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/models/counts.hpp"
#include "scalescope/models/hf_import.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/layer_kernels.hpp"
#include "scalescope/models/memory.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {
namespace {

using testing::catalog;
using testing::plan;

using Rig = testing::DatasheetRig;

/// A small hybrid model: h 1024, 8 heads of 128 (8 KV heads), MLP 4096 (squared ReLU: two matrices), Mamba-2 of
/// 32 heads x 64 (d_i 2048), 4 groups, state 128, 4 conv taps, chunks of 128; vocab 32000, sequence 1024.
/// With 'E' layers: 8 experts of 512, top-2.
ModelSpec small_hybrid(const std::string& pattern) {
  ModelSpec s;
  s.name = "hybrid-" + pattern;
  s.layers = static_cast<int>(pattern.size());
  s.hidden = 1024;
  s.heads = 8;
  s.kv_heads = 8;
  s.ffn_hidden = 4096;
  s.ffn = FfnKind::gelu;
  s.norm = NormKind::rmsnorm;
  s.vocab = 32000;
  s.seq_len = 1024;
  s.positional = Positional::none;
  s.hybrid_pattern = pattern;
  if (pattern.find('M') != std::string::npos) s.mamba = MambaSpec{32, 64, 128, 4, 4, 128};
  if (pattern.find('E') != std::string::npos) s.moe = MoeSpec{8, 2, 512};
  auto checked = check_model(s);
  EXPECT_TRUE(checked.has_value()) << (checked ? "" : checked.error().str());
  return checked ? *checked : s;
}

// Nemotron 3 Nano (h 2688, V 131072 untied; Mamba-2 64 heads x 64 = d_i 4096, G 8, N 128, 4 taps; attention 32
// heads x 128, 2 KV heads; 128 experts of 1856, top-6, one shared expert of 3712, squared ReLU), by hand:
//   Mamba-2 layer: in_proj 2688 x (2 x 4096 + 2 x 8 x 128 + 64 = 10304) = 27,697,152; out_proj 4096 x 2688 =
//     11,010,048; conv1d (4096 + 2048) x (4 + 1) = 30,720, dt_bias + A_log + D 3 x 64 = 192, gated norm 4096;
//     norm 2688: 38,744,896.
//   attention layer: qkv 2688 x (4096 + 2 x 256) = 12,386,304, out 4096 x 2688 = 11,010,048, norm 2688: 23,399,040.
//   MoE layer: router 2688 x 128 + 128 bias = 344,192; expert 2 x 2688 x 1856 = 9,977,856 (x 128 =
//     1,277,165,568); shared 2 x 2688 x 3712 = 19,955,712; norm 2688: 1,297,468,160.
//   total = 23 x 38,744,896 + 6 x 23,399,040 + 23 x 1,297,468,160 + 2 x 131072 x 2688 + 2688
//         = 31,577,940,288 (model card: 31.6B);
//   active: an MoE layer runs 6 experts: 1,297,468,160 - 122 x 9,977,856 = 80,169,728;
//         23 x 38,744,896 + 6 x 23,399,040 + 23 x 80,169,728 + 704,643,072 + 2688 = 3,580,076,352
//         (model card: 3.6B with embeddings; 3.23B without the input embedding, "3.2B active").
TEST(HybridCounts, Nemotron3NanoIs31_6BTotal3_6BActive) {
  const ModelSpec m = catalog("nemotron-3-nano-30b-a3b");
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.mamba_layers, 23);
  EXPECT_EQ(c.attention_layers, 6);
  EXPECT_EQ(c.moe_layers, 23);
  EXPECT_EQ(c.mlp_layers, 0);
  EXPECT_EQ(c.dense_layers(), 0);
  EXPECT_EQ(c.mamba_layer.total(), 38'744'896);
  EXPECT_EQ(c.attention_layer.total(), 23'399'040);
  EXPECT_EQ(c.moe_layer.total(), 1'297'468'160);
  EXPECT_EQ(c.total(), 31'577'940'288);
  EXPECT_EQ(c.active(), 3'580'076'352);
}

TEST(HybridImport, NemotronHConfigIsTheCatalogEntry) {
  auto m = import_hf_config(std::string(SCALESCOPE_TEST_DATA) + "/hf/nemotron_3_nano_30b_a3b.json");
  ASSERT_TRUE(m.has_value()) << m.error().str();
  ModelSpec want = catalog("nemotron-3-nano-30b-a3b");
  want.name = m->name;
  want.source = m->source;
  want.seq_len = m->seq_len;  // the config's 262,144 positions; the catalog keeps the recipe's 8192
  EXPECT_EQ(m->seq_len, 262144);
  EXPECT_TRUE(m->moe.router_bias);
  m->moe.router_fp32 = want.moe.router_fp32;  // the recipe's router dtype is not in the HF config
  EXPECT_TRUE(m->composed_norm);              // transformers writes NemotronH's RMSNorm out
  m->composed_norm = want.composed_norm;
  EXPECT_EQ(to_json(*m), to_json(want));
  EXPECT_EQ(count_params(*m).total(), 31'577'940'288);
}

TEST(HybridImport, LayerTypeListsAndUnmodelledKeysAreNamed) {
  Json j = read_json_file(std::string(SCALESCOPE_TEST_DATA) + "/hf/nemotron_3_nano_30b_a3b.json").value();
  j.erase("hybrid_override_pattern");
  j["layers_block_type"] = Json::array({"mamba", "moe", "linear_attention", "attention", "full_attention", "mlp"});
  j["num_hidden_layers"] = 6;
  j["intermediate_size"] = 5376;
  auto m = import_hf_config_json(j, "config.json");
  ASSERT_TRUE(m.has_value()) << m.error().str();
  EXPECT_EQ(m->hybrid_pattern, "MEM**-");
  EXPECT_EQ(m->ffn_hidden, 5376);
  const auto fails = [&](const char* key, const Json& value, const std::string& says) {
    Json bad = j;
    bad[key] = value;
    auto r = import_hf_config_json(bad, "config.json");
    ASSERT_FALSE(r.has_value()) << key;
    EXPECT_NE(r.error().str().find(says), std::string::npos) << r.error().str();
  };
  fails("num_hidden_layers", 7, "expected 6 (the layer pattern's length)");
  fails("moe_latent_size", 1024, "LatentMoE");
  fails("mlp_hidden_act", "silu", "relu2");
  fails("mamba_proj_bias", true, "mamba_proj_bias");
}

TEST(HybridSpec, BadHybridKeysNameTheField) {
  const auto error_of = [](ModelSpec s) {
    auto r = check_model(std::move(s), "m.json");
    return r ? std::string() : r.error().str();
  };
  ModelSpec s = small_hybrid("M*-M");
  EXPECT_EQ(error_of(s), "");
  ModelSpec t = s;
  t.hybrid_pattern = "M*-";
  EXPECT_NE(error_of(t).find("$.hybrid_pattern: expected one character per layer (layers=4), got 3"),
            std::string::npos)
      << error_of(t);
  t.hybrid_pattern = "M*xM";
  EXPECT_NE(error_of(t).find("got 'x' at layer 2"), std::string::npos) << error_of(t);
  t = s;
  t.mamba = MambaSpec{};
  EXPECT_NE(error_of(t).find("$.mamba_heads: 'M' layers need"), std::string::npos) << error_of(t);
  t = s;
  t.mamba.groups = 5;
  EXPECT_NE(error_of(t).find("$.mamba_groups: expected a divisor of mamba_heads=32"), std::string::npos) << error_of(t);
  t = s;
  t.hybrid_pattern = "M*EM";
  EXPECT_NE(error_of(t).find("$.experts: 'E' layers need experts"), std::string::npos) << error_of(t);
  t = s;
  t.moe.experts = 8;
  t.moe.top_k = 2;
  t.moe.ffn_hidden = 512;
  EXPECT_NE(error_of(t).find("$.hybrid_pattern: experts are given but hybrid_pattern has no 'E' layer"),
            std::string::npos)
      << error_of(t);
  t.hybrid_pattern = "M*EM";
  t.moe.first_dense_layers = 1;
  EXPECT_NE(error_of(t).find("$.first_dense_layers: a hybrid model places its MoE layers"), std::string::npos)
      << error_of(t);
  ModelSpec plain = catalog("llama3-8b");
  plain.mamba = MambaSpec{32, 64, 128, 4, 4, 128};
  EXPECT_NE(error_of(plain).find("need a hybrid_pattern"), std::string::npos) << error_of(plain);
}

// Counts stay exact: 16,384 Mamba-2 layers of hidden 2^20 with 65,536 heads of 64 (d_i = 2^22) would hold at least
// layers x h x in_proj = 16384 x 2^20 x (2 x 2^22 + 2 x 128 + 65536) = 1.4e17 parameters, above 2^53.
TEST(HybridSpec, ParametersBeyond2To53AreRefused) {
  ModelSpec s = small_hybrid("M");
  s.layers = 16384;
  s.hybrid_pattern = std::string(16384, 'M');
  s.hidden = 1 << 20;
  s.heads = 8192;
  s.kv_heads = 8192;
  s.mamba = MambaSpec{65536, 64, 128, 1, 4, 128};
  auto r = check_model(s, "big.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("exceed 2^53"), std::string::npos) << r.error().str();
  s.layers = 1;
  s.hybrid_pattern = "M";
  EXPECT_TRUE(check_model(s, "one-layer.json").has_value());  // 1 layer: 8.8e12, well inside
}

TEST(HybridSpec, NativeJsonRoundTrips) {
  const ModelSpec m = catalog("nemotron-3-nano-30b-a3b");
  auto back = model_from_json(to_json(m), "round-trip");
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(to_json(*back), to_json(m));
  EXPECT_EQ(back->layer_kind(0), LayerKind::mamba);
  EXPECT_EQ(back->layer_kind(1), LayerKind::moe);
  EXPECT_EQ(back->layer_kind(5), LayerKind::attention);
  EXPECT_TRUE(back->is_moe_layer(1));
  EXPECT_FALSE(back->is_moe_layer(0));
  EXPECT_FALSE(back->has_attention(0));
  EXPECT_TRUE(back->has_attention(5));
}

// Forward FLOPs per token, by hand (seq 8192, scores counted over the whole square as flops_per_token's default):
//   Mamba-2 layer: matmuls 2 x (27,697,152 + 11,010,048) = 77,414,400; scan 64 (4 x 128 x 64 + 128 x 64)
//     + 8 x 128 x 128 = 2,752,512;
//   attention layer: matmuls 2 x 23,396,352 = 46,792,704; scores 2 x 8192 x 32 x (128 + 128) = 134,217,728;
//   MoE layer: 2 x (router 344,192 + shared 19,955,712 + 6 x 9,977,856) = 160,334,080; LM head 2 x 2688 x 131072;
//   forward = 23 (77,414,400 + 2,752,512 + 160,334,080) + 6 (46,792,704 + 134,217,728) + 704,643,072
//           = 7,322,228,480; backward 2x.
TEST(HybridFlops, OnlyAttentionLayersHaveScoresAndMambaLayersScan) {
  const FlopsPerToken f = flops_per_token(catalog("nemotron-3-nano-30b-a3b"));
  EXPECT_EQ(f.attention_layers, 6);
  EXPECT_DOUBLE_EQ(f.mamba_layer_matmul, 77'414'400.0);
  EXPECT_DOUBLE_EQ(f.mamba_layer_scan, 2'752'512.0);
  EXPECT_DOUBLE_EQ(f.forward, 7'322'228'480.0);
  EXPECT_DOUBLE_EQ(f.backward, 2.0 * 7'322'228'480.0);
}

// One Mamba-2 layer of small_hybrid, mbs 2 (T = 2048 tokens), tp 1, bf16, in the built-in fused stack:
//   GEMMs: in_proj 5152 x T x 1024 (d_z = 2 x 2048 + 2 x 4 x 128 + 32) and out_proj 1024 x T x 2048:
//     2 T (5152 + 2048) 1024 = 30,198,988,800 FLOPs.
//   Memory-bound bytes per token (mamba_ssm's kernels' reads and writes; a kernel's program per head loads its group's
//   B, C and C B^T itself, fp32 chunk states of d_i N / Q = 2048 elements per token): norm 4h = 4096; conv1d 4 d_x =
//   4 x 3072 = 12,288; chunk cumsum 10 n = 320; chunk state 2 d_i + 2 n N + 8 n + 4 d_i N / Q = 4096 + 8192 + 256 +
//   8192 = 20,736; state passing 6 x 2048 = 12,288; C B^T (per group) 4 G N + 4 G Q = 2048 + 2048; chunk scan
//   4 n Q + 4 d_i + 2 n N + 2 x 2048 + 8 n = 16,384 + 8192 + 8192 + 4096 + 256 = 37,120; gated norm 6 d_i = 12,288;
//   residual add 6h = 6144: 109,376 B per token.
TEST(HybridCosts, AMambaLayerIsItsProjectionsAndTheScansBytes) {
  const Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  const ModelSpec m = small_hybrid("MMMM");
  const LayerCost c = layer_cost(m, plan("dp=1,mbs=2,gbs=2,precision=bf16"), r.compute);
  EXPECT_DOUBLE_EQ(c.forward.flops, 30'198'988'800.0);
  EXPECT_DOUBLE_EQ(c.forward.bytes.value, 109'376.0 * 2048);
  EXPECT_DOUBLE_EQ(c.forward.by_kind[1].value, 0.0);  // no attention kernel
  EXPECT_EQ(c.forward.kernels, 11);                   // norm, 2 GEMMs, 7 memory-bound kernels, residual add
  // Backward: dgrad and wgrad of both projections.
  EXPECT_DOUBLE_EQ(c.backward.flops, 2.0 * 30'198'988'800.0);
}

TEST(HybridCosts, NonMoeLayersArePricedAsTheirMeanAndMoeLayersHaveNoAttention) {
  const Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  const Plan p = plan("dp=1,mbs=1,gbs=1,precision=bf16");
  const LayerCost mamba = layer_cost(small_hybrid("MMMM"), p, r.compute);
  const LayerCost attention = layer_cost(small_hybrid("****"), p, r.compute);
  const LayerCost mlp = layer_cost(small_hybrid("----"), p, r.compute);
  // "M**-": one Mamba-2, two attention and one MLP layer: the mean is (M + 2 * + -) / 4.
  const LayerCost mean = layer_cost(small_hybrid("M**-"), p, r.compute);
  EXPECT_NEAR(mean.forward.time.value,
              (mamba.forward.time.value + 2.0 * attention.forward.time.value + mlp.forward.time.value) / 4.0, 1e-15);
  EXPECT_DOUBLE_EQ(mean.backward.flops, (mamba.backward.flops + 2.0 * attention.backward.flops + mlp.backward.flops) / 4.0);
  // An attention layer has the attention kernel and no MLP; an MLP layer (T = 1024) only fc1 4096 x T x 1024 and
  // fc2 1024 x T x 4096.
  EXPECT_GT(attention.forward.by_kind[1].value, 0.0);
  EXPECT_DOUBLE_EQ(mlp.forward.flops, 2.0 * 1024 * (4096.0 * 1024 + 1024.0 * 4096));
  EXPECT_DOUBLE_EQ(mlp.forward.by_kind[1].value, 0.0);
  // A hybrid MoE layer: the router, the experts and the MoE block's norm, no attention kernel.
  const ModelSpec moe = small_hybrid("MEME");
  const LayerCost e = layer_cost(moe, plan("dp=1,mbs=1,gbs=1,precision=bf16,ep=1"), r.compute, {}, true);
  EXPECT_DOUBLE_EQ(e.forward.by_kind[1].value, 0.0);
  // router 8 x T x 1024 and two experts' fc1 512 x 1024 and fc2 per token: 2 T (8 + 2 (512 + 512)) 1024.
  EXPECT_DOUBLE_EQ(e.forward.flops, 2.0 * 1024 * (8.0 + 2.0 * (512 + 512)) * 1024);
}

// Activations of a Mamba-2 layer kept for the backward (fused stack, no recompute, bf16): its block's norm input and
// in_proj input, 2 x 2h per token (half a transformer layer's 8h), in_proj's output 2 d_z, the scan output and the
// gated norm's output 2 x 2 d_i, the norm's rstd 4 G: 1024 x 4 + 2 x 5152 + 4 x 2048 + 16 = 22,608 B per token.
TEST(HybridMemory, AMambaStageKeepsItsBlocksTensors) {
  const ModelSpec m = small_hybrid("MMMM");
  MemoryOptions o;
  o.dropout = false;  // (Megatron's default hidden dropout would keep a 1-byte mask per residual branch: + h)
  const MemoryBreakdown b = memory_per_rank(m, plan("dp=1,mbs=2,gbs=2,precision=bf16"), 0, o);
  EXPECT_DOUBLE_EQ(b.activations.value, 4.0 * 22'608.0 * 2048);
}

TEST(HybridPlan, TpSplitsMambaHeadsAndGroupsAndCpIsRefused) {
  const ModelSpec m = small_hybrid("M*-M");
  auto ok = validate(plan("tp=4,sp=1,dp=2,mbs=1,gbs=2"), m, 8);
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  auto groups = validate(plan("tp=8,sp=1,dp=1,mbs=1,gbs=1"), m, 8);
  ASSERT_FALSE(groups.has_value());
  EXPECT_NE(groups.error().str().find("mamba_groups"), std::string::npos) << groups.error().str();
  auto cp = validate(plan("cp=2,dp=4,mbs=1,gbs=4"), m, 8);
  ASSERT_FALSE(cp.has_value());
  EXPECT_NE(cp.error().str().find("context parallelism in a hybrid"), std::string::npos) << cp.error().str();
  auto staged = validate(plan("pp=2,dp=4,mbs=1,gbs=8"), m, 8);
  ASSERT_TRUE(staged.has_value()) << staged.error().str();
  bool noted = false;
  for (const std::string& n : staged->notes) noted = noted || n.find("mean") != std::string::npos;
  EXPECT_TRUE(noted);
}

// With tp = 2 and sequence parallelism every single-block layer gathers its input once and reduce-scatters its
// output once per forward (a transformer layer twice): 4 layers x 1 micro-batch = 4 of each in the forward.
TEST(HybridBuilder, ASingleBlockLayerHasOneTpPair) {
  const Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  BuildOptions o;
  o.per_layer_tasks = true;
  o.symmetric = true;
  auto g = build_task_graph(small_hybrid("M*-M"), plan("tp=2,sp=1,dp=1,mbs=1,gbs=1"), r.cluster, r.compute, o);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  int gathers = 0, scatters = 0;
  for (TaskId t = 0; t < g->size(); ++t) {
    const Task& k = g->task(t);
    if (k.category != TaskCategory::sp_comm || k.labels.layer < 0) continue;
    if (k.op == CollOp::all_gather) ++gathers;
    if (k.op == CollOp::reduce_scatter) ++scatters;
  }
  // forward 4 + 4 and backward 4 + 4 (the backward gathers the output gradient and scatters the input's)
  EXPECT_EQ(gathers, 8);
  EXPECT_EQ(scatters, 8);
}

TEST(HybridPredict, AStackWithoutHybridRowsIsRefusedAndFusedPricesNano) {
  Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  const ModelSpec m = catalog("nemotron-3-nano-30b-a3b");
  auto p = predict(m, plan("dp=8,ep=8,zero=1,mbs=1,gbs=16,precision=fp8"), r.cluster, r.coll, r.compute);
  ASSERT_TRUE(p.has_value()) << p.error().str();
  EXPECT_GT(p->mfu, 0.0);
  EXPECT_LT(p->mfu, 1.0);
  EXPECT_DOUBLE_EQ(p->model_flops, flops_per_token(m).total() * 16 * 8192);
  r.compute.set_stack(load_stack("pytorch-eager").value());
  auto eager = predict(m, plan("dp=8,ep=8,zero=1,mbs=1,gbs=16"), r.cluster, r.coll, r.compute);
  ASSERT_FALSE(eager.has_value());
  EXPECT_NE(eager.error().str().find("properties"), std::string::npos) << eager.error().str();
}

// simulate --kernels lists the stack rows of one layer of each kind: their times add up to the layer's cost, row by
// row as layer_cost charges them.
TEST(LayerKernels, EachKindsRowsAddUpToItsLayerCost) {
  const Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  const Plan p = plan("dp=1,mbs=1,gbs=1,precision=bf16");
  const ModelSpec nano = catalog("nemotron-3-nano-30b-a3b");
  const std::vector<LayerKindUse> kinds = layer_kinds_of(nano);
  ASSERT_EQ(kinds.size(), 3u);
  EXPECT_EQ(kinds[0].label, "Mamba-2 layer");
  EXPECT_EQ(kinds[0].layers, 23);
  EXPECT_EQ(kinds[1].layers, 6);
  EXPECT_TRUE(kinds[2].moe);
  EXPECT_EQ(kinds[2].layers, 23);
  for (const std::string& pattern : {std::string("MMMM"), std::string("****")}) {
    const ModelSpec m = small_hybrid(pattern);
    const LayerCost c = layer_cost(m, p, r.compute);
    double fwd = 0.0, bwd = 0.0;
    for (const KernelLine& k : layer_kernel_lines(m, p, r.compute, {}, m.layer_kind(0)))
      (k.phase == "forward" ? fwd : bwd) += k.time.value;
    EXPECT_NEAR(fwd, c.forward.time.value, 1e-12 * fwd) << pattern;
    EXPECT_NEAR(bwd, c.backward.time.value, 1e-12 * bwd) << pattern;
  }
  const ModelSpec llama = catalog("llama3-8b");
  const std::vector<LayerKindUse> one = layer_kinds_of(llama);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].layers, 32);
  double fwd = 0.0;
  for (const KernelLine& k : layer_kernel_lines(llama, p, r.compute, {}, LayerKind::transformer))
    if (k.phase == "forward") fwd += k.time.value;
  EXPECT_NEAR(fwd, layer_cost(llama, p, r.compute).forward.time.value, 1e-12 * fwd);
}

// A profile's measured Mamba-2 kernel groups (`mamba` rows) set the level of the fused stack's rows of each group: at
// the measured shape a group's rows' GPU time (before the launch floor) adds up to the measured time, at another shape to it times the rows' own change
// (their modelled time there over their modelled time at the measured shape); unmeasured groups keep the model.
TEST(HybridProfile, MeasuredKernelGroupsScaleTheirRows) {
  const GpuSpec gpu = load_cluster_by_name_or_path("dgx-h100-8").value().gpu_spec();
  const ModelSpec m = small_hybrid("MMMM");  // 32 heads of 64, 4 groups, state 128, chunks of 128
  const Plan at = plan("dp=1,mbs=2,gbs=2,precision=bf16"), twice = plan("dp=1,mbs=4,gbs=4,precision=bf16");
  const auto group_time = [&](const ComputeModel& cm, const Plan& p, const char* group) {
    double t = 0.0;
    const StackProfile& st = cm.stack_for(m, p);
    for (const KernelLine& k : layer_kernel_lines(m, p, cm, {}, LayerKind::mamba)) {
      for (StackPhase ph : {StackPhase::layer_forward, StackPhase::layer_backward})
        for (const StackRow& r : st.phases[static_cast<std::size_t>(ph)])
          if (r.name == k.name && r.group && to_string(*r.group) == group) t += k.device.value;
    }
    return t;
  };
  const ComputeModel plain = ComputeModel::datasheet(gpu).value();
  ComputeProfile prof;
  prof.source = "test";
  MambaSample x;
  x.batch = 2;
  x.seq = 1024;
  x.heads = 32;
  x.head_dim = 64;
  x.groups = 4;
  x.state = 128;
  x.chunk = 128;
  x.seconds = {300e-6, 900e-6, 0.0, 0.0};  // the gated norm not measured
  prof.mamba = {x};
  prof.mamba_source = "test rows";
  const ComputeModel measured = ComputeModel::with_profile(gpu, prof).value();
  EXPECT_NEAR(group_time(measured, at, "ssd_forward"), 300e-6, 1e-12);
  EXPECT_NEAR(group_time(measured, at, "ssd_backward"), 900e-6, 1e-12);
  EXPECT_DOUBLE_EQ(group_time(measured, at, "gated_norm_forward"), group_time(plain, at, "gated_norm_forward"));
  // Twice the tokens: the measured level times the rows' own growth.
  const double growth = group_time(plain, twice, "ssd_forward") / group_time(plain, at, "ssd_forward");
  EXPECT_NEAR(group_time(measured, twice, "ssd_forward"), 300e-6 * growth, 1e-12);
  for (const KernelLine& k : layer_kernel_lines(m, at, measured, {}, LayerKind::mamba)) {
    if (k.name == "ssd chunk scan") {
      EXPECT_EQ(k.provenance, Provenance::measured);
    }
  }
}

TEST(HybridProfile, AMambaMeasurementBecomesAProfileSection) {
  const Json measurement = Json::parse(R"({"meta": {"gpu": "NVIDIA H200", "mamba_ssm": "2.3.2.post1", "triton": "3.6.0",
      "torch": "2.11.0", "timing": "queued behind a GPU sleep"},
    "rows": [{"name": "nano", "batch": 1, "seq": 8192, "heads": 64, "head_dim": 64, "groups": 8, "state": 128,
              "chunk": 128, "ssd_forward_s": 3.3e-4, "ssd_backward_s": 1.2e-3, "gated_norm_forward_s": 5.3e-5,
              "gated_norm_backward_s": 2.5e-4, "host_ssd_forward_s": 9e-4}]})");
  auto section = make_mamba_section(measurement, "m.json", "");
  ASSERT_TRUE(section.has_value()) << section.error().str();
  EXPECT_EQ((*section)["rows"][0]["label"], "nano");
  EXPECT_EQ((*section)["rows"][0].count("host_ssd_forward_s"), 0u);
  EXPECT_NE((*section)["source"].get<std::string>().find("NVIDIA H200 (mamba_ssm 2.3.2.post1"), std::string::npos);
  const Json profile = {{"schema", "scalescope.calibration/1"}};
  auto with = with_profile_section(profile, "mamba", *section, "p.json");
  ASSERT_TRUE(with.has_value()) << with.error().str();
  auto back = compute_profile_from_json(*with, "p.json");
  ASSERT_TRUE(back.has_value()) << back.error().str();
  ASSERT_EQ(back->mamba.size(), 1u);
  EXPECT_DOUBLE_EQ(back->mamba[0].seconds[1], 1.2e-3);
  Json bad = *with;
  bad["mamba"]["rows"][0]["groups"] = 5;
  auto refused = compute_profile_from_json(bad, "p.json");
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().str().find("$.mamba.rows[0].groups: expected a divisor of heads=64"), std::string::npos)
      << refused.error().str();
}

}  // namespace
}  // namespace scalescope::models
