// Tests for the Hugging Face config.json import (files in tests/data/hf/ transcribed from the
// published configs named in their "_source" key).
#include "scalescope/models/hf_import.hpp"

#include <gtest/gtest.h>

#include "scalescope/models/counts.hpp"

namespace scalescope::models {
namespace {

ModelSpec import(const std::string& file) {
  auto m = import_hf_config(std::string(SCALESCOPE_TEST_DATA) + "/hf/" + file);
  EXPECT_TRUE(m.has_value()) << m.error().str();
  return m.has_value() ? *m : ModelSpec{};
}

TEST(HfImport, Llama2_7bMatchesTheCatalogEntry) {
  const ModelSpec hf = import("llama2_7b.json");
  auto cat = load_model_by_name_or_path("llama2-7b");
  ASSERT_TRUE(cat.has_value());
  // Same architecture numbers; only name and source differ, and that transformers' code writes its RMSNorm out of
  // elementwise operators (the catalog entry describes the architecture, not one implementation of it).
  EXPECT_TRUE(hf.composed_norm);
  EXPECT_FALSE(hf.composed_gelu);
  ModelSpec a = hf, b = *cat;
  a.name = b.name;
  a.source = b.source;
  a.composed_norm = b.composed_norm;
  EXPECT_EQ(to_json(a), to_json(b));
  // HF's num_parameters() for Llama-2-7b-hf is 6,738,415,616 (published model card figure).
  EXPECT_EQ(count_params(hf).total(), 6'738'415'616);
}

TEST(HfImport, Llama3_8bHasGroupedQueryAttention) {
  const ModelSpec m = import("llama3_8b.json");
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.ffn, FfnKind::swiglu);
  EXPECT_EQ(m.seq_len, 8192);  // max_position_embeddings
  EXPECT_EQ(count_params(m).total(), 8'030'261'248);
}

TEST(HfImport, Mistral7bCount) {
  const ModelSpec m = import("mistral_7b.json");
  // Layer: attention 4096*(4096+2*1024) + 4096*4096 = 41,943,040; MLP 3*4096*14336 = 176,160,768;
  // norms 2*4096 -> 218,112,000 per layer, x32 = 6,979,584,000. Embedding + untied head
  // 2*32000*4096 = 262,144,000; final norm 4096. Total 7,241,732,096 (Mistral-7B-v0.1's published
  // count).
  EXPECT_EQ(count_params(m).total(), 7'241'732'096);
  EXPECT_EQ(m.seq_len, 32768);
}

TEST(HfImport, Qwen2HasQkvBiasAndTiedEmbeddings) {
  const ModelSpec m = import("qwen2_0_5b.json");
  EXPECT_FALSE(m.bias);
  EXPECT_TRUE(m.has_qkv_bias());
  EXPECT_TRUE(m.tied_embeddings);
  const ParamCounts c = count_params(m);
  // head_dim 896/14 = 64, kv width 2*64 = 128. qkv bias 896 + 2*128 = 1,152 per layer.
  EXPECT_EQ(c.layer.attn_qkv_bias, 1152);
  EXPECT_EQ(c.layer.attn_out_bias, 0);
  EXPECT_EQ(c.layer.mlp_in_bias + c.layer.mlp_out_bias, 0);
  // Layer: q 896^2 = 802,816; k,v 2*896*128 = 229,376; bias 1,152; o 802,816; MLP 3*896*4864 =
  // 13,074,432; norms 1,792 -> 14,912,384; x24 = 357,897,216. Tied embedding 151936*896 =
  // 136,134,656; final norm 896. Total 494,032,768 (Qwen2-0.5B's published parameter count).
  EXPECT_EQ(c.total(), 494'032'768);
}

TEST(HfImport, Gpt2SmallCountsLearnedPositionsAndTiedHead) {
  const ModelSpec m = import("gpt2.json");
  EXPECT_EQ(m.positional, Positional::learned);
  EXPECT_EQ(m.ffn_hidden, 4 * 768);  // n_inner absent -> 4h
  EXPECT_TRUE(m.tied_embeddings);
  // 12 layers x (12h^2 + 13h) = 12 x 7,087,872 = 85,054,464; wte 50257*768 = 38,597,376;
  // wpe 1024*768 = 786,432; ln_f 2*768 = 1,536 -> 124,439,808 (the published GPT-2 small count).
  EXPECT_EQ(count_params(m).total(), 124'439'808);
  // GPT2MLP's activation_function defaults to gelu_new (NewGELUActivation: tanh GELU in Python operators); its
  // norms are nn.LayerNorm.
  EXPECT_TRUE(m.composed_gelu);
  EXPECT_FALSE(m.composed_norm);
}

TEST(HfImport, GptNeoxPythia160mIsUntiedWithBiases) {
  const ModelSpec m = import("pythia_160m.json");
  EXPECT_EQ(m.positional, Positional::rope);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_TRUE(m.bias);
  const ParamCounts c = count_params(m);
  // Layers as GPT-2 small: 85,054,464; embed_in and embed_out 2*50304*768 = 77,266,944; final
  // LayerNorm 1,536. Total 162,322,944 and non-embedding 85,056,000 (Pythia paper, Table 1).
  EXPECT_EQ(c.total(), 162'322'944);
  EXPECT_EQ(c.non_embedding(), 85'056'000);
  EXPECT_FALSE(m.composed_gelu);  // hidden_act "gelu": F.gelu
  EXPECT_FALSE(m.composed_norm);  // nn.LayerNorm
}

TEST(HfImport, Phi4MiniMatchesThePublishedCount) {
  const ModelSpec m = import("phi4_mini.json");
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.sliding_window, 0);  // 262,144 is longer than the 131,072-token context: no window
  // h = 3072, q = 24 x 128 = 3072, k = 8 x 128 = 1024, f = 8192. A layer: qkv_proj 3072 x 5120 = 15,728,640,
  // o_proj 9,437,184, gate_up_proj 3072 x 16384 = 50,331,648, down_proj 25,165,824, 2 norms 6,144 ->
  // 100,669,440; 32 layers 3,221,422,080, + the tied embedding 200,064 x 3072 = 614,596,608 + final norm 3,072
  // = 3,836,021,760 (the parameter count of microsoft/Phi-4-mini-instruct's safetensors).
  EXPECT_EQ(count_params(m).total(), 3'836'021'760);
}

TEST(HfImport, Phi3SlidingWindowShorterThanTheContextWindowsEveryLayer) {
  auto doc = read_json_file(std::string(SCALESCOPE_TEST_DATA) + "/hf/phi4_mini.json");
  ASSERT_TRUE(doc.has_value()) << doc.error().str();
  Json j = *doc;
  j["sliding_window"] = 2047;  // Phi-3-mini-4k-instruct's
  j["max_position_embeddings"] = 4096;
  const auto m = import_hf_config_json(j, "phi3-mini.json");
  ASSERT_TRUE(m.has_value()) << m.error().str();
  EXPECT_EQ(m->sliding_window, 2047);
  EXPECT_EQ(m->global_attention_every, 0);
}

TEST(HfImport, Olmo2NormsTheWholeQueryAndKeyProjections) {
  const ModelSpec m = import("olmo2_0425_1b.json");
  EXPECT_TRUE(m.qk_norm);
  EXPECT_TRUE(m.qk_norm_full);
  // h = 2048, 16 heads of 128, f = 8192. A layer: q, k, v, o 4 x 2048^2 = 16,777,216, MLP 3 x 2048 x 8192 =
  // 50,331,648, post-attention and post-feed-forward norms 2 x 2048, q_norm and k_norm over 2048 each ->
  // 67,117,056; 16 layers 1,073,872,896, + embed_tokens and the untied lm_head 2 x 100,352 x 2048 = 411,041,792
  // + final norm 2,048 = 1,484,916,736 (allenai/OLMo-2-0425-1B, "1.48B params").
  EXPECT_EQ(count_params(m).total(), 1'484'916'736);
  // Per-head norms (Qwen3's) would have 2 x 128 weights a layer: 16 x (4096 - 256) fewer.
  ModelSpec per_head = m;
  per_head.qk_norm_full = false;
  EXPECT_EQ(count_params(m).total() - count_params(per_head).total(), 16 * (4096 - 256));
}

TEST(HfImport, UnsupportedModelTypeListsSupportedOnes) {
  auto m = import_hf_config(std::string(SCALESCOPE_TEST_DATA) + "/hf/bert_base.json");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().str().find(
                "$.model_type: model_type 'bert' is not supported (supported: deepseek_v2, "
                "deepseek_v3, gpt2, gpt_neox, gpt_oss, llama, llama4, llama4_text, mistral, mixtral, nemotron_h, olmo2, "
                "phi3, qwen2, qwen2_moe, qwen3, qwen3_moe)"),
            std::string::npos)
      << m.error().str();
}

TEST(HfImport, MissingKeyNamesFileAndPathAndNameComesFromFolder) {
  const std::string file =
      std::string(SCALESCOPE_TEST_DATA) + "/hf/llama_missing_layers/config.json";
  auto m = import_hf_config(file);
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().str(), file + ": $: missing required key 'num_hidden_layers'");

  Json j = Json::parse(R"({"model_type":"llama","hidden_size":64,"intermediate_size":128,
      "num_attention_heads":4,"num_hidden_layers":2,"vocab_size":100})");
  auto ok = import_hf_config_json(j, "/models/tiny-llama/config.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  EXPECT_EQ(ok->name, "tiny-llama");
  EXPECT_EQ(ok->kv_heads, 4);    // num_key_value_heads absent -> heads
  EXPECT_EQ(ok->seq_len, 2048);  // LlamaConfig default max_position_embeddings
}

TEST(HfImport, LlamaWithDifferentAttentionAndMlpBiasIsRejected) {
  Json j = Json::parse(R"({"model_type":"llama","hidden_size":64,"intermediate_size":128,
      "num_attention_heads":4,"num_hidden_layers":2,"vocab_size":100,"attention_bias":true})");
  auto m = import_hf_config_json(j, "c.json");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().str().find("c.json: $.attention_bias: attention_bias and mlp_bias differ"),
            std::string::npos);
}

}  // namespace
}  // namespace scalescope::models
