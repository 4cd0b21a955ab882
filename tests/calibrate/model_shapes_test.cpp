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

}  // namespace
}  // namespace scalescope::calib
