// Tests for the native model format: reading, writing, errors with file and path, the catalog
// lookup.
#include "scalescope/models/model_spec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace scalescope::models {
namespace {

Json llama2_7b_json() {
  return Json::parse(
      R"({"name":"l","layers":32,"hidden":4096,"heads":32,"kv_heads":32,"ffn_hidden":11008,
    "ffn":"swiglu","norm":"rmsnorm","bias":false,"vocab":32000,"tied_embeddings":false,"seq_len":4096})");
}

TEST(ModelSpec, ReadsEveryKeyAndDefaultsOptionalOnes) {
  auto m = model_from_json(llama2_7b_json(), "m.json");
  ASSERT_TRUE(m.has_value()) << m.error().str();
  EXPECT_EQ(m->layers, 32);
  EXPECT_EQ(m->ffn, FfnKind::swiglu);
  EXPECT_EQ(m->norm, NormKind::rmsnorm);
  EXPECT_EQ(m->positional, Positional::rope);  // documented default
  // head_dim defaults to hidden / heads = 4096 / 32 = 128; qkv bias follows `bias` (false).
  EXPECT_EQ(m->head_size(), 128);
  EXPECT_FALSE(m->has_qkv_bias());
}

TEST(ModelSpec, UnknownKeyIsRejectedWithFileAndPath) {
  Json j = llama2_7b_json();
  j["hiden"] = 1;
  auto m = model_from_json(j, "m.json");
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().str().rfind("m.json: $.hiden: unknown key 'hiden'", 0), 0u)
      << m.error().str();
  EXPECT_EQ(m.error().exit_code(), 2);
}

TEST(ModelSpec, BadValuesNameTheKey) {
  Json j = llama2_7b_json();
  j["ffn"] = "relu";
  EXPECT_EQ(model_from_json(j, "m.json").error().str(),
            "m.json: $.ffn: expected one of gelu | swiglu, got the string \"relu\"");
  j = llama2_7b_json();
  j["kv_heads"] = 5;  // 32 % 5 != 0: grouped-query attention needs whole groups
  EXPECT_EQ(model_from_json(j, "m.json").error().str(),
            "m.json: $.kv_heads: expected a divisor of heads=32, got 5");
  j = llama2_7b_json();
  j.erase("seq_len");
  EXPECT_EQ(model_from_json(j, "m.json").error().str(),
            "m.json: $: missing required key 'seq_len'");
  j = llama2_7b_json();
  j["qk_norm_full"] = true;  // the width of a norm that is not there
  EXPECT_EQ(model_from_json(j, "m.json").error().str(),
            "m.json: $.qk_norm_full: qk_norm_full (one norm over the whole projection) needs qk_norm: true");
}

TEST(ModelSpec, JsonRoundTripKeepsOptionalFields) {
  Json j = llama2_7b_json();
  j["head_dim"] = 64;    // differs from 4096 / 32
  j["qkv_bias"] = true;  // differs from bias
  j["positional"] = "learned";
  j["qk_norm"] = true;
  j["qk_norm_full"] = true;  // OLMo 2's
  auto m = model_from_json(j, "m.json");
  ASSERT_TRUE(m.has_value()) << m.error().str();
  auto back = model_from_json(to_json(*m), "again.json");
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(to_json(*back), to_json(*m));
  EXPECT_EQ(back->head_size(), 64);
  EXPECT_TRUE(back->has_qkv_bias());
  EXPECT_EQ(back->positional, Positional::learned);
  EXPECT_TRUE(back->qk_norm_full);
  // How the code writes its norms and GELU: absent is false, true round-trips; a composed GELU needs a GELU MLP.
  EXPECT_FALSE(back->composed_norm);
  j["composed_norm"] = true;
  auto composed = model_from_json(j, "m.json");
  ASSERT_TRUE(composed.has_value()) << composed.error().str();
  EXPECT_TRUE(model_from_json(to_json(*composed), "again.json")->composed_norm);
  j["composed_gelu"] = true;  // llama2-7b is SwiGLU
  EXPECT_EQ(model_from_json(j, "m.json").error().str(),
            "m.json: $.composed_gelu: composed_gelu (a tanh GELU written out) needs ffn: \"gelu\"");
}

TEST(ModelSpec, CatalogHoldsTheBriefedModels) {
  const auto names = catalog_names();
  for (const char* n :
       {"gpt3-175b", "megatron-gpt-1.7b", "megatron-gpt-3.6b", "megatron-gpt-7.5b",
        "megatron-gpt-18b", "megatron-gpt-39b", "megatron-gpt-76b", "megatron-gpt-145b",
        "megatron-gpt-310b", "megatron-gpt-530b", "megatron-gpt-1t", "llama2-7b", "llama2-13b",
        "llama2-70b", "llama3-8b", "llama3-70b", "llama3-405b"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  }
}

TEST(ModelSpec, EveryCatalogEntryLoadsAndNamesItsSource) {
  const auto names = catalog_names();
  ASSERT_FALSE(names.empty());
  for (const auto& n : names) {
    auto m = load_model_by_name_or_path(n);
    ASSERT_TRUE(m.has_value()) << m.error().str();
    EXPECT_EQ(m->name, n) << "catalog file name and model name should agree";
    EXPECT_FALSE(m->source.empty()) << n;
  }
}

TEST(ModelSpec, UnknownNameListsTheCatalog) {
  auto m = load_model_by_name_or_path("llama9-1t");
  ASSERT_FALSE(m.has_value());
  EXPECT_NE(m.error().str().find("unknown model 'llama9-1t'"), std::string::npos);
  EXPECT_NE(m.error().str().find("llama3-8b"), std::string::npos) << m.error().str();
}

TEST(ModelSpec, PathsLoadNativeFilesAndHfConfigs) {
  const auto dir = std::filesystem::temp_directory_path() / "scalescope_model_spec_test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "mine.json") << llama2_7b_json().dump();
  auto native = load_model_by_name_or_path((dir / "mine.json").string());
  ASSERT_TRUE(native.has_value()) << native.error().str();
  EXPECT_EQ(native->name, "l");
  // An HF config.json is recognised by its model_type key.
  auto hf = load_model_by_name_or_path(std::string(SCALESCOPE_TEST_DATA) + "/hf/llama3_8b.json");
  ASSERT_TRUE(hf.has_value()) << hf.error().str();
  EXPECT_EQ(hf->kv_heads, 8);
  auto missing = load_model_by_name_or_path("no/such/model.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().str(), "no/such/model.json: file does not exist");
}

}  // namespace
}  // namespace scalescope::models
