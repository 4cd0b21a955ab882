// Amdahl and Gustafson fits: synthetic curves with a known serial fraction and hand examples.
#include <gtest/gtest.h>

#include <vector>

#include "scalescope/planner/fit.hpp"

using namespace scalescope::planner;

TEST(AmdahlFit, RecoversSerialFractionOfSyntheticCurve) {
  // Curve made with s = 0.05: S(n) = 1 / (0.05 + 0.95 / n) for n = 1, 2, 4, 8, 16, 64.
  std::vector<SpeedupPoint> pts;
  for (double n : {1.0, 2.0, 4.0, 8.0, 16.0, 64.0}) pts.push_back({n, 1.0 / (0.05 + 0.95 / n)});
  auto f = fit_amdahl(pts);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->serial_fraction, 0.05, 1e-12);  // exact data: the fit is exact
  EXPECT_NEAR(f->r2, 1.0, 1e-12);
}

TEST(AmdahlFit, HandExampleOnInverseSpeedup) {
  // Points (1, 1), (2, 1.6), (4, 2.5). x = 1 - 1/n: 0, 0.5, 0.75; y = 1/S - 1/n: 0, 0.125, 0.15.
  // s = sum(xy) / sum(xx) = (0.0625 + 0.1125) / (0.25 + 0.5625) = 0.175 / 0.8125 = 14/65.
  std::vector<SpeedupPoint> pts{{1, 1}, {2, 1.6}, {4, 2.5}};
  auto f = fit_amdahl(pts);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->serial_fraction, 14.0 / 65.0, 1e-12);
  EXPECT_LT(f->r2, 1.0);  // the points are not on one Amdahl curve
  EXPECT_GT(f->r2, 0.9);
}

TEST(AmdahlFit, NeedsAPointBeyondOneGpu) {
  // S(1) = 1 for every s: nothing to fit.
  std::vector<SpeedupPoint> pts{{1, 1}};
  EXPECT_FALSE(fit_amdahl(pts));
  EXPECT_FALSE(fit_gustafson(pts));
}

TEST(GustafsonFit, RecoversSerialFractionOfSyntheticCurve) {
  // Curve made with s = 0.1: S(n) = n - 0.1 (n - 1) for n = 1, 2, 4, 8, 32.
  std::vector<SpeedupPoint> pts;
  for (double n : {1.0, 2.0, 4.0, 8.0, 32.0}) pts.push_back({n, n - 0.1 * (n - 1)});
  auto f = fit_gustafson(pts);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->serial_fraction, 0.1, 1e-12);
  EXPECT_NEAR(f->r2, 1.0, 1e-12);
}

TEST(GustafsonFit, HandExampleWithR2) {
  // Points (1, 1), (2, 1.9), (4, 3.4): x = n - 1 = 0, 1, 3; y = n - S = 0, 0.1, 0.6.
  // s = (0.1 + 1.8) / (1 + 9) = 0.19. Fitted S: 1, 1.81, 3.43; residuals 0, 0.09, -0.03,
  // SS_res = 0.009; mean S = 2.1, SS_tot = 1.21 + 0.04 + 1.69 = 2.94; R^2 = 1 - 0.009/2.94.
  std::vector<SpeedupPoint> pts{{1, 1}, {2, 1.9}, {4, 3.4}};
  auto f = fit_gustafson(pts);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->serial_fraction, 0.19, 1e-12);
  EXPECT_NEAR(f->r2, 1.0 - 0.009 / 2.94, 1e-12);
}

TEST(ScalingLaws, SpeedupFormulas) {
  // Amdahl s = 0.1, n = 4: 1 / (0.1 + 0.9/4) = 1 / 0.325; Gustafson s = 0.1, n = 4: 4 - 0.3 = 3.7.
  EXPECT_NEAR(amdahl_speedup(0.1, 4), 1.0 / 0.325, 1e-12);
  EXPECT_NEAR(gustafson_speedup(0.1, 4), 3.7, 1e-12);
}
