// Tests for the minimal calibration-profile reader of the compute model: what it takes from the
// documented format (docs/profile-format.md) and the file + JSON-path errors it gives.
#include <gtest/gtest.h>

#include <cmath>

#include "scalescope/models/compute_profile.hpp"
#include "gpu_fixtures.hpp"

namespace scalescope::models {
namespace {

const std::string kFile = std::string(SCALESCOPE_TEST_DATA) + "/profiles/compute_small.json";

// The GPU the small profile was written for (datasheet numbers of an H100 SXM).
GpuSpec h100() { return testing::h100_spec("H100"); }

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
  auto m = ComputeModel::with_profile(h100(), std::move(p).value());
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->gemm(4096, 4096, 4096).time.value, 200e-6);
  EXPECT_EQ(m->gemm(4096, 4096, 4096).provenance, Provenance::measured);
  EXPECT_EQ(m->memory_bound(Bytes(1)).provenance, Provenance::measured);
}

// A memory-bound kernel moves its bytes at the measured sweep's bandwidth for its size: the small profile
// has 1.5 GB/s at 3,072 bytes and 2,684.4 GB/s at 3,221,225,472 bytes; in between log-log interpolation,
// so at the geometric middle, 3,072 x 1,024 bytes, the geometric mean sqrt(1.5 x 2,684.4) GB/s; outside,
// the nearest end.
TEST(ComputeProfile, MemoryBoundKernelsTakeTheSweepsBandwidthAtTheirSize) {
  auto p = load_compute_profile(kFile);
  ASSERT_TRUE(p.has_value());
  ASSERT_EQ(p->elementwise_curve.size(), 2u);
  auto m = ComputeModel::with_profile(h100(), std::move(p).value());
  ASSERT_TRUE(m.has_value());
  const double mid = 3072.0 * 1024.0;
  EXPECT_NEAR(m->memory_bound(Bytes(mid)).time.value, mid / (std::sqrt(1.5 * 2684.4) * 1e9), 1e-12);
  EXPECT_NEAR(m->memory_bound(Bytes(1e10)).time.value, 1e10 / 2684.4e9, 1e-12);
  EXPECT_NEAR(m->memory_bound(Bytes(1000)).time.value, 1000 / 1.5e9, 1e-15);
  // Rows that ask for a stack's bandwidth factor too, before the factor.
  EXPECT_NEAR(m->memory_bound(Bytes(mid), 0.5, false).time.value, mid / (0.5 * std::sqrt(1.5 * 2684.4) * 1e9), 1e-12);
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
  // GEMM sizes: 1 .. 2^20 each, so 2*m*n*k stays inside 64 bits (docs/plausible-ranges.md).
  EXPECT_EQ(b.error().str(), "d.json: $.gemm[0].m: expected an integer from 1 to 1048576, got 0");
  EXPECT_EQ(b.error().exit_code(), 2);
}

// Three covered rows (compute 1.10, 1.20, 1.25; collectives 1.4, 1.5, 1.6), one whose collective window
// was not covered (its coll_slowdown 9.0 must be ignored, its compute 1.30 counts) and one error row:
// medians compute {1.10, 1.20, 1.25, 1.30} -> 1.225, collectives {1.4, 1.5, 1.6} -> 1.5.
TEST(ComputeProfile, InterferenceRowsGiveTheMedianSlowdownsOfCoveredWindows) {
  auto row = [](const char* cls, double comp, double coll, bool coll_covered) {
    return Json{{"compute", std::string(cls) == "gemm" ? "bf16 GEMM 64x64x64" : "copy"}, {"class", cls}, {"op", "all_gather"}, {"bytes", 268435456},
                {"compute_alone_us", 100.0}, {"compute_beside_us", 100.0 * comp}, {"compute_slowdown", comp},
                {"compute_covered", true}, {"coll_alone_us", 10.0}, {"coll_beside_us", 10.0 * coll},
                {"coll_slowdown", coll}, {"coll_covered", coll_covered}, {"compute_reps", 20}, {"coll_reps", 30}};
  };
  Json doc = {{"schema", "scalescope.calibration/1"},
              {"interference",
               {{"method", "m"},
                {"gpus", 2},
                {"rows",
                 {row("gemm", 1.10, 1.4, true), row("gemm", 1.20, 1.5, true), row("memory", 1.25, 1.6, true),
                  row("memory", 1.30, 9.0, false), Json{{"compute", "k"}, {"op", "all_reduce"}, {"error", "oom"}}}}}}};
  auto p = compute_profile_from_json(doc, "i.json");
  ASSERT_TRUE(p.has_value()) << p.error().str();
  ASSERT_EQ(p->interference.size(), 4u);
  auto m = ComputeModel::with_profile(h100(), std::move(p).value());
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->interference().compute_slowdown, 1.225);
  EXPECT_DOUBLE_EQ(m->interference().comm_slowdown, 1.5);
  bool listed = false;
  for (const auto& in : m->inputs()) {
    if (in.name != "interference_comm_slowdown") continue;
    listed = true;
    EXPECT_EQ(in.provenance, Provenance::measured);
    EXPECT_NE(in.source.find("median of 4 compute and 3 collective"), std::string::npos) << in.source;
  }
  EXPECT_TRUE(listed);

  Json unnamed = doc;
  unnamed["interference"]["rows"][0]["compute"] = "bf16 GEMM 64x64";
  auto no_sizes = compute_profile_from_json(unnamed, "i.json");
  ASSERT_FALSE(no_sizes.has_value());
  EXPECT_EQ(no_sizes.error().str().rfind("i.json: $.interference.rows[0].compute: expected a GEMM named", 0), 0u)
      << no_sizes.error().str();
  unnamed = doc;
  unnamed["interference"]["rows"][2].erase("compute_alone_us");
  auto no_time = compute_profile_from_json(unnamed, "i.json");
  ASSERT_FALSE(no_time.has_value());
  EXPECT_NE(no_time.error().str().find("rows[2]: missing required key 'compute_alone_us'"), std::string::npos) << no_time.error().str();

  doc["interference"]["rows"][1]["class"] = "tensor";
  auto bad = compute_profile_from_json(doc, "i.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().str().rfind("i.json: $.interference.rows[1].class:", 0), 0u) << bad.error().str();
}

TEST(ComputeProfile, WithoutInterferenceRowsNothingSlowsDown) {
  auto p = load_compute_profile(kFile);
  ASSERT_TRUE(p.has_value());
  auto m = ComputeModel::with_profile(h100(), std::move(p).value());
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->interference().active());
}

}  // namespace
}  // namespace scalescope::models
