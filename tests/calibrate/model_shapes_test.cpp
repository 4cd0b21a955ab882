// Tests for the GEMM shapes `scalescope calibrate shapes` / `calibrate run --model` measure: a dense layer's
// linears at their TP shards and, for MoE models, the router, one routed expert at its tokens per expert and the
// shared experts (shapes derived by hand in the comments).
#include "scalescope/calibrate/model_shapes.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace scalescope::calib {
namespace {

bool has(const CalibrationShapes& s, char ta, char tb, std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::any_of(s.gemms.begin(), s.gemms.end(), [&](const GemmShape& g) {
    return g.transa == ta && g.transb == tb && g.m == m && g.n == n && g.k == k;
  });
}

TEST(ModelShapes, MoeModelsAddTheRouterAndOneExpertAtItsTokensPerExpert) {
  // Qwen3-30B-A3B at mbs 1, seq 4096, tp 1, ep 16: Tr = 4096 tokens routed, Te = 4096 x 8 x 16 / 128 = 4096 per
  // expert. cuBLAS (m, n, k) of Y[t x out] = X[t x in] W: forward (out, t, in), dgrad (in, t, out), wgrad (out, in, t).
  //   router      forward (128, 4096, 2048)
  //   expert up   forward (2 x 768, 4096, 2048), wgrad (1536, 2048, 4096)
  //   expert down forward (2048, 4096, 768), dgrad (768, 4096, 2048)
  const models::ModelSpec m = models::load_model_by_name_or_path("qwen3-30b-a3b").value();
  ShapeRequest r;
  r.micro_batches = {1};
  r.eps = {16};
  auto s = calibration_shapes({m}, r);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  EXPECT_TRUE(has(*s, 'N', 'N', 128, 4096, 2048));
  EXPECT_TRUE(has(*s, 'N', 'N', 1536, 4096, 2048));
  EXPECT_TRUE(has(*s, 'N', 'T', 1536, 2048, 4096));
  EXPECT_TRUE(has(*s, 'N', 'N', 2048, 4096, 768));
  EXPECT_TRUE(has(*s, 'T', 'N', 768, 4096, 2048));
  // ep 8 halves the tokens per expert: Te = 4096 x 8 x 8 / 128 = 2048.
  r.eps = {8};
  EXPECT_TRUE(has(calibration_shapes({m}, r).value(), 'N', 'N', 1536, 2048, 2048));
  // A dense model has no expert shapes: Llama 3 8B's largest forward output is its vocabulary (128256).
  const auto dense = calibration_shapes({models::load_model_by_name_or_path("llama3-8b").value()}, r).value();
  EXPECT_FALSE(has(dense, 'N', 'N', 1536, 2048, 2048));
  EXPECT_TRUE(has(dense, 'N', 'N', 128256, 8192, 4096));
}

TEST(ModelShapes, NonPositiveExpertParallelSizeIsRefused) {
  ShapeRequest r;
  r.eps = {0};
  auto s = calibration_shapes({models::load_model_by_name_or_path("qwen3-30b-a3b").value()}, r);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().str().find("--ep"), std::string::npos);
}

TEST(ModelShapes, ContextParallelRanksRunTheirShareOfTheSequence) {
  // Llama 2 7B (32 heads of 128, hidden 4096, ffn 11008) at mbs 1, seq 131072, tp 4, cp 4, as NVIDIA's 128K
  // long-sequence row ran it: a rank holds 131072 / 4 = 32768 tokens, so its causal attention is 1 x 8 heads x 32768
  // and its qkv projection forward is (3 x 4096 / 4, 32768, 4096) = (3072, 32768, 4096).
  const models::ModelSpec m = models::load_model_by_name_or_path("llama2-7b").value();
  ShapeRequest r;
  r.micro_batches = {1};
  r.seqs = {131072};
  r.tps = {4};
  r.cps = {4};
  auto s = calibration_shapes({m}, r);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  ASSERT_EQ(s->attention.size(), 1u);
  EXPECT_EQ(s->attention[0].seq, 32768);
  EXPECT_EQ(s->attention[0].heads, 8);
  EXPECT_EQ(s->attention[0].batch, 1);
  EXPECT_NE(s->attention[0].label.find("cp 4"), std::string::npos);
  EXPECT_TRUE(has(*s, 'N', 'N', 3072, 32768, 4096));
  // 2 cp must divide seq (Megatron's load-balanced chunks): seq 4097 has no cp 2 shape, only cp 1's.
  r.seqs = {4097};
  r.cps = {1, 2};
  const auto odd = calibration_shapes({m}, r).value();
  ASSERT_EQ(odd.attention.size(), 1u);
  EXPECT_EQ(odd.attention[0].seq, 4097);
  r.cps = {0};
  EXPECT_FALSE(calibration_shapes({m}, r).has_value());
}

}  // namespace
}  // namespace scalescope::calib

namespace scalescope::calib {
namespace {

TEST(ModelShapes, AModelWithAttentionDropoutGetsEachAttentionShapeWithAndWithoutIt) {
  // Llama 2 7B given attention dropout 0.1, at mbs 4, seq 1024: its one attention shape (4 x 32 heads x 1024, head
  // 128) once plain and once with dropout 0.1, so that the profile holds the pair its dropout factor comes from; the
  // file keeps the key.
  models::ModelSpec m = models::load_model_by_name_or_path("llama2-7b").value();
  m.attention_dropout = 0.1;
  ShapeRequest r;
  r.micro_batches = {4};
  r.seqs = {1024};
  auto s = calibration_shapes({m}, r);
  ASSERT_TRUE(s.has_value()) << s.error().str();
  ASSERT_EQ(s->attention.size(), 2u);
  EXPECT_EQ(s->attention[0].dropout, 0.0);
  EXPECT_EQ(s->attention[1].dropout, 0.1);
  EXPECT_EQ(s->attention[1].batch, 4);
  EXPECT_EQ(s->attention[1].seq, 1024);
  const Json j = to_json(*s);
  EXPECT_FALSE(j["attention"][0].contains("dropout"));
  EXPECT_EQ(j["attention"][1]["dropout"].get<double>(), 0.1);
  auto back = calibration_shapes_from_json(j, "shapes.json");
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(back->attention[1].dropout, 0.1);
  Json bad = j;
  bad["attention"][1]["dropout"] = 1.0;
  EXPECT_FALSE(calibration_shapes_from_json(bad, "shapes.json").has_value());
  m.attention_dropout = 0.0;  // without dropout: one shape
  EXPECT_EQ(calibration_shapes({m}, r).value().attention.size(), 1u);
}

}  // namespace
}  // namespace scalescope::calib
