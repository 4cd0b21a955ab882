// Tests for the minimal calibration-profile reader of the compute model: what it takes from the
// documented format (docs/profile-format.md) and the file + JSON-path errors it gives.
#include <gtest/gtest.h>

#include "scalescope/models/compute_profile.hpp"

namespace scalescope::models {
namespace {

const std::string kFile = std::string(SCALESCOPE_TEST_DATA) + "/profiles/compute_small.json";

TEST(ComputeProfile, ReadsGemmRowsBandwidthsAndLaunchOverhead) {
  auto p = load_compute_profile(kFile);
  ASSERT_TRUE(p.has_value()) << p.error().str();
  EXPECT_EQ(p->gpu, "NVIDIA H100 80GB HBM3");
  // The row with "error" has no time and is skipped: 2 of 3 rows remain.
  ASSERT_EQ(p->gemms.size(), 2u);
  EXPECT_EQ(p->gemms[0].dtype, "bf16");
  EXPECT_EQ(p->gemms[0].m, 4096);
  EXPECT_DOUBLE_EQ(p->gemms[0].time.value, 200e-6);
  EXPECT_EQ(p->gemms[1].dtype, "fp8_e4m3");
  EXPECT_DOUBLE_EQ(p->hbm_bandwidth->value, 2900e9);
  EXPECT_DOUBLE_EQ(p->launch_overhead->value, 2.5e-6);
  // The elementwise row with the most bytes (2^28 elements) gives the elementwise bandwidth.
  EXPECT_DOUBLE_EQ(p->elementwise_bandwidth->value, 2684.4e9);
}

TEST(ComputeProfile, MeasuredGemmFeedsTheComputeModel) {
  auto p = load_compute_profile(kFile);
  ASSERT_TRUE(p.has_value());
  GpuSpec g;
  g.model = "H100";
  g.hbm_bandwidth = GBps(3350);
  g.peak.bf16 = TFLOPS(989.4);
  auto m = ComputeModel::with_profile(g, std::move(p).value());
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->gemm(4096, 4096, 4096).time.value, 200e-6);
  EXPECT_EQ(m->gemm(4096, 4096, 4096).provenance, Provenance::measured);
  EXPECT_EQ(m->memory_bound(Bytes(1)).provenance, Provenance::measured);
}

TEST(ComputeProfile, UnknownKeyInAGemmRowNamesItsPath) {
  const Json doc = Json::parse(R"({"schema": "scalescope.calibration/1",
      "gemm": [{"dtype": "bf16", "m": 1, "n": 1, "k": 1, "time_us": 1}, {"dtype": "bf16", "m": 1, "n": 1, "k": 1, "time_ms": 1}]})");
  auto p = compute_profile_from_json(doc, "p.json");
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().str().rfind("p.json: $.gemm[1].time_ms: unknown key 'time_ms'", 0), 0u) << p.error().str();
}

TEST(ComputeProfile, WrongSchemaAndBadNumbersAreInputErrors) {
  auto a = compute_profile_from_json(Json::parse(R"({"schema": "scalescope.collective_params/1"})"), "c.json");
  ASSERT_FALSE(a.has_value());
  EXPECT_EQ(a.error().str(), "c.json: $.schema: expected \"scalescope.calibration/1\", got \"scalescope.collective_params/1\"");
  auto b = compute_profile_from_json(
      Json::parse(R"({"schema": "scalescope.calibration/1", "gemm": [{"dtype": "bf16", "m": 0, "n": 1, "k": 1, "time_us": 1}]})"),
      "d.json");
  ASSERT_FALSE(b.has_value());
  EXPECT_EQ(b.error().str(), "d.json: $.gemm[0].m: expected a positive integer, got 0");
  EXPECT_EQ(b.error().exit_code(), 2);
}

}  // namespace
}  // namespace scalescope::models
