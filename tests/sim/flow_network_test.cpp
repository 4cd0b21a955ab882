// Tests for the flow network: completion times derived piecewise by hand, latency, rate caps,
// capacity changes (including failed links), batching of same-instant changes into one
// recomputation, re-solving only touched components, byte counters and observers.
#include "scalescope/sim/flow_network.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace scalescope {
namespace {

constexpr SimTime kMs = 1'000'000;  // ns
constexpr SimTime kUs = 1'000;      // ns

/// Records the completion time of each flow it is attached to.
struct Finish {
  SimTime at = -1;
  FlowNetwork::DoneFn fn(Engine& e) {
    return [this, &e](FlowId) { at = e.now(); };
  }
};

TEST(FlowNetwork, OneGigabyteOver100GBpsWithLatencyEndsAt10_005ms) {
  // 5 us latency, then 1e9 B / 100e9 B/s = 10 ms of transfer: 10.005 ms = 10,005,000 ns.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  Finish done;
  const FlowId id = net.start({0}, bytes(1e9), done.fn(e), microseconds(5));
  double rate_mid = -1;
  e.schedule_at(kMs, [&] { rate_mid = net.rate_Bps(id); });
  EXPECT_EQ(net.active_flows(), 1u);
  e.run();
  EXPECT_EQ(done.at, 10 * kMs + 5 * kUs);
  EXPECT_EQ(rate_mid, 100e9);
  EXPECT_EQ(net.active_flows(), 0u);
  EXPECT_FALSE(net.is_active(id));
  EXPECT_DOUBLE_EQ(net.bytes_carried(0).value, 1e9);
}

TEST(FlowNetwork, RateAndRemainingDuringLatencyAndTransfer) {
  // Latency 5 us: at 2 us the flow is waiting (rate 0, all 1e9 B left). At 5 ms it has moved
  // (5 ms - 5 us) * 100 GB/s = 4.995e8 B, so 5.005e8 B remain; the link carried 4.995e8 B.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  const FlowId id = net.start({0}, bytes(1e9), nullptr, microseconds(5));
  e.schedule_at(2 * kUs, [&] {
    EXPECT_EQ(net.rate_Bps(id), 0.0);
    EXPECT_EQ(net.remaining(id).value, 1e9);
  });
  e.schedule_at(5 * kMs, [&] {
    EXPECT_NEAR(net.remaining(id).value, 5.005e8, 1.0);
    EXPECT_NEAR(net.bytes_carried(0).value, 4.995e8, 1.0);
  });
  e.run();
}

TEST(FlowNetwork, TwoFlowsShareALinkAndTheSurvivorSpeedsUp) {
  // One 100 GB/s link; A = 1 GB and B = 3 GB start at t = 0.
  // Phase 1: each gets 50 GB/s; A ends at 1e9 / 50e9 = 20 ms, when B has moved 1 GB (2 GB left).
  // Phase 2: B alone at 100 GB/s: 2e9 / 100e9 = 20 ms more, B ends at 40 ms.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  Finish a, b;
  net.start({0}, bytes(1e9), a.fn(e));
  const FlowId idb = net.start({0}, bytes(3e9), b.fn(e));
  double rate_b_late = 0;
  e.schedule_at(30 * kMs, [&] { rate_b_late = net.rate_Bps(idb); });
  e.run();
  EXPECT_EQ(a.at, 20 * kMs);
  EXPECT_EQ(b.at, 40 * kMs);
  EXPECT_EQ(rate_b_late, 100e9);
  EXPECT_DOUBLE_EQ(net.bytes_carried(0).value, 4e9);
}

TEST(FlowNetwork, AggregateOfThreeFlowsSharesLikeThreeFlows) {
  // One 100 GB/s link; an aggregate of 3 flows of 1 GB each (count 3) and one 3 GB flow B.
  // Phase 1: four flows at 25 GB/s; the three end at 1e9 / 25e9 = 40 ms, B has moved 1 GB.
  // Phase 2: B alone: 2e9 / 100e9 = 20 ms more, B ends at 60 ms. The link carried 3 + 3 GB.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  Finish a, b;
  const FlowId ida = net.start({0}, bytes(1e9), a.fn(e), Seconds(0.0), BytesPerSecond(kUnboundedRate), 3);
  net.start({0}, bytes(3e9), b.fn(e));
  double rate_a = 0;
  e.schedule_at(10 * kMs, [&] { rate_a = net.rate_Bps(ida); });
  e.run();
  EXPECT_EQ(rate_a, 25e9);
  EXPECT_EQ(a.at, 40 * kMs);
  EXPECT_EQ(b.at, 60 * kMs);
  EXPECT_DOUBLE_EQ(net.bytes_carried(0).value, 6e9);
}

TEST(FlowNetwork, FlowStartedInTheMiddleOfAnother) {
  // 100 GB/s link. A = 2 GB from t = 0; B = 0.5 GB from t = 10 ms.
  // 0-10 ms: A alone at 100 GB/s moves 1 GB (1 GB left).
  // From 10 ms: 50 GB/s each. B needs 0.5e9 / 50e9 = 10 ms: ends at 20 ms; A moved 0.5 GB.
  // From 20 ms: A alone with 0.5 GB at 100 GB/s: 5 ms, ends at 25 ms.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  Finish a, b;
  net.start({0}, bytes(2e9), a.fn(e));
  e.schedule_at(10 * kMs, [&] { net.start({0}, bytes(0.5e9), b.fn(e)); });
  e.run();
  EXPECT_EQ(b.at, 20 * kMs);
  EXPECT_EQ(a.at, 25 * kMs);
}

TEST(FlowNetwork, SetCapacityMidFlowChangesTheFinishTime) {
  // 1 GB on 100 GB/s; at 5 ms the link drops to 25 GB/s.
  // 0-5 ms: 0.5 GB moved. Then 0.5e9 / 25e9 = 20 ms: ends at 25 ms.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  Finish a;
  net.start({0}, bytes(1e9), a.fn(e));
  e.schedule_at(5 * kMs, [&] { net.set_capacity(0, GBps(25)); });
  e.run();
  EXPECT_EQ(a.at, 25 * kMs);
  EXPECT_EQ(net.capacity(0).value, 25e9);
}

TEST(FlowNetwork, ZeroCapacityStallsAFlowUntilTheLinkComesBack) {
  // 1 GB on 100 GB/s; the link fails (capacity 0) at 5 ms with 0.5 GB left: the flow stalls,
  // the engine runs dry with the flow still active. The link returns at 8 ms; 0.5 GB at
  // 100 GB/s takes 5 ms: the flow ends at 13 ms.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  Finish a;
  const FlowId id = net.start({0}, bytes(1e9), a.fn(e));
  e.schedule_at(5 * kMs, [&] { net.set_capacity(0, GBps(0)); });
  e.run();
  EXPECT_EQ(a.at, -1);
  EXPECT_EQ(net.active_flows(), 1u);
  EXPECT_EQ(net.rate_Bps(id), 0.0);
  EXPECT_NEAR(net.remaining(id).value, 0.5e9, 1.0);
  e.schedule_at(8 * kMs, [&] { net.set_capacity(0, GBps(100)); });
  e.run();
  EXPECT_EQ(a.at, 13 * kMs);
}

TEST(FlowNetwork, BottleneckOfAMultiHopRouteSetsTheRate) {
  // Route over links of 100 and 40 GB/s: min is 40 GB/s; 2 GB / 40 GB/s = 50 ms.
  Engine e;
  FlowNetwork net(e, {GBps(100), GBps(40)});
  Finish a;
  net.start({0, 1}, bytes(2e9), a.fn(e));
  e.run();
  EXPECT_EQ(a.at, 50 * kMs);
  EXPECT_DOUBLE_EQ(net.bytes_carried(0).value, 2e9);
  EXPECT_DOUBLE_EQ(net.bytes_carried(1).value, 2e9);
}

TEST(FlowNetwork, RateCapBelowTheFairShareLeavesTheRestToOthers) {
  // 100 GB/s link; A capped at 10 GB/s with 1 GB, B uncapped with 0.9 GB.
  // A gets 10 GB/s, B the other 90 GB/s: B ends at 0.9e9 / 90e9 = 10 ms. A stays at its cap
  // throughout: 1e9 / 10e9 = 100 ms.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  Finish a, b;
  net.start({0}, bytes(1e9), a.fn(e), Seconds(0), GBps(10));
  net.start({0}, bytes(0.9e9), b.fn(e));
  e.run();
  EXPECT_EQ(b.at, 10 * kMs);
  EXPECT_EQ(a.at, 100 * kMs);
}

TEST(FlowNetwork, ZeroSizeFlowCompletesWhenItsLatencyHasPassed) {
  // Size 0 with 7 us latency: done at 7,000 ns. Size 0 without latency: done at t = 0, but
  // from an engine event, not inside start().
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  Finish a, b;
  net.start({0}, bytes(0), a.fn(e), microseconds(7));
  net.start({0}, bytes(0), b.fn(e));
  EXPECT_EQ(b.at, -1);
  e.run();
  EXPECT_EQ(a.at, 7 * kUs);
  EXPECT_EQ(b.at, 0);
  EXPECT_EQ(net.recomputations(), 0u);  // neither ever used bandwidth
}

TEST(FlowNetwork, FlowOverNoResourceMovesAtItsCap) {
  // A local copy modelled as a flow over no link, capped at 50 GB/s: 1 GB takes 20 ms.
  Engine e;
  FlowNetwork net(e, {});
  Finish a;
  net.start({}, bytes(1e9), a.fn(e), Seconds(0), GBps(50));
  e.run();
  EXPECT_EQ(a.at, 20 * kMs);
}

TEST(FlowNetwork, CompletionIsRoundedUpToWholeNanoseconds) {
  // 10 B at 3 B/ns (3 GB/s) takes 3.33 ns: it completes at 4 ns, never earlier.
  Engine e;
  FlowNetwork net(e, {GBps(3)});
  Finish a;
  net.start({0}, bytes(10), a.fn(e));
  e.run();
  EXPECT_EQ(a.at, 4);
}

TEST(FlowNetwork, HundredFlowsStartingTogetherCostOneRecomputation) {
  // 100 flows of 1 MB on one 100 GB/s link, all started at t = 0: one recomputation gives
  // each 1 GB/s, so all end together at 1e6 / 1e9 s = 1 ms. Their completions leave no
  // flow to re-solve, so the count stays at 1.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  std::vector<Finish> done(100);
  for (Finish& d : done) net.start({0}, bytes(1e6), d.fn(e));
  e.run();
  for (const Finish& d : done) EXPECT_EQ(d.at, kMs);
  EXPECT_EQ(net.recomputations(), 1u);
  EXPECT_EQ(net.flows_resolved(), 100u);
}

TEST(FlowNetwork, OnlyTheTouchedComponentIsResolved) {
  // Links 0 and 1 (100 GB/s each) are independent components.
  //   t = 0: A (1 GB, link 0) and B (1 GB, link 1) start: one recomputation of 2 flows.
  //          A runs alone at 100 GB/s and must end at exactly 10 ms whatever happens on link 1.
  //   t = 2 ms: C (0.1 GB) joins B on link 1 (B has 0.8 GB left): re-solve {B, C} only (2 flows).
  //          50 GB/s each: C ends at 2 + 0.1e9 / 50e9 s = 4 ms; B moved 0.1 GB (0.7 GB left).
  //   t = 4 ms: C ends: re-solve {B} only (1 flow); B alone: 0.7e9 / 100e9 = 7 ms -> 11 ms.
  //   t = 10 ms: A ends alone on link 0: nothing left to re-solve.
  // Recomputations: 3; flows re-solved: 2 + 2 + 1 = 5.
  Engine e;
  FlowNetwork net(e, {GBps(100), GBps(100)});
  Finish a, b, c;
  net.start({0}, bytes(1e9), a.fn(e));
  net.start({1}, bytes(1e9), b.fn(e));
  e.schedule_at(2 * kMs, [&] { net.start({1}, bytes(0.1e9), c.fn(e)); });
  e.run();
  EXPECT_EQ(a.at, 10 * kMs);
  EXPECT_EQ(c.at, 4 * kMs);
  EXPECT_EQ(b.at, 11 * kMs);
  EXPECT_EQ(net.recomputations(), 3u);
  EXPECT_EQ(net.flows_resolved(), 5u);
}

TEST(FlowNetwork, RingStepsEndTogetherWithOneRecomputationPerStep) {
  // 16 links of 300 GB/s in a ring; flow i uses links i, i+1, i+2 (mod 16), so each link
  // carries 3 flows and each flow gets 100 GB/s. A step moves 100 MB per flow:
  // 1e8 / 1e11 = 1 ms. 10 steps, each started when the previous one has fully ended:
  // 10 ms in all, one recomputation per step (10).
  const int n = 16;
  Engine e;
  std::vector<BytesPerSecond> caps(n, GBps(300));
  FlowNetwork net(e, caps);
  int step = 0;
  int left = 0;
  std::vector<SimTime> step_end;
  std::function<void()> start_step = [&] {
    left = n;
    for (int i = 0; i < n; ++i) {
      net.start({i, (i + 1) % n, (i + 2) % n}, bytes(1e8), [&](FlowId) {
        if (--left == 0) {
          step_end.push_back(e.now());
          if (++step < 10) start_step();
        }
      });
    }
  };
  start_step();
  e.run();
  ASSERT_EQ(step_end.size(), 10u);
  for (std::size_t s = 0; s < step_end.size(); ++s)
    EXPECT_EQ(step_end[s], static_cast<SimTime>(s + 1) * kMs);
  EXPECT_EQ(net.recomputations(), 10u);
}

TEST(FlowNetwork, LatenciesEndingTogetherStartTogether) {
  // 100 GB/s link. C (0.1 GB) has 3 us latency; A and B (0.5 GB each) have 5 us.
  //   3 us: C alone at 100 GB/s.
  //   5 us: C moved 2 us * 100 GB/s = 2e5 B (99.8e6 B left); A and B join: 100/3 GB/s each.
  //         C needs 99.8e6 / (1e11 / 3) = 2,994 us: ends at 2,999 us. A and B moved 99.8e6 B.
  //   2,999 us: A, B have 400.2e6 B left at 50 GB/s: 8,004 us more, both end at 11,003 us.
  // Recomputations: at 3 us, at 5 us (A and B together), at 2,999 us: 3.
  Engine e;
  FlowNetwork net(e, {GBps(100)});
  Finish a, b, c;
  net.start({0}, bytes(0.5e9), a.fn(e), microseconds(5));
  net.start({0}, bytes(0.1e9), c.fn(e), microseconds(3));
  net.start({0}, bytes(0.5e9), b.fn(e), microseconds(5));
  e.run();
  EXPECT_EQ(c.at, 2999 * kUs);
  EXPECT_EQ(a.at, 11003 * kUs);
  EXPECT_EQ(b.at, 11003 * kUs);
  EXPECT_EQ(net.recomputations(), 3u);
}

TEST(FlowNetwork, FlowBelowTheDoneThresholdCompletesAtOnce) {
  // 1e-7 B is below kDoneBytes (1e-6 B): it counts as done, at t = 0, with no recomputation.
  Engine e;
  FlowNetwork net(e, {GBps(1)});
  Finish a;
  net.start({0}, bytes(1e-7), a.fn(e));
  e.run();
  EXPECT_EQ(a.at, 0);
  EXPECT_EQ(net.recomputations(), 0u);
}

/// A random workload: 300 flows over random subsets of 6 links with random sizes, start
/// times, latencies and caps, plus two capacity changes. Returns (serial, end time) in
/// completion order and checks byte conservation on the way.
std::vector<std::pair<std::uint64_t, SimTime>> random_run(std::uint64_t seed) {
  std::uint64_t lcg = seed;
  auto next = [&] {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return lcg >> 33;
  };
  Engine e;
  const int n_links = 6;
  FlowNetwork net(e, std::vector<BytesPerSecond>(n_links, GBps(10)));
  std::vector<std::pair<std::uint64_t, SimTime>> ends;
  std::vector<double> expected_carried(n_links, 0.0);
  for (int i = 0; i < 300; ++i) {
    std::vector<int> route;
    for (int r = 0; r < n_links; ++r)
      if (next() % 3 == 0) route.push_back(r);
    const double size = static_cast<double>(1 + next() % 1000) * 1e5;
    for (int r : route) expected_carried[static_cast<std::size_t>(r)] += size;
    const Seconds latency = microseconds(static_cast<double>(next() % 4));
    const BytesPerSecond cap = next() % 5 == 0 ? GBps(2) : BytesPerSecond(kUnboundedRate);
    const SimTime at = static_cast<SimTime>(next() % 20) * 100 * kUs;
    e.schedule_at(at, [&net, &e, &ends, route, size, latency, cap]() mutable {
      net.start(
          std::move(route), bytes(size),
          [&ends, &e](FlowId id) { ends.emplace_back(id.serial, e.now()); }, latency, cap);
    });
  }
  e.schedule_at(500 * kUs, [&] { net.set_capacity(2, GBps(1)); });
  e.schedule_at(900 * kUs, [&] { net.set_capacity(2, GBps(30)); });
  e.run();
  EXPECT_EQ(ends.size(), 300u);
  EXPECT_EQ(net.active_flows(), 0u);
  // Conservation: each link carried exactly the bytes of the flows routed over it.
  for (int r = 0; r < n_links; ++r) {
    EXPECT_NEAR(net.bytes_carried(r).value, expected_carried[static_cast<std::size_t>(r)],
                1e-9 * expected_carried[static_cast<std::size_t>(r)] + 1.0);
  }
  return ends;
}

TEST(FlowNetwork, RandomWorkloadIsDeterministicAndConservesBytes) {
  // Same seed, same completion order and times, nanosecond for nanosecond.
  const auto first = random_run(2024);
  const auto second = random_run(2024);
  EXPECT_EQ(first, second);
}

struct TraceObserver : FlowObserver {
  std::vector<FlowInfo> started, finished;
  void on_flow_started(const FlowInfo& fi) override { started.push_back(fi); }
  void on_flow_finished(const FlowInfo& fi) override { finished.push_back(fi); }
};

TEST(FlowNetwork, ObserverSeesStartTransferAndEndTimes) {
  // 1 MB on 1 GB/s after 2 us latency: transfer from 2 us, 1e6 / 1e9 = 1 ms, end 1.002 ms.
  Engine e;
  FlowNetwork net(e, {GBps(1)});
  TraceObserver obs;
  net.add_observer(&obs);
  const FlowId id = net.start({0}, bytes(1e6), nullptr, microseconds(2));
  e.run();
  ASSERT_EQ(obs.started.size(), 1u);
  ASSERT_EQ(obs.finished.size(), 1u);
  EXPECT_EQ(obs.started[0].id, id);
  EXPECT_EQ(obs.started[0].start, 0);
  EXPECT_EQ(obs.finished[0].transfer, 2 * kUs);
  EXPECT_EQ(obs.finished[0].end, kMs + 2 * kUs);
  EXPECT_EQ(obs.finished[0].size.value, 1e6);
}

TEST(FlowNetwork, DestroyingTheNetworkCancelsItsEvents) {
  // A network that goes away with a flow in flight must leave no event that would call it.
  Engine e;
  {
    FlowNetwork net(e, {GBps(1)});
    net.start({0}, bytes(1e6), nullptr, microseconds(1));
    net.start({0}, bytes(1e6), nullptr);
    e.run(0);  // the resolve at t = 0 schedules the second flow's completion
    EXPECT_FALSE(e.empty());
  }
  EXPECT_EQ(e.run(), 0u);
  EXPECT_TRUE(e.empty());
}

}  // namespace
}  // namespace scalescope
