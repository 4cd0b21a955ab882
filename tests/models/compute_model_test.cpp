// Tests for the compute-cost model: measured GEMM hits, log-space interpolation between measured
// shapes, the datasheet roofline (compute- and memory-bound), launch overhead and provenance.
#include <gtest/gtest.h>

#include <cmath>

#include "scalescope/models/compute_model.hpp"

namespace scalescope::models {
namespace {

// An H100-SXM-like GPU: 989.4 TFLOP/s bf16 dense, 3,350 GB/s HBM (datasheet numbers).
GpuSpec h100() {
  GpuSpec g;
  g.model = "H100 test";
  g.memory = GiB(80);
  g.hbm_bandwidth = GBps(3350);
  g.peak.bf16 = TFLOPS(989.4);
  g.peak.fp16 = TFLOPS(989.4);
  g.peak.fp32 = TFLOPS(66.9);
  return g;
}

ComputeModel datasheet(ComputeAssumptions a = {}) {
  auto m = ComputeModel::datasheet(h100(), a);
  EXPECT_TRUE(m.has_value());
  return std::move(m).value();
}

TEST(ComputeModel, LargeGemmOnDatasheetIsFlopsOverAssumedFractionOfPeak) {
  // 8192^3: F = 2 * 8192^3 = 1.0995e12 FLOPs; compute bound: F / (989.4e12 * 0.75) = 1.4817 ms.
  // Operands 2 * 3 * 8192^2 = 402.7 MB at 3350e9 * 0.85 take 0.141 ms, far less.
  const ComputeModel m = datasheet();
  const KernelCost c = m.gemm(8192, 8192, 8192);
  EXPECT_NEAR(c.time.value, 2.0 * std::pow(8192.0, 3) / (989.4e12 * 0.75), 1e-12);
  EXPECT_EQ(c.provenance, Provenance::assumed);
}

TEST(ComputeModel, SkinnyGemmOnDatasheetIsBoundByHbm) {
  // m = 65536, n = 1, k = 8192 (a matrix-vector product): F = 2 * 65536 * 8192 = 1.07e9 FLOPs ->
  // 1.45 us at 0.75 of peak; operands 2 * (65536*8192 + 8192 + 65536) = 1.0739e9 bytes at
  // 3350e9 * 0.85 = 2.8475e12 B/s -> 377.1 us: memory bound.
  const ComputeModel m = datasheet();
  const double bytes = 2.0 * (65536.0 * 8192 + 8192 + 65536);
  EXPECT_NEAR(m.gemm(65536, 1, 8192).time.value, bytes / (3350e9 * 0.85), 1e-12);
}

TEST(ComputeModel, KernelTimeNeverGoesBelowTheLaunchOverhead) {
  // 5 us assumed launch overhead: a 1 us kernel costs 5 us, a 1 ms kernel 1 ms.
  const ComputeModel m = datasheet();
  EXPECT_EQ(m.kernel_time(microseconds(1)).value, microseconds(5).value);
  EXPECT_EQ(m.kernel_time(milliseconds(1)).value, milliseconds(1).value);
}

TEST(ComputeModel, MemoryBoundKernelUsesAssumedElementwiseFractionOfHbm) {
  // 1 GB at 3350e9 * 0.7 B/s = 426.4 us.
  const ComputeModel m = datasheet();
  EXPECT_NEAR(m.memory_bound(Bytes(1e9)).time.value, 1e9 / (3350e9 * 0.7), 1e-15);
}

ComputeProfile two_shape_profile() {
  // Two measured shapes that differ only in n: 4096 x 1024 x 4096 at 100 TFLOP/s and
  // 4096 x 4096 x 4096 at 400 TFLOP/s (times = 2mnk / rate).
  ComputeProfile p;
  p.source = "test-profile.json";
  p.gemms.push_back({"bf16", 4096, 1024, 4096, Seconds(2.0 * 4096 * 1024 * 4096 / 100e12)});
  p.gemms.push_back({"bf16", 4096, 4096, 4096, Seconds(2.0 * 4096 * 4096 * 4096 / 400e12)});
  p.hbm_bandwidth = GBps(3000);
  p.launch_overhead = microseconds(3);
  return p;
}

TEST(ComputeModel, MeasuredShapeIsReturnedExactly) {
  auto m = ComputeModel::with_profile(h100(), two_shape_profile());
  ASSERT_TRUE(m.has_value());
  const KernelCost c = m->gemm(4096, 4096, 4096);
  EXPECT_DOUBLE_EQ(c.time.value, 2.0 * 4096 * 4096 * 4096 / 400e12);
  EXPECT_EQ(c.provenance, Provenance::measured);
}

TEST(ComputeModel, ShapeBetweenTwoMeasuredOnesGetsTheirGeometricMeanThroughput) {
  // n = 2048 lies at log2 distance 1 from both samples, so both weigh 1: log R = (log 100 + log 400)/2,
  // R = sqrt(100 * 400) = 200 TFLOP/s and t = 2 * 4096 * 2048 * 4096 / 200e12 = 343.6 us.
  auto m = ComputeModel::with_profile(h100(), two_shape_profile());
  ASSERT_TRUE(m.has_value());
  const KernelCost c = m->gemm(4096, 2048, 4096);
  EXPECT_NEAR(c.time.value, 2.0 * 4096 * 2048 * 4096 / 200e12, 1e-12);
  EXPECT_EQ(c.provenance, Provenance::fitted);
}

TEST(ComputeModel, ShapeBeyondTheMeasuredRangeKeepsTheNearestThroughput) {
  // n = 65536 is 4 octaves past 4096 and 6 past 1024: weights 1/16 and 1/36, so
  // log R = (log 400 / 16 + log 100 / 36) / (1/16 + 1/36) -> R = 400^(36/52) * 100^(16/52) = 261.6 TFLOP/s.
  auto m = ComputeModel::with_profile(h100(), two_shape_profile());
  ASSERT_TRUE(m.has_value());
  const double rate = std::pow(400e12, 36.0 / 52.0) * std::pow(100e12, 16.0 / 52.0);
  EXPECT_NEAR(m->gemm(4096, 65536, 4096).time.value, 2.0 * 4096 * 65536 * 4096 / rate, 1e-10);
}

TEST(ComputeModel, DtypeWithoutMeasurementsFallsBackToTheDatasheet) {
  // No fp32 shapes in the profile: 8192^3 fp32 at 66.9e12 * 0.75.
  auto m = ComputeModel::with_profile(h100(), two_shape_profile());
  ASSERT_TRUE(m.has_value());
  const KernelCost c = m->gemm(8192, 8192, 8192, "fp32");
  EXPECT_NEAR(c.time.value, 2.0 * std::pow(8192.0, 3) / (66.9e12 * 0.75), 1e-10);
  EXPECT_EQ(c.provenance, Provenance::assumed);
}

TEST(ComputeModel, ProfileBandwidthAndLaunchOverheadAreMeasured) {
  // Measured copy bandwidth 3000 GB/s; elementwise kernels at 0.7/0.85 of it (fitted): 1 GB takes
  // 1e9 / (3000e9 * 0.7 / 0.85) = 404.8 us. Launch overhead 3 us measured.
  auto m = ComputeModel::with_profile(h100(), two_shape_profile());
  ASSERT_TRUE(m.has_value());
  EXPECT_NEAR(m->memory_bound(Bytes(1e9)).time.value, 1e9 / (3000e9 * 0.7 / 0.85), 1e-15);
  EXPECT_EQ(m->memory_bound(Bytes(1e9)).provenance, Provenance::fitted);
  EXPECT_EQ(m->launch_overhead().provenance, Provenance::measured);
  EXPECT_EQ(m->kernel_time(Seconds(0)).value, microseconds(3).value);
}

TEST(ComputeModel, EveryInputNamesItsProvenance) {
  const ComputeModel m = datasheet();
  const auto in = m.inputs();
  ASSERT_FALSE(in.empty());
  EXPECT_EQ(in.front().name, "peak_bf16");
  EXPECT_EQ(in.front().provenance, Provenance::datasheet);
  for (const auto& v : in) EXPECT_FALSE(v.source.empty()) << v.name;
}

TEST(ComputeModel, GpuWithoutSixteenBitPeakIsAnInputError) {
  GpuSpec g = h100();
  g.peak.bf16.reset();
  g.peak.fp16.reset();
  auto m = ComputeModel::datasheet(g);
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().exit_code(), 2);
}

}  // namespace
}  // namespace scalescope::models
