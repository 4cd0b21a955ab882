// Results no one should trust are refused (issue 28: seq_len 999999999 printed MFU 137.9% with a step
// time pinned at 2^63 ns, exit 0): implausible_result() names the value that is out of range.
#include <gtest/gtest.h>

#include "scalescope/models/predict.hpp"

namespace scalescope::models {
namespace {

Prediction sane() {
  Prediction p;
  p.step_time_s = 1.5;
  p.mfu = 0.45;
  p.hfu = 0.5;
  p.memory.weights = Bytes(1e9);
  return p;
}

TEST(PredictSanity, ASaneResultPasses) { EXPECT_FALSE(implausible_result(sane()).has_value()); }

TEST(PredictSanity, MfuAbove100PercentIsRefused) {
  Prediction p = sane();
  p.mfu = 1.379;
  ASSERT_TRUE(implausible_result(p).has_value());
  EXPECT_NE(implausible_result(p)->find("MFU 137.9"), std::string::npos) << *implausible_result(p);
}

TEST(PredictSanity, PinnedOrNonFiniteStepTimeIsRefused) {
  Prediction p = sane();
  p.step_time_s = 9223372036.854775807;  // 2^63 ns: the engine's clock saturated
  EXPECT_TRUE(implausible_result(p).has_value());
  p.step_time_s = std::nan("");
  EXPECT_TRUE(implausible_result(p).has_value());
  p.step_time_s = 0;
  EXPECT_TRUE(implausible_result(p).has_value());
}

TEST(PredictSanity, NegativeMemoryIsRefused) {
  Prediction p = sane();
  p.memory.activations = Bytes(-1.0);
  ASSERT_TRUE(implausible_result(p).has_value());
  EXPECT_NE(implausible_result(p)->find("memory -1"), std::string::npos) << *implausible_result(p);
}

}  // namespace
}  // namespace scalescope::models
