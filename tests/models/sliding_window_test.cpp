// Sliding-window attention (gpt-oss, Gemma, Mistral): model keys, the gpt_oss HF import, parameter counts against the
// published ones, and how windowed layers are counted and priced. Expected values are worked by hand (comments).
#include <gtest/gtest.h>

#include "model_fixtures.hpp"

#include "datasheet_rig.hpp"

#include "scalescope/models/counts.hpp"
#include "scalescope/models/hf_import.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {
namespace {

using testing::catalog;

// gpt-oss-120b per layer: attention 2880 x (4096 + 512 + 512) + 4096 x 2880 = 26,542,080 weights + 8,000 biases;
// an expert 2880 x 5760 + 5760 + 2880 x 2880 + 2880 = 24,891,840, x 128 = 3,186,155,520; router 2880 x 128 + 128 =
// 368,768; two RMSNorms 5,760: 3,213,080,128 a layer, x 36 = 115,670,884,608; embedding and untied head 2 x 201,088 x
// 2880 = 1,158,266,880; final norm 2,880: 116,829,154,368 (model card: 116.83B). Active per layer 26,550,080 +
// 4 x 24,891,840 + 368,768 + 5,760 = 126,491,968, x 36 = 4,553,710,848, plus the head and final norm 579,136,320:
// 5,132,847,168 without the input embedding (model card: 5.13B active).
TEST(SlidingWindow, GptOssParameterCountsMatchTheModelCard) {
  const ModelSpec m = catalog("gpt-oss-120b");
  const ParamCounts c = count_params(m);
  EXPECT_EQ(c.moe_layer.total(), 3'213'080'128);
  EXPECT_EQ(c.total(), 116'829'154'368);
  EXPECT_EQ(c.active() - c.embedding, 5'132'847'168);
  // gpt-oss-20b: 24 layers of 32 experts: 24 x (26,550,080 + 32 x 24,891,840 + 2880 x 32 + 32 + 5,760)
  // = 24 x 823,186,912 = 19,756,485,888, + 1,158,266,880 + 2,880 = 20,914,755,648 (model card: 20.91B).
  EXPECT_EQ(count_params(catalog("gpt-oss-20b")).total(), 20'914'755'648);
}

TEST(SlidingWindow, ImportsGptOssConfig) {
  Json types = Json::array();
  for (int i = 0; i < 4; ++i) types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  Json cfg{{"model_type", "gpt_oss"},       {"hidden_size", 2880},      {"intermediate_size", 2880},
           {"num_attention_heads", 64},     {"num_key_value_heads", 8}, {"head_dim", 64},
           {"num_hidden_layers", 4},        {"vocab_size", 201088},     {"num_local_experts", 32},
           {"num_experts_per_tok", 4},      {"sliding_window", 128},    {"layer_types", types},
           {"initial_context_length", 4096}, {"max_position_embeddings", 131072}, {"attention_bias", true}};
  auto m = import_hf_config_json(cfg, "config.json");
  ASSERT_TRUE(m.has_value()) << m.error().str();
  EXPECT_EQ(m->sliding_window, 128);
  EXPECT_EQ(m->global_attention_every, 2);
  EXPECT_TRUE(m->is_windowed_layer(0));
  EXPECT_FALSE(m->is_windowed_layer(1));
  EXPECT_EQ(m->seq_len, 4096);
  EXPECT_EQ(m->moe.experts, 32);
  EXPECT_TRUE(m->bias && m->moe.router_bias);
  // A layout no global_attention_every describes is refused, naming the key.
  cfg["layer_types"] = Json::array({"sliding_attention", "full_attention", "full_attention", "sliding_attention"});
  auto bad = import_hf_config_json(cfg, "config.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("layer_types"), std::string::npos) << bad.error().str();
}

TEST(SlidingWindow, ModelKeysAreChecked) {
  ModelSpec m = catalog("gpt-oss-20b");
  Json j = to_json(m);
  EXPECT_EQ(model_from_json(j, "m.json").value().global_attention_every, 2);
  j["global_attention_every"] = 1;
  auto bad = model_from_json(j, "m.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("global_attention_every"), std::string::npos) << bad.error().str();
  auto cp = validate(parse_plan("gbs=8,cp=2,dp=4,ep=8").value(), m, 8);
  ASSERT_FALSE(cp.has_value());
  EXPECT_NE(cp.error().str().find("sliding-window"), std::string::npos) << cp.error().str();
}

// Attention FLOPs per token of a gpt-oss layer at 4,096 tokens (full product, 2 s h (d + d)): global layers
// 2 x 4096 x 64 x 128 = 67,108,864; windowed layers span 2 x 128 = 256: 4,194,304; half of each: 35,651,584.
TEST(SlidingWindow, WindowedLayersCountTwiceTheWindow) {
  const ModelSpec m = catalog("gpt-oss-20b");
  EXPECT_DOUBLE_EQ(m.windowed_layer_fraction(), 0.5);
  EXPECT_DOUBLE_EQ(flops_per_token(m).layer_attention, 35'651'584.0);
}

// A layer of the mixed model costs the mean of a global and a windowed layer: the two priced separately (the model
// without a window, and with every layer windowed).
TEST(SlidingWindow, MixedLayersCostTheMeanOfBoth) {
  auto c = load_cluster_by_name_or_path("dgx-h100-8");
  ASSERT_TRUE(c.has_value());
  testing::DatasheetRig r(std::move(c).value());
  ModelSpec mixed = catalog("gpt-oss-20b");
  ModelSpec global = mixed, windowed = mixed;
  global.sliding_window = 0;
  global.global_attention_every = 0;
  windowed.global_attention_every = 0;
  const Plan p = parse_plan("gbs=1,mbs=1").value();
  const LayerCost a = layer_cost(mixed, p, r.compute, {}, true), g = layer_cost(global, p, r.compute, {}, true),
                  w = layer_cost(windowed, p, r.compute, {}, true);
  EXPECT_NEAR(a.forward.time.value, 0.5 * (g.forward.time.value + w.forward.time.value), 1e-15);
  EXPECT_NEAR(a.backward.flops, 0.5 * (g.backward.flops + w.backward.flops), 1.0);
  EXPECT_LT(w.forward.time.value, g.forward.time.value);
}

}  // namespace
}  // namespace scalescope::models
