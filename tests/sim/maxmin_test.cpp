// Tests for the max-min fair sharing solver: textbook cases with hand-derived rates, the
// conventions for degenerate inputs, and the max-min optimality conditions on random systems.
#include "scalescope/sim/maxmin.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace scalescope {
namespace {

std::vector<double> solve(const MaxMinSystem& s) {
  std::vector<double> out;
  for (const BytesPerSecond r : s.solve()) out.push_back(r.value);
  return out;
}

TEST(MaxMin, SingleLinkSharedByThreeFlowsGivesEachAThird) {
  // x0 + x1 + x2 <= 30. Progressive filling raises all three together until the link is
  // full: x = 30 / 3 = 10 each.
  MaxMinSystem s;
  const int l = s.add_resource(BytesPerSecond(30));
  for (int i = 0; i < 3; ++i) s.add_flow({l});
  EXPECT_EQ(solve(s), (std::vector<double>{10, 10, 10}));
}

TEST(MaxMin, AggregatedFlowCountsAsItsCopies) {
  // Flow 0 stands for 3 identical flows on L1 (capacity 40), flow 1 is one flow on L1 and L2
  // (capacity 5): 3 x0 + x1 <= 40, x1 <= 5. L2 saturates first at x1 = 5; L1's rest 35 goes
  // to the 3 copies: x0 = 35 / 3. The same as four separate flows {L1} x 3 and {L1, L2}.
  MaxMinSystem s;
  const int l1 = s.add_resource(BytesPerSecond(40));
  const int l2 = s.add_resource(BytesPerSecond(5));
  s.add_flow({l1}, BytesPerSecond(kUnboundedRate), 3);
  s.add_flow({l1, l2});
  const auto x = solve(s);
  EXPECT_DOUBLE_EQ(x[0], 35.0 / 3.0);
  EXPECT_DOUBLE_EQ(x[1], 5.0);
  // Without the second link's limit all four copies share L1: 40 / 4 = 10.
  MaxMinSystem t;
  const int m1 = t.add_resource(BytesPerSecond(40));
  t.add_flow({m1}, BytesPerSecond(kUnboundedRate), 3);
  t.add_flow({m1});
  EXPECT_EQ(solve(t), (std::vector<double>{10, 10}));
}

TEST(MaxMin, ParkingLotWithEqualLinksGivesEveryFlowHalf) {
  // Links L1, L2 of capacity 10; flow 0 crosses both, flow 1 uses L1, flow 2 uses L2:
  //   x0 + x1 <= 10,  x0 + x2 <= 10.
  // Both links reach 10/2 = 5 per flow at the same level: x = (5, 5, 5).
  MaxMinSystem s;
  const int l1 = s.add_resource(BytesPerSecond(10));
  const int l2 = s.add_resource(BytesPerSecond(10));
  s.add_flow({l1, l2});
  s.add_flow({l1});
  s.add_flow({l2});
  EXPECT_EQ(solve(s), (std::vector<double>{5, 5, 5}));
}

TEST(MaxMin, ParkingLotWithOneSlowLinkGivesTheLeftoverToTheShortFlow) {
  // x0 + x1 <= 10 (L1),  x0 + x2 <= 4 (L2).
  // Shares: L1 10/2 = 5, L2 4/2 = 2, so L2 saturates first: x0 = x2 = 2.
  // L1 then has 10 - 2 = 8 left for flow 1 alone: x1 = 8.
  MaxMinSystem s;
  const int l1 = s.add_resource(BytesPerSecond(10));
  const int l2 = s.add_resource(BytesPerSecond(4));
  s.add_flow({l1, l2});
  s.add_flow({l1});
  s.add_flow({l2});
  EXPECT_EQ(solve(s), (std::vector<double>{2, 8, 2}));
}

TEST(MaxMin, LongParkingLotGivesEveryFlowHalfOfALink) {
  // Four links of capacity 8; the long flow crosses all four, one short flow per link:
  //   x_long + x_i <= 8 for i = 1..4.  All links share 8/2 = 4: every flow gets 4.
  MaxMinSystem s;
  std::vector<int> all;
  for (int i = 0; i < 4; ++i) all.push_back(s.add_resource(BytesPerSecond(8)));
  s.add_flow(all);
  for (int l : all) s.add_flow({l});
  EXPECT_EQ(solve(s), (std::vector<double>(5, 4.0)));
}

TEST(MaxMin, BoundBelowFairShareFreesCapacityForTheOthers) {
  // x0 + x1 + x2 <= 30 with x0 <= 4. The fair share 10 is above flow 0's bound, so flow 0
  // freezes at 4 and the others split 30 - 4 = 26: x1 = x2 = 13.
  MaxMinSystem s;
  const int l = s.add_resource(BytesPerSecond(30));
  s.add_flow({l}, BytesPerSecond(4));
  s.add_flow({l});
  s.add_flow({l});
  EXPECT_EQ(solve(s), (std::vector<double>{4, 13, 13}));
}

TEST(MaxMin, BoundAboveFairShareIsNotReached) {
  // x0 + x1 <= 10 with x0 <= 7: the fair share 5 is below the bound, so x = (5, 5).
  MaxMinSystem s;
  const int l = s.add_resource(BytesPerSecond(10));
  s.add_flow({l}, BytesPerSecond(7));
  s.add_flow({l});
  EXPECT_EQ(solve(s), (std::vector<double>{5, 5}));
}

TEST(MaxMin, FlowOverNoResourceGetsItsBoundOrInfinity) {
  // Convention: with no capacity constraint, only the bound limits a flow: x0 = 7, and the
  // unbounded x1 = +inf. Flow 2 on the link is unaffected: x2 = 10.
  MaxMinSystem s;
  const int l = s.add_resource(BytesPerSecond(10));
  s.add_flow({}, BytesPerSecond(7));
  s.add_flow({});
  s.add_flow({l});
  const std::vector<double> x = solve(s);
  EXPECT_EQ(x[0], 7.0);
  EXPECT_EQ(x[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(x[2], 10.0);
}

TEST(MaxMin, ResourceWithoutFlowsIsIgnored) {
  // Resource 0 (capacity 1) carries nothing, so it constrains nothing: the single flow on
  // resource 1 (capacity 50) gets all of it.
  MaxMinSystem s;
  s.add_resource(BytesPerSecond(1));
  const int busy = s.add_resource(BytesPerSecond(50));
  s.add_flow({busy});
  EXPECT_EQ(solve(s), (std::vector<double>{50}));
}

TEST(MaxMin, ZeroCapacityResourceStallsItsFlowsOnly) {
  // L0 has capacity 0 (failed), L1 capacity 10; flow 0 crosses both, flow 1 uses L1:
  //   x0 <= 0,  x0 + x1 <= 10.  So x0 = 0 and flow 1 takes all of L1: x1 = 10.
  MaxMinSystem s;
  const int dead = s.add_resource(BytesPerSecond(0));
  const int l1 = s.add_resource(BytesPerSecond(10));
  s.add_flow({dead, l1});
  s.add_flow({l1});
  EXPECT_EQ(solve(s), (std::vector<double>{0, 10}));
}

TEST(MaxMin, ThreeLevelsOfBottlenecks) {
  // A (cap 6): f0, f1, f2;  B (cap 10): f2, f3;  C (cap 30): f3, f4.
  // Level 1: shares A 2, B 5, C 15 -> A saturates: f0 = f1 = f2 = 2.
  // Level 2: B has 10 - 2 = 8 for f3 alone (share 8); C still 30/2 = 15 -> B: f3 = 8.
  // Level 3: C has 30 - 8 = 22 for f4: f4 = 22.
  MaxMinSystem s;
  const int a = s.add_resource(BytesPerSecond(6));
  const int b = s.add_resource(BytesPerSecond(10));
  const int c = s.add_resource(BytesPerSecond(30));
  s.add_flow({a});
  s.add_flow({a});
  s.add_flow({a, b});
  s.add_flow({b, c});
  s.add_flow({c});
  EXPECT_EQ(solve(s), (std::vector<double>{2, 2, 2, 8, 22}));
}

TEST(MaxMin, SymmetricRingGivesBitIdenticalRates) {
  // 1,024 resources of 300 GB/s in a ring; flow i uses resources i, i+1, i+2 (mod 1,024), so
  // every resource carries exactly 3 flows: by symmetry every flow gets 300 / 3 = 100 GB/s.
  // Identical rates matter: they make the flows of one ring step finish at one instant.
  const int n = 1024;
  MaxMinSystem s;
  for (int i = 0; i < n; ++i) s.add_resource(GBps(300));
  for (int i = 0; i < n; ++i) s.add_flow({i, (i + 1) % n, (i + 2) % n});
  for (const double x : solve(s)) ASSERT_EQ(x, 100e9);
}

TEST(MaxMin, RandomSystemsSatisfyTheMaxMinOptimalityConditions) {
  // Independent check (Bertsekas & Gallager, Prop. 6.5.x): x is max-min fair iff it is
  // feasible and every flow either sits at its bound or has a bottleneck resource, i.e. one
  // that is saturated and on which no flow has a higher rate.
  std::uint64_t lcg = 99;
  auto next = [&] {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return lcg >> 33;
  };
  for (int trial = 0; trial < 200; ++trial) {
    const int n_res = 1 + static_cast<int>(next() % 12);
    const int n_flows = 1 + static_cast<int>(next() % 25);
    MaxMinSystem s;
    std::vector<double> cap;
    for (int r = 0; r < n_res; ++r) {
      cap.push_back(static_cast<double>(1 + next() % 100));
      s.add_resource(BytesPerSecond(cap.back()));
    }
    std::vector<std::vector<int>> routes;
    std::vector<double> bound;
    for (int f = 0; f < n_flows; ++f) {
      std::vector<int> route;
      for (int r = 0; r < n_res; ++r)
        if (next() % 3 == 0) route.push_back(r);
      if (route.empty()) route.push_back(static_cast<int>(next() % static_cast<unsigned>(n_res)));
      bound.push_back(next() % 4 == 0 ? static_cast<double>(1 + next() % 50) : kUnboundedRate);
      s.add_flow(route, BytesPerSecond(bound.back()));
      routes.push_back(route);
    }
    const std::vector<double> x = solve(s);
    std::vector<double> load(static_cast<std::size_t>(n_res), 0.0);
    std::vector<double> top(static_cast<std::size_t>(n_res), 0.0);
    for (int f = 0; f < n_flows; ++f) {
      ASSERT_GE(x[f], 0.0);
      ASSERT_LE(x[f], bound[f] * (1 + 1e-12));
      for (int r : routes[f]) {
        load[r] += x[f];
        top[r] = std::max(top[r], x[f]);
      }
    }
    for (int r = 0; r < n_res; ++r) ASSERT_LE(load[r], cap[r] * (1 + 1e-9)) << "trial " << trial;
    for (int f = 0; f < n_flows; ++f) {
      bool ok = x[f] >= bound[f] * (1 - 1e-9);
      for (int r : routes[f]) {
        ok = ok || (load[r] >= cap[r] * (1 - 1e-9) && x[f] >= top[r] * (1 - 1e-9));
      }
      EXPECT_TRUE(ok) << "trial " << trial << " flow " << f << " has no bottleneck";
    }
  }
}

}  // namespace
}  // namespace scalescope
