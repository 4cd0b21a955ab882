// Plan sizes and their products at 64 bits (issue 28: dp=65536,mbs=65536 wrapped mbs*dp to 0 and
// divided by it, SIGFPE), and the bound on micro-batches that keeps task graphs bounded.
#include <gtest/gtest.h>

#include "scalescope/models/plan.hpp"

namespace scalescope::models {
namespace {

ModelSpec llama() {
  auto m = load_model_by_name_or_path("llama3-8b");
  EXPECT_TRUE(m.has_value());
  return m.has_value() ? *m : ModelSpec{};
}

std::string invalid(const std::string& text) {
  auto p = parse_plan(text);
  EXPECT_TRUE(p.has_value()) << text;
  if (!p) return {};
  auto r = validate(*p, llama(), 0);
  EXPECT_FALSE(r.has_value()) << text;
  return r.has_value() ? std::string() : r.error().str();
}

TEST(PlanLimits, MbsTimesDpIsComputedAt64Bits) {
  // 65536 * 65536 = 2^32 (0 in 32 bits): gbs=1 is not a multiple of 4294967296.
  EXPECT_EQ(invalid("tp=1,pp=1,dp=65536,mbs=65536,gbs=1"), "plan: gbs: gbs=1 is not divisible by mbs*dp=4294967296");
}

TEST(PlanLimits, GpuProductAboveTheLimitIsNamed) {
  // 65536^3 = 2^48 GPUs; the check comes before any rule that would use the product.
  EXPECT_EQ(invalid("tp=65536,pp=65536,dp=65536,gbs=1"),
            "plan: dp: tp*cp*pp*dp=281474976710656 exceeds the 16777216 GPUs a plan may span");
  Plan p;
  p.tp = 65536;
  p.pp = 65536;
  EXPECT_EQ(p.gpus(), 2147483647);  // saturated, not wrapped
}

TEST(PlanLimits, MicroBatchesAboveTheLimitAreRefused) {
  EXPECT_EQ(invalid("tp=1,gbs=100000000,mbs=1"),
            "plan: gbs: gbs/(mbs*dp)=100000000 micro-batches per pipeline exceed the limit of 65536 (raise mbs or dp)");
  auto ok = parse_plan("tp=1,gbs=65536,mbs=1");
  ASSERT_TRUE(ok.has_value());
  EXPECT_TRUE(validate(*ok, llama(), 0).has_value());  // exactly at the limit
}

TEST(PlanLimits, TextIntegersBeyondIntAreRefused) {
  auto p = parse_plan("tp=2147483648,gbs=1");
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().str(), "--plan: key 'tp': expected a positive integer, got '2147483648'");
}

}  // namespace
}  // namespace scalescope::models
