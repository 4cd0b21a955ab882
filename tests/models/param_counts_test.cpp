// Tests for exact parameter counts: published totals, components, pipeline stages and TP ranks.
#include <gtest/gtest.h>

#include "scalescope/models/counts.hpp"

namespace scalescope::models {
namespace {

ModelSpec catalog(const char* name) {
  auto m = load_model_by_name_or_path(name);
  EXPECT_TRUE(m.has_value()) << m.error().str();
  return m.has_value() ? *m : ModelSpec{};
}

TEST(ParamCounts, LlamaTotalsMatchPublishedCounts) {
  // Published (Hugging Face num_parameters / model cards):
  EXPECT_EQ(count_params(catalog("llama3-8b")).total(), 8'030'261'248);
  EXPECT_EQ(count_params(catalog("llama2-7b")).total(), 6'738'415'616);
  EXPECT_EQ(count_params(catalog("llama2-13b")).total(), 13'015'864'320);
  EXPECT_EQ(count_params(catalog("llama2-70b")).total(), 68'976'648'192);
  EXPECT_EQ(count_params(catalog("llama3-70b")).total(), 70'553'706'496);
}

TEST(ParamCounts, Llama3_405bDerived) {
  // h=16384, q=16384, kv=8*128=1024, f=53248, 126 layers, V=128256, untied, RMSNorm.
  // attention 16384*(16384+2048) + 16384^2 = 570,425,344; MLP 3*16384*53248 = 2,617,245,696;
  // norms 2*16384 = 32,768 -> 3,187,703,808 per layer; x126 = 401,650,679,808.
  // embedding + head 2*128256*16384 = 4,202,692,608; final norm 16,384.
  // Total 405,853,388,800: derived here by hand, the "405B" of the name.
  EXPECT_EQ(count_params(catalog("llama3-405b")).total(), 405'853'388'800);
}

TEST(ParamCounts, ComponentsOfLlama3_8bLayer) {
  const ParamCounts c = count_params(catalog("llama3-8b"));
  // q 4096*4096 + k,v 2*4096*1024 = 25,165,824; o 4096*4096 = 16,777,216;
  // gate+up 2*4096*14336 = 117,440,512; down 14336*4096 = 58,720,256; two RMSNorms 8,192.
  EXPECT_EQ(c.layer.attn_qkv_weight, 25'165'824);
  EXPECT_EQ(c.layer.attn_out_weight, 16'777'216);
  EXPECT_EQ(c.layer.mlp_in_weight, 117'440'512);
  EXPECT_EQ(c.layer.mlp_out_weight, 58'720'256);
  EXPECT_EQ(c.layer.norms, 8'192);
  EXPECT_EQ(c.layer.biases(), 0);
  EXPECT_EQ(c.embedding, 525'336'576);  // 128256 * 4096
  EXPECT_EQ(c.lm_head, 525'336'576);    // untied
  EXPECT_EQ(c.positions, 0);            // RoPE
  EXPECT_EQ(c.final_norm, 4'096);
}

TEST(ParamCounts, GptLayerIs12hSquaredPlus13h) {
  // Narayanan et al. 2021: each GPT layer has 12h^2 + 13h parameters (h = 12288 for GPT-3):
  // 12 * 150,994,944 + 13 * 12288 = 1,811,939,328 + 159,744 = 1,812,099,072.
  const ParamCounts c = count_params(catalog("gpt3-175b"));
  EXPECT_EQ(c.layer.total(), 1'812'099'072);
  EXPECT_EQ(c.layer.biases(),
            3 * 12288 + 12288 + 4 * 12288 + 12288);  // qkv, out, fc1, fc2 biases = 9h
  EXPECT_EQ(c.layer.norms, 4 * 12288);               // two LayerNorms, weight + bias
  // Total = 96 layers + 51200*12288 embedding (tied) + 2048*12288 positions + 2*12288 final norm
  //       = 173,961,510,912 + 629,145,600 + 25,165,824 + 24,576 = 174,615,846,912.
  EXPECT_EQ(c.total(), 174'615'846'912);
}

TEST(ParamCounts, MegatronFamilyMatchesNarayananTable1) {
  // Table 1 sizes in billions, computed in the paper as 12lh^2(1 + 13/(12h) + (V+s)/(12lh)); our
  // exact count adds the final LayerNorm (2h), far below the table's 0.1B rounding.
  const std::pair<const char*, double> table[] = {
      {"megatron-gpt-1.7b", 1.7},   {"megatron-gpt-3.6b", 3.6},   {"megatron-gpt-7.5b", 7.5},
      {"megatron-gpt-18b", 18.4},   {"megatron-gpt-39b", 39.1},   {"megatron-gpt-76b", 76.1},
      {"megatron-gpt-145b", 145.6}, {"megatron-gpt-310b", 310.1}, {"megatron-gpt-530b", 529.6},
      {"megatron-gpt-1t", 1008.0}};
  for (const auto& [name, billions] : table) {
    const ModelSpec m = catalog(name);
    // 12lh^2 (1 + 13/(12h) + (V+s)/(12lh)) multiplied out: 12lh^2 + 13lh + (V+s)h, exact in
    // integers.
    const std::int64_t l = m.layers, h = m.hidden, v = m.vocab, s = m.seq_len;
    const std::int64_t paper = 12 * l * h * h + 13 * l * h + (v + s) * h;
    EXPECT_EQ(count_params(m).total(), paper + 2 * h) << name;
    EXPECT_NEAR(static_cast<double>(count_params(m).total()) / 1e9, billions, 0.05) << name;
  }
}

TEST(ParamCounts, PaddedVocabFollowsMegatron) {
  // 50257 padded to a multiple of 128*8 = 1024: ceil(50257/1024) = 50 -> 51200.
  EXPECT_EQ(padded_vocab(50257, 8, 128), 51200);
  // 128256 = 1002 * 128, so tp=1 needs no padding; tp=8 pads to a multiple of 1024: 126 * 1024 =
  // 129024.
  EXPECT_EQ(padded_vocab(128256, 1, 128), 128256);
  EXPECT_EQ(padded_vocab(128256, 8, 128), 129024);
  EXPECT_EQ(padded_vocab(32000, 8, 1), 32000);
}

TEST(ParamCounts, EvenLayerSplitGivesExtraLayersToEarlyChunks) {
  EXPECT_EQ(even_layer_split(32, 4), (std::vector<int>{8, 8, 8, 8}));
  EXPECT_EQ(even_layer_split(10, 4), (std::vector<int>{3, 3, 2, 2}));
}

TEST(ParamCounts, StagesHoldEmbeddingFirstAndHeadLast) {
  const ModelSpec m = catalog("llama2-7b");
  const PipelineLayout layout = even_layout(m, 4);
  const ParamCounts c = count_params(m);
  // 32 layers over 4 stages: 8 layers of 202,383,360 each = 1,619,066,880 per stage.
  const StageParams first = params_per_stage(m, layout, 0);
  const StageParams mid = params_per_stage(m, layout, 1);
  const StageParams last = params_per_stage(m, layout, 3);
  EXPECT_EQ(first.layers, 1'619'066'880);
  EXPECT_EQ(first.embedding, 131'072'000);  // 32000 * 4096
  EXPECT_EQ(first.head, 0);
  EXPECT_EQ(mid.total(), 1'619'066'880);
  EXPECT_EQ(last.head, 131'072'000 + 4'096);  // untied LM head + final RMSNorm
  // Untied: the stages add up to the whole model.
  std::int64_t sum = 0;
  for (int s = 0; s < 4; ++s) sum += params_per_stage(m, layout, s).total();
  EXPECT_EQ(sum, c.total());
}

TEST(ParamCounts, TiedEmbeddingIsCopiedToTheLastStage) {
  const ModelSpec m = catalog("gpt3-175b");
  const ParamCounts c = count_params(m);
  // pp=1: the head reuses the embedding, nothing extra.
  EXPECT_EQ(params_per_stage(m, even_layout(m, 1), 0).total(), c.total());
  // pp=8 (Megatron): the last stage keeps its own copy of the 51200 x 12288 word embedding.
  const PipelineLayout l8 = even_layout(m, 8);
  std::int64_t sum = 0;
  for (int s = 0; s < 8; ++s) sum += params_per_stage(m, l8, s).total();
  EXPECT_EQ(sum, c.total() + 51200LL * 12288);
  // first stage: 12 layers + embedding + positions
  EXPECT_EQ(params_per_stage(m, l8, 0).embedding, 51200LL * 12288 + 2048LL * 12288);
}

TEST(ParamCounts, InterleavedChunksRoundRobinOverStages) {
  const ModelSpec m = catalog("llama2-7b");
  // pp=2, vpp=2: chunks of 8 layers; chunks 0 and 2 on stage 0, 1 and 3 on stage 1. The embedding
  // is in chunk 0 (stage 0) and the head in chunk 3 (stage 1).
  const PipelineLayout layout = even_layout(m, 2, 2);
  EXPECT_EQ(layout.vpp(), 2);
  EXPECT_EQ(layout.layers_on_stage(0), 16);
  EXPECT_EQ(params_per_stage(m, layout, 1).head, 131'072'000 + 4'096);
  // A custom layout decides, not an even split: chunks 0 and 2 (5 + 3) on stage 0, 1 and 3 (11 +
  // 13) on 1.
  const PipelineLayout custom{2, {5, 11, 3, 13}};
  EXPECT_EQ(custom.layers_on_stage(0), 8);
  EXPECT_EQ(custom.layers_on_stage(1), 24);
}

TEST(ParamCounts, TensorParallelRankShardsMatricesAndReplicatesNormsAndRowBiases) {
  const ModelSpec m = catalog("gpt3-175b");
  const PipelineLayout l = even_layout(m, 1);
  const double h = 12288;
  // Per TP rank of a GPT layer: (3h^2 + 3h + h^2 + 4h^2 + 4h + 4h^2) / t split, plus out and fc2
  // biases (2h) and LayerNorms (4h) replicated. t = 8:
  //   (12h^2 + 7h) / 8 + 6h = (1,811,939,328 + 86,016) / 8 + 73,728 = 226,503,168 + 73,728 =
  //   226,576,896.
  const StageParams r = params_per_tp_rank(m, l, 0, 8, 128);
  EXPECT_EQ(r.largest_layer, 226'576'896);
  EXPECT_EQ(static_cast<double>(r.largest_layer), (12 * h * h + 7 * h) / 8 + 6 * h);
  // Embedding rows 51200 / 8 = 6400 (51200 is already a multiple of 1024); positions replicated.
  EXPECT_EQ(r.embedding, 6400LL * 12288 + 2048LL * 12288);
  // pp=1, tied: the head is only the final LayerNorm.
  EXPECT_EQ(r.head, 2 * 12288);
  // tp = 1 gives back the whole stage.
  EXPECT_EQ(params_per_tp_rank(m, l, 0, 1, 1).total(), count_params(m).total());
}

}  // namespace
}  // namespace scalescope::models
