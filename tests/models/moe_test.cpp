// Tests for mixture-of-experts models and expert parallelism against hand-derived numbers: exact parameter
// counts (total and active) checked against the published figures, HF config import of the MoE model types,
// the MoE-layer rule, FLOPs per token, plan validation of ep / etp, per-rank parameters, what the builder
// emits (token all-to-alls over the EP group, expert gradients over the expert-data-parallel group) and the
// memory of expert states under ZeRO.
#include <gtest/gtest.h>

#include "model_fixtures.hpp"

#include "datasheet_rig.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/counts.hpp"
#include "scalescope/models/hf_import.hpp"
#include "scalescope/models/memory.hpp"
#include "scalescope/models/moe_costs.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope::models {
namespace {

using testing::catalog;
using testing::plan;

ModelSpec hf(const std::string& file) {
  auto m = import_hf_config(std::string(SCALESCOPE_TEST_DATA) + "/hf/" + file);
  EXPECT_TRUE(m.has_value()) << (m ? "" : m.error().str());
  return m ? *m : ModelSpec{};
}

// Per-layer counts by hand (h hidden, n heads of d, k KV heads, e one expert's width, E experts, V vocab):
//   attention h(nd + 2kd) + nd h; SwiGLU expert 3 h e; router h E; norms 2h (+ 2d qk norms);
//   total = layers x (attention + norms + router + E experts) + V h (embedding) + V h (untied head) + h.
//   active = the same with top_k experts in place of E.
TEST(MoeCounts, Mixtral8x7bIs46_7BTotal12_9BActive) {
  // h 4096, 32 heads, 8 KV heads, d 128, e 14336, E 8, top 2, V 32000, 32 layers:
  //   attention 4096 x 6144 + 4096 x 4096 = 41,943,040; expert 3 x 4096 x 14336 = 176,160,768;
  //   layer 41,943,040 + 8,192 + 32,768 + 8 x 176,160,768 = 1,451,270,144;
  //   total 32 x 1,451,270,144 + 2 x 131,072,000 + 4,096 = 46,702,792,704 (published: 46.7B);
  //   active 32 x (41,943,040 + 8,192 + 32,768 + 2 x 176,160,768) + 262,148,096 = 32 x 394,305,536
  //   + 262,148,096 = 12,879,925,248 (published: 12.9B).
  const ParamCounts c = count_params(catalog("mixtral-8x7b"));
  EXPECT_EQ(c.moe_layers, 32);
  EXPECT_EQ(c.moe_layer.total(), 1'451'270'144);
  EXPECT_EQ(c.total(), 46'702'792'704);
  EXPECT_EQ(c.active(), 12'879'925'248);
}

TEST(MoeCounts, Mixtral8x22bIs141BTotal39BActive) {
  // h 6144, 48 heads, 8 KV, e 16384, 56 layers, V 32768: attention 6144 x 7168 + 6144 x 6144 = 88,080,384;
  // expert 3 x 6144 x 16384 = 301,989,888; layer 88,080,384 + 12,288 + 49,152 + 8 experts = 2,504,060,928;
  // total 56 x 2,504,060,928 + 2 x 201,326,592 + 6,144 = 140,630,071,296 (published 141B);
  // active 56 x 692,121,600 + 402,659,328 = 39,161,468,928 (published 39B).
  const ParamCounts c = count_params(catalog("mixtral-8x22b"));
  EXPECT_EQ(c.total(), 140'630'071'296);
  EXPECT_EQ(c.active(), 39'161'468'928);
}

TEST(MoeCounts, DeepSeekV3Is671BTotal37BActive) {
  // MLA (h 7168, 128 heads, r_q 1536, r_kv 512, d_nope 128, d_rope 64, d_v 128):
  //   q_down 7168 x 1536 + q_up 1536 x 128 x 192 + kv_down 7168 x 576 + kv_up 512 x 128 x 256
  //   + out 16384 x 7168 = 11,010,048 + 37,748,736 + 4,128,768 + 16,777,216 + 117,440,512 = 187,105,280;
  //   norms 2 x 7168 + 1536 + 512 = 16,384.
  // 3 dense layers (ffn 18432): 187,105,280 + 16,384 + 3 x 7168 x 18432 = 583,483,392.
  // 58 MoE layers: router 7168 x 256 + 256 bias; 256 routed + 1 shared expert of 3 x 7168 x 2048 = 44,040,192:
  //   187,105,280 + 16,384 + 1,835,264 + 257 x 44,040,192 = 11,507,286,272.
  // total 3 x 583,483,392 + 58 x 11,507,286,272 + 2 x 926,679,040 + 7,168 = 671,026,419,200 (published 671B);
  // active: 9 experts instead of 257: 58 x 585,318,656 + ... = 37,552,297,472 (published 37B).
  const ModelSpec m = catalog("deepseek-v3");
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.moe_layers, 58);
  EXPECT_EQ(c.layer.total(), 583'483'392);
  EXPECT_EQ(c.moe_layer.total(), 11'507'286'272);
  EXPECT_EQ(c.total(), 671'026'419'200);
  EXPECT_EQ(c.active(), 37'552'297'472);
}

TEST(MoeCounts, Qwen3MoeModelsMatchTheirNames) {
  // Qwen3-30B-A3B: h 2048, 32 heads, 4 KV, d 128, qk norms 2 x 128, E 128 of 768, top 8, 48 layers,
  //   V 151936: attention 2048 x 5120 + 4096 x 2048 = 18,874,368; expert 4,718,592;
  //   layer 18,874,368 + 4,096 + 256 + 262,144 + 128 x 4,718,592 = 623,120,640;
  //   total 48 x 623,120,640 + 2 x 311,164,928 + 2,048 = 30,532,122,624 (30.5B); active 3,353,032,704 (3.3B).
  const ParamCounts small = count_params(catalog("qwen3-30b-a3b"));
  EXPECT_EQ(small.total(), 30'532'122'624);
  EXPECT_EQ(small.active(), 3'353'032'704);
  // Qwen3-235B-A22B (h 4096, 64 heads, e 1536, 94 layers): 235,093,634,560 (235B) and 22,190,763,520 (22B).
  const ParamCounts big = count_params(catalog("qwen3-235b-a22b"));
  EXPECT_EQ(big.total(), 235'093'634'560);
  EXPECT_EQ(big.active(), 22'190'763'520);
}

TEST(MoeImport, MixtralConfigIsTheCatalogEntry) {
  ModelSpec a = hf("mixtral_8x7b.json"), b = catalog("mixtral-8x7b");
  EXPECT_EQ(a.seq_len, 32768);  // max_position_embeddings; the catalog trains at 4096
  a.name = b.name;
  a.source = b.source;
  a.seq_len = b.seq_len;
  a.composed_norm = b.composed_norm;  // transformers' MixtralRMSNorm is written out; the catalog names no code
  EXPECT_EQ(to_json(a), to_json(b));
}

TEST(MoeImport, DeepSeekV3ConfigIsTheCatalogEntry) {
  ModelSpec a = hf("deepseek_v3.json"), b = catalog("deepseek-v3");
  EXPECT_TRUE(a.mla.enabled());
  EXPECT_TRUE(a.moe.router_bias);  // topk_method noaux_tc
  EXPECT_EQ(count_params(a).total(), count_params(b).total());
  a.name = b.name;
  a.source = b.source;
  a.seq_len = b.seq_len;
  a.moe.router_fp32 = b.moe.router_fp32;  // HF says nothing of the router's training dtype
  a.composed_norm = b.composed_norm;        // transformers' DeepseekV3RMSNorm is written out
  EXPECT_EQ(to_json(a), to_json(b));
}

TEST(MoeImport, DeepSeekV2LiteHasNoQueryLatent) {
  // q_lora_rank null: a plain query projection h x 16 x 192. By hand: attention 2048 x 3072 + 2048 x 576
  // + 512 x 16 x 256 + 2048 x 2048 = 13,762,560; 1 dense layer of ffn 10944, 26 MoE layers of 64 experts
  // (1408) + 2 shared, router 2048 x 64; V 102400: total 15,706,484,224 (published: 15.7B).
  const ModelSpec m = hf("deepseek_v2_lite.json");
  EXPECT_EQ(m.mla.q_lora_rank, 0);
  EXPECT_EQ(m.moe.first_dense_layers, 1);
  EXPECT_EQ(m.moe.shared_experts, 2);
  EXPECT_EQ(count_params(m).total(), 15'706'484'224);
}

TEST(MoeImport, Qwen2MoeHasAGatedSharedExpert) {
  // Qwen1.5-MoE-A2.7B: attention with qkv bias 4 x 2048^2 + 3 x 2048 = 16,783,360; 60 experts of 1408, one
  // shared expert of 5632 with its 2048-weight gate, router 2048 x 60, 24 layers, V 151936 untied:
  // total 14,315,784,192 (published 14.3B), active (4 experts) 2,689,173,504 (2.7B).
  const ModelSpec m = hf("qwen1_5_moe_a2_7b.json");
  EXPECT_TRUE(m.moe.shared_expert_gate);
  EXPECT_EQ(m.moe.shared_width(), 5632);
  EXPECT_EQ(count_params(m).total(), 14'315'784'192);
  EXPECT_EQ(count_params(m).active(), 2'689'173'504);
}

TEST(MoeImport, Qwen3MoeConfigMatchesTheCatalog) {
  EXPECT_EQ(count_params(hf("qwen3_30b_a3b.json")).total(), count_params(catalog("qwen3-30b-a3b")).total());
  EXPECT_TRUE(hf("qwen3_30b_a3b.json").qk_norm);
}

TEST(MoeSpec, LayerRuleFollowsFirstDenseFreqAndOffset) {
  ModelSpec m = catalog("deepseek-v3");
  EXPECT_FALSE(m.is_moe_layer(2));
  EXPECT_TRUE(m.is_moe_layer(3));
  EXPECT_EQ(m.moe_layers_in(0, 5), 2);
  // Llama 4 Maverick / Qwen decoder_sparse_step 2: layers 1, 3, 5, ... ((i + 1) % 2 == 0).
  m.moe.first_dense_layers = 0;
  m.moe.layer_freq = 2;
  m.moe.layer_offset = 1;
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_EQ(m.moe_layers(), 30);  // 61 layers: 1, 3, ..., 59
}

TEST(MoeSpec, BadMoeKeysNameTheField) {
  Json j = to_json(catalog("mixtral-8x7b"));
  j["top_k"] = 9;
  auto bad = model_from_json(j, "m.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("$.top_k"), std::string::npos) << bad.error().str();
  Json dense = to_json(catalog("llama3-8b"));
  dense["shared_experts"] = 1;
  auto orphan = model_from_json(dense, "d.json");
  ASSERT_FALSE(orphan.has_value());
  EXPECT_NE(orphan.error().str().find("need experts"), std::string::npos) << orphan.error().str();
  Json mla = to_json(catalog("deepseek-v3"));
  mla["kv_heads"] = 8;
  auto gqa = model_from_json(mla, "v3.json");
  ASSERT_FALSE(gqa.has_value());
  EXPECT_NE(gqa.error().str().find("$.kv_heads"), std::string::npos) << gqa.error().str();
  Json none = to_json(catalog("mixtral-8x7b"));
  none["first_dense_layers"] = 31;
  none["moe_layer_freq"] = 2;
  none["moe_layer_offset"] = 1;  // layer 31 would need (31 - 31) % 2 == 1
  auto empty = model_from_json(none, "n.json");
  ASSERT_FALSE(empty.has_value());
  EXPECT_NE(empty.error().str().find("no layer is an MoE layer"), std::string::npos) << empty.error().str();
}

TEST(MoeFlops, ATokenRunsItsTopKExperts) {
  // Mixtral 8x7B per token, seq 4096, full s x s scores: layer matmuls 2 x (41,943,040 + 32,768 router
  // + 2 x 176,160,768) = 788,594,688; attention 4 x 4096 x 4096 = 67,108,864; LM head 2 x 4096 x 32000.
  // forward = 32 x (788,594,688 + 67,108,864) + 262,144,000 = 27,644,657,664.
  const FlopsPerToken f = flops_per_token(catalog("mixtral-8x7b"));
  EXPECT_EQ(f.moe_layer_matmul, 788'594'688.0);
  EXPECT_EQ(f.forward, 27'644'657'664.0);
  // MLA: QK^T over d_qk = 192, AV over d_v = 128: 2 x 4096 x 128 x (192 + 128) = 335,544,320 per token.
  EXPECT_EQ(flops_per_token(catalog("deepseek-v3")).layer_attention, 335'544'320.0);
}

TEST(MoePlan, ExpertParallelismRulesNameTheKey) {
  const ModelSpec mix = catalog("mixtral-8x7b"), dense = catalog("llama3-8b");
  const auto rejected = [](const Plan& p, const ModelSpec& m, const std::string& what) {
    auto v = validate(p, m, 0);
    ASSERT_FALSE(v.has_value()) << to_string(p);
    EXPECT_NE(v.error().str().find(what), std::string::npos) << v.error().str();
  };
  rejected(plan("dp=8,ep=8,gbs=8"), dense, "needs a mixture-of-experts model");
  rejected(plan("dp=8,ep=3,gbs=8"), mix, "ep=3 does not divide experts=8");
  rejected(plan("dp=2,ep=4,gbs=8"), mix, "does not divide tp*cp*dp=2");
  rejected(plan("tp=2,dp=4,ep=8,gbs=8"), mix, "needs sp=true");
  rejected(plan("dp=8,ep=8,moe_imbalance=0.5,gbs=8"), mix, "moe_imbalance");
  auto ok = validate(plan("tp=2,sp=1,dp=4,ep=8,gbs=8"), mix, 8);  // ep spans the TP ranks: 8 | 2 x 4
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  EXPECT_NE(ok->notes.back().find("balanced"), std::string::npos);
  // The text and JSON forms round-trip, and dense plans print no MoE key.
  const Plan p = plan("dp=8,ep=4,etp=2,moe_dispatcher=allgather,moe_imbalance=1.25,moe_a2a_overlap=1,gbs=8");
  EXPECT_EQ(plan(to_string(p)), p);
  EXPECT_EQ(to_string(plan("dp=8,gbs=8")).find("ep="), std::string::npos);
}

TEST(MoeParams, ARankHoldsItsShareOfTheExperts) {
  // Mixtral, tp 1, ep 8: per MoE layer attention 41,943,040 + norms 8,192 + router 32,768 + 1 expert
  // 176,160,768 = 218,144,768. tp 2 (sp), ep 4: attention / 2 = 20,971,520 + 8,192 + 32,768 + 2 experts
  // 352,321,536 = 373,334,016.
  const ModelSpec m = catalog("mixtral-8x7b");
  const PipelineLayout one = even_layout(m, 1);
  const StageParams ep8 = params_per_tp_rank(m, one, 0, 1, 128, 8, 1);
  EXPECT_EQ(ep8.moe_layer, 218'144'768);
  EXPECT_EQ(ep8.experts, 32 * 176'160'768LL);
  const StageParams tp2 = params_per_tp_rank(m, one, 0, 2, 128, 4, 1);
  EXPECT_EQ(tp2.moe_layer, 373'334'016);
  // etp 2 halves each expert: 2 experts x 176,160,768 / 2.
  EXPECT_EQ(params_per_tp_rank(m, one, 0, 2, 128, 4, 2).moe_layer_experts, 176'160'768);
}

TEST(MoeDispatch, FlexCrossesTheNetworkOncePerDestinationNode) {
  // alltoall: every expert copy, top_k = 8.
  ModelSpec v3 = catalog("deepseek-v3");
  EXPECT_DOUBLE_EQ(moe_dispatch_copies(v3, plan("dp=64,ep=64,gbs=64"), 8), 8.0);
  // flex, EP 64 over 8 nodes of 8, node-limited to 4 of 8 groups (= nodes): D = 4 (1 - (3/4)^8)
  //   = 4 x (1 - 6,561/65,536) = 3.599548..., the copies an all-to-all of the same inter-node bytes carries.
  EXPECT_NEAR(moe_dispatch_copies(v3, plan("dp=64,ep=64,moe_dispatcher=flex,gbs=64"), 8), 4.0 * (1.0 - 6561.0 / 65536.0),
              1e-12);
  // No group limit, EP 16 over 2 nodes: D = 2 (1 - (1/2)^8) = 1.9921875.
  ModelSpec q = catalog("qwen3-30b-a3b");
  EXPECT_DOUBLE_EQ(moe_dispatch_copies(q, plan("dp=16,ep=16,moe_dispatcher=flex,gbs=16"), 8), 1.9921875);
  // Inside one node the distinct destination ranks: EP 8, k 8: 8 (1 - (7/8)^8) = 5.251...
  EXPECT_NEAR(moe_dispatch_copies(q, plan("dp=8,ep=8,moe_dispatcher=flex,gbs=8"), 8), 8.0 * (1.0 - std::pow(7.0 / 8.0, 8)),
              1e-12);
  // Dense models exchange nothing.
  EXPECT_EQ(moe_dispatch_copies(catalog("llama3-8b"), plan("dp=8,gbs=8"), 8), 0.0);
}

using Rig = testing::DatasheetRig;

ModelSpec mixtral_layers(int layers) {
  ModelSpec m = catalog("mixtral-8x7b");
  m.layers = layers;
  return m;
}

/// Sum of collective bytes by task name on rank 0.
std::map<std::string, double> comm_bytes(const TaskGraph& g, int rank = 0) {
  std::map<std::string, double> out;
  for (TaskId id = 0; id < g.size(); ++id) {
    const Task& t = g.task(id);
    if (t.kind == TaskKind::collective && t.rank == rank) out[g.task_name(id)] += t.amount;
  }
  return out;
}

TEST(MoeBuilder, TokensGoOverTheEpGroupAndExpertGradsOverTheirOwnGroup) {
  const Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  const ModelSpec m = mixtral_layers(2);
  // dp 8, ep 8, mbs 1, seq 4096: per MoE layer and pass one dispatch and one combine all-to-all of
  // Tr top_k h 2 = 4096 x 2 x 4096 x 2 = 67,108,864 B; 2 layers x 2 passes -> 4 x 67,108,864 B each way.
  auto g = build_task_graph(m, plan("dp=8,ep=8,mbs=1,gbs=8"), r.cluster, r.compute);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  const auto bytes = comm_bytes(*g);
  EXPECT_DOUBLE_EQ(bytes.at("ep dispatch all-to-all"), 4 * 67'108'864.0);
  EXPECT_DOUBLE_EQ(bytes.at("ep combine all-to-all"), 4 * 67'108'864.0);
  for (TaskId id = 0; id < g->size(); ++id) {
    const Task& t = g->task(id);
    if (t.category != TaskCategory::ep_comm) continue;
    EXPECT_EQ(t.op, CollOp::alltoall);
    EXPECT_EQ(g->group(t.a).size(), 8u);
  }
  // edp = 8 / 8 = 1: the experts' gradients are not reduced; the dense ones are (fp32, 4 B): embedding
  // 131,072,000 + head 131,076,096 + 2 x (41,943,040 + 8,192 + 32,768) = 346,116,096 params.
  EXPECT_EQ(bytes.count("dp all-reduce expert grads"), 0u);
  EXPECT_DOUBLE_EQ(bytes.at("dp all-reduce grads"), 4.0 * 346'116'096);
  // ep 4: edp = 2; each rank holds 2 experts per layer: 2 x 2 x 176,160,768 x 4 B over 2-rank groups.
  auto g4 = build_task_graph(m, plan("dp=8,ep=4,mbs=1,gbs=8"), r.cluster, r.compute);
  ASSERT_TRUE(g4.has_value()) << g4.error().str();
  EXPECT_DOUBLE_EQ(comm_bytes(*g4).at("dp all-reduce expert grads"), 4.0 * 4 * 176'160'768);
  for (TaskId id = 0; id < g4->size(); ++id) {
    if (g4->task_name(id) == "dp all-reduce expert grads") {
      EXPECT_EQ(g4->group(g4->task(id).a).size(), 2u);
    }
    if (g4->task(id).category == TaskCategory::ep_comm) {
      EXPECT_EQ(g4->group(g4->task(id).a).size(), 4u);
    }
  }
}

TEST(MoeBuilder, EveryRankAtFlowFidelityMatchesItsGroups) {
  // Every rank present: each EP collective instance must be posted by all of its group's ranks with the same
  // bytes (TaskGraph::validate checks it), and the run must finish.
  const Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  BuildOptions o;
  o.symmetric = false;
  auto g = build_task_graph(mixtral_layers(2), plan("tp=2,sp=1,dp=4,ep=4,etp=2,zero=1,mbs=1,gbs=8"), r.cluster,
                            r.compute, o);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  auto ok = g->validate();
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  SimOptions so;
  so.fidelity = Fidelity::flow;
  auto s = simulate(*g, r.cluster, r.coll, so);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  EXPECT_GT(s->breakdown[BreakdownPart::ep_comm].value, 0.0);
}

TEST(MoeMemory, ExpertStatesShardOverTheExpertDataParallelGroup) {
  // Mixtral with 2 layers, zero 1, dp 8, ep 8 (edp 1): the rank holds P = 346,116,096 dense + 2 x 176,160,768
  // expert parameters. Adam states (12 B) of the dense part are sharded 8 ways, the experts' not at all:
  // 346,116,096 x 12 / 8 + 352,321,536 x 12 = 519,174,144 + 4,227,858,432 = 4,747,032,576 B.
  const ModelSpec m = mixtral_layers(2);
  const MemoryBreakdown b = memory_per_rank(m, plan("dp=8,ep=8,zero=1,mbs=1,gbs=8"), 0);
  EXPECT_DOUBLE_EQ(b.optimizer.value, 4'747'032'576.0);
  // ep 4 (edp 2): the experts' states are halved: 346,116,096 x 1.5 + 704,643,072 x 12 / 2.
  const MemoryBreakdown b4 = memory_per_rank(m, plan("dp=8,ep=4,zero=1,mbs=1,gbs=8"), 0);
  EXPECT_DOUBLE_EQ(b4.optimizer.value, 519'174'144.0 + 704'643'072.0 * 6.0);
}

TEST(MoePredict, AllToAllIsExposedUnlessOverlappedAndMfuCountsActiveParams) {
  const Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  const ModelSpec m = mixtral_layers(4);
  auto p = predict(m, plan("dp=8,ep=8,mbs=1,gbs=16"), r.cluster, r.coll, r.compute);
  ASSERT_TRUE(p.has_value()) << p.error().str();
  EXPECT_GT(p->sim.breakdown[BreakdownPart::ep_comm].value, 0.0);
  EXPECT_GT(p->mfu, 0.0);
  EXPECT_LT(p->mfu, 1.0);
  // model FLOPs: active parameters (flops_per_token) x tokens.
  EXPECT_DOUBLE_EQ(p->model_flops, flops_per_token(m).total() * 16 * 4096);
  auto hidden = predict(m, plan("dp=8,ep=8,mbs=1,gbs=16,moe_a2a_overlap=1"), r.cluster, r.coll, r.compute);
  ASSERT_TRUE(hidden.has_value()) << hidden.error().str();
  EXPECT_LT(hidden->step_time_s, p->step_time_s);
  EXPECT_LT(hidden->sim.breakdown[BreakdownPart::ep_comm].value, p->sim.breakdown[BreakdownPart::ep_comm].value);
}

TEST(MoePredict, AStackWithoutMoeRowsIsRefused) {
  Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  r.compute.set_stack(load_stack("pytorch-eager").value());
  auto p = predict(mixtral_layers(2), plan("dp=8,ep=8,mbs=1,gbs=8"), r.cluster, r.coll, r.compute);
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().str().find("properties.moe"), std::string::npos) << p.error().str();
}

// Megatron-Core's token dispatchers read the split sizes back to the host in every MoE layer's forward
// (token_dispatcher.py, cuda_sync_point), which the built-in fused stack says (moe_host_sync: 1): with per-layer
// tasks each MoE layer's forward task of each micro-batch is a host synchronisation point, its full recompute too.
TEST(MoeBuilder, MegatronsDispatcherMakesTheHostWaitInEveryMoeLayersForward) {
  Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  BuildOptions o;
  o.per_layer_tasks = true;
  auto marks_per_rank = [&](const char* text, const BuildOptions& bo) {
    auto g = build_task_graph(mixtral_layers(2), plan(text), r.cluster, r.compute, bo);
    EXPECT_TRUE(g.has_value()) << g.error().str();
    if (!g) return -1.0;
    for (TaskId t : g->host_syncs()) {
      EXPECT_EQ(g->task(t).kind, TaskKind::compute);
      const std::string& n = g->task_name(t);
      EXPECT_TRUE(n == "moe layer fwd" || n == "layer recompute") << n;
    }
    return static_cast<double>(g->host_syncs().size()) / static_cast<double>(g->present_ranks().size());
  };
  EXPECT_EQ(marks_per_rank("dp=8,ep=8,mbs=1,gbs=16", o), 2.0 * 2.0);                  // 2 layers x 2 micro-batches
  EXPECT_EQ(marks_per_rank("dp=8,ep=8,mbs=1,gbs=16,recompute=full", o), 2.0 * 2.0 * 2.0);  // and their recompute
  EXPECT_EQ(marks_per_rank("dp=8,ep=8,mbs=1,gbs=16", BuildOptions{}), 0.0);            // merged tasks: no host model
  auto quiet = std::make_shared<StackProfile>(*load_stack("fused").value());
  quiet->moe_host_sync = Expr::constant(0.0);
  r.compute.set_stack(quiet);
  EXPECT_EQ(marks_per_rank("dp=8,ep=8,mbs=1,gbs=16", o), 0.0);
}

// A host that takes 60% of a layer's host time H in the forward is slower than the GPU's forward there but not over
// the layer (H = 15 ms against Mixtral's datasheet layer of several ms forward and twice that backward). Without a
// sync it runs ahead in the backward and hides its forward; with one in every MoE layer's forward each forward task
// takes max(host, GPU): the step grows, by at most the forward host time of the 4 layer-micro-batches.
TEST(MoePredict, TheHostSyncExposesAForwardHeavyHost) {
  Rig r(load_cluster_by_name_or_path("dgx-h100-8").value());
  PredictOptions o;
  FrameworkHostCost h{"test", "test", Seconds(15e-3), Seconds(15e-3), {}};
  h.forward_fraction = 0.6;
  o.host = h;
  auto synced = predict(mixtral_layers(2), plan("dp=8,ep=8,mbs=1,gbs=16"), r.cluster, r.coll, r.compute, o);
  ASSERT_TRUE(synced.has_value()) << synced.error().str();
  auto quiet = std::make_shared<StackProfile>(*load_stack("fused").value());
  quiet->moe_host_sync = Expr::constant(0.0);
  r.compute.set_stack(quiet);
  auto free_host = predict(mixtral_layers(2), plan("dp=8,ep=8,mbs=1,gbs=16"), r.cluster, r.coll, r.compute, o);
  ASSERT_TRUE(free_host.has_value()) << free_host.error().str();
  const double exposed = synced->step_time_s - free_host->step_time_s;
  EXPECT_GT(exposed, 1e-3);
  EXPECT_LT(exposed, 4 * 0.6 * 15e-3);
  EXPECT_GT(synced->sim.breakdown[BreakdownPart::host_wait].value, free_host->sim.breakdown[BreakdownPart::host_wait].value);
}

}  // namespace
}  // namespace scalescope::models
