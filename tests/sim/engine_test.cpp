// Tests for the discrete-event engine: time order, stable ties, end-of-instant events,
// cancellation, run(until), stop(), observers and the inline callback.
#include "scalescope/sim/engine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

namespace scalescope {
namespace {

TEST(Engine, EventsFireInTimeOrderNotSchedulingOrder) {
  Engine e;
  std::vector<int> order;
  e.schedule_at(30, [&] { order.push_back(30); });
  e.schedule_at(10, [&] { order.push_back(10); });
  e.schedule_at(20, [&] { order.push_back(20); });
  // Three events, fired by increasing time; the clock ends at the last one (30 ns).
  EXPECT_EQ(e.run(), 3u);
  EXPECT_EQ(order, (std::vector<int>{10, 20, 30}));
  EXPECT_EQ(e.now(), 30);
  EXPECT_TRUE(e.empty());
  EXPECT_EQ(e.events_fired(), 3u);
}

TEST(Engine, SameTimeEventsFireInSchedulingOrder) {
  Engine e;
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) e.schedule_at(7, [&order, i] { order.push_back(i); });
  // An event scheduled at t=7 from inside a t=7 callback was scheduled later than the five
  // above, so it fires after all of them: expected 0 1 2 3 4 then 99.
  e.schedule_at(5, [&] { e.schedule_at(7, [&] { order.push_back(99); }); });
  e.run();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4, 99}));
}

TEST(Engine, EndOfInstantEventsFireAfterAllNormalEventsOfThatInstant) {
  Engine e;
  std::vector<int> order;
  e.schedule_at(
      4, [&] { order.push_back(1); }, EventOrder::end_of_instant);
  e.schedule_at(4, [&] {
    order.push_back(2);
    // Scheduled after the late event, but normal: still before it.
    e.schedule_at(4, [&] { order.push_back(3); });
  });
  e.schedule_at(
      3, [&] { order.push_back(0); }, EventOrder::end_of_instant);
  // t=3: the late event (0). t=4: normal events first (2, then 3 which 2 scheduled), then
  // the late one (1).
  e.run();
  EXPECT_EQ(order, (std::vector<int>{0, 2, 3, 1}));
}

TEST(Engine, CancelledEventNeverFiresAndCancelReportsState) {
  Engine e;
  int fired = 0;
  const EventId a = e.schedule_at(10, [&] { ++fired; });
  const EventId b = e.schedule_at(20, [&] { fired += 10; });
  EXPECT_TRUE(e.pending(a));
  EXPECT_TRUE(e.cancel(a));
  EXPECT_FALSE(e.pending(a));
  EXPECT_FALSE(e.cancel(a));          // already cancelled
  EXPECT_FALSE(e.cancel(EventId{}));  // no event
  EXPECT_EQ(e.pending_events(), 1u);
  // Only b fires: fired == 10, one event.
  EXPECT_EQ(e.run(), 1u);
  EXPECT_EQ(fired, 10);
  EXPECT_FALSE(e.cancel(b));  // already fired
}

TEST(Engine, CallbackCanCancelALaterEventButNotItself) {
  Engine e;
  bool later_fired = false;
  bool self_cancel_result = true;
  EventId later;
  EventId self;
  self = e.schedule_at(1, [&] {
    self_cancel_result = e.cancel(self);
    EXPECT_TRUE(e.cancel(later));
  });
  later = e.schedule_at(2, [&] { later_fired = true; });
  EXPECT_EQ(e.run(), 1u);
  EXPECT_FALSE(self_cancel_result);
  EXPECT_FALSE(later_fired);
}

TEST(Engine, ReusedSlotDoesNotResurrectACancelledId) {
  Engine e;
  int fired = 0;
  const EventId a = e.schedule_at(10, [&] { fired += 1; });
  ASSERT_TRUE(e.cancel(a));
  // The new event may reuse a's storage; cancelling a again must not touch it.
  const EventId b = e.schedule_at(10, [&] { fired += 2; });
  EXPECT_FALSE(e.cancel(a));
  EXPECT_TRUE(e.pending(b));
  e.run();
  EXPECT_EQ(fired, 2);
}

TEST(Engine, RunUntilFiresOnlyEventsUpToTheLimitAndAdvancesTheClock) {
  Engine e;
  std::vector<SimTime> seen;
  for (SimTime t : {10, 20, 30}) e.schedule_at(t, [&] { seen.push_back(e.now()); });
  // until is inclusive: 10 and 20 fire, the clock then reads 20.
  EXPECT_EQ(e.run(20), 2u);
  EXPECT_EQ(e.now(), 20);
  // Nothing in (20, 25]: no event, the clock moves to 25.
  EXPECT_EQ(e.run(25), 0u);
  EXPECT_EQ(e.now(), 25);
  EXPECT_EQ(e.next_event_time(), 30);
  EXPECT_EQ(e.run(), 1u);
  EXPECT_EQ(seen, (std::vector<SimTime>{10, 20, 30}));
  EXPECT_EQ(e.next_event_time(), kSimTimeMax);
}

TEST(Engine, ScheduleAfterIsRelativeToTheCurrentTime) {
  Engine e;
  std::vector<SimTime> seen;
  // A chain of 4 events, each 250 ns after the previous one, starting at 100:
  // 100, 350, 600, 850.
  std::function<void()> step = [&] {
    seen.push_back(e.now());
    if (seen.size() < 4) e.schedule_after(250, step);
  };
  e.schedule_at(100, step);
  e.run();
  EXPECT_EQ(seen, (std::vector<SimTime>{100, 350, 600, 850}));
}

TEST(Engine, StopReturnsAfterTheCurrentEvent) {
  Engine e;
  int fired = 0;
  e.schedule_at(1, [&] { ++fired; });
  e.schedule_at(2, [&] {
    ++fired;
    e.stop();
  });
  e.schedule_at(3, [&] { ++fired; });
  // Stops after the second event: 2 fired, clock at 2 (not advanced to `until`).
  EXPECT_EQ(e.run(100), 2u);
  EXPECT_EQ(e.now(), 2);
  EXPECT_EQ(e.run(), 1u);
  EXPECT_EQ(fired, 3);
}

TEST(Engine, ManyRandomEventsWithCancellationsMatchAStableSort) {
  // Reference: the expected firing order is the surviving events stably sorted by time
  // (ties in scheduling order). 20,000 events at times 0..999 (many ties), every third one
  // cancelled, which also exercises the heap's rebuild of cancelled entries.
  Engine e;
  std::uint64_t lcg = 12345;
  auto next = [&] {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return lcg >> 33;
  };
  struct Ev {
    SimTime t;
    int index;
  };
  std::vector<Ev> expected;
  std::vector<int> fired;
  std::vector<EventId> ids;
  for (int i = 0; i < 20000; ++i) {
    const SimTime t = static_cast<SimTime>(next() % 1000);
    ids.push_back(e.schedule_at(t, [&fired, i] { fired.push_back(i); }));
    if (i % 3 != 0) expected.push_back({t, i});
  }
  for (int i = 0; i < 20000; i += 3) ASSERT_TRUE(e.cancel(ids[static_cast<std::size_t>(i)]));
  std::stable_sort(expected.begin(), expected.end(),
                   [](const Ev& a, const Ev& b) { return a.t < b.t; });
  std::vector<int> expected_order;
  for (const Ev& ev : expected) expected_order.push_back(ev.index);
  EXPECT_EQ(e.run(), expected_order.size());
  EXPECT_EQ(fired, expected_order);
}

struct RecordingObserver : EngineObserver {
  std::vector<std::pair<SimTime, SimTime>> scheduled;  // (now, at)
  std::vector<SimTime> events;
  int cancels = 0;
  void on_schedule(SimTime now, SimTime at, EventId) override { scheduled.emplace_back(now, at); }
  void on_cancel(SimTime, EventId) override { ++cancels; }
  void on_event(SimTime now, EventId) override { events.push_back(now); }
};

TEST(Engine, ObserversSeeSchedulesCancelsAndEvents) {
  Engine e;
  RecordingObserver obs;
  e.add_observer(&obs);
  e.schedule_at(5, [&] { e.schedule_after(3, [] {}); });
  const EventId c = e.schedule_at(6, [] {});
  e.cancel(c);
  e.run();
  // Schedules: (0 -> 5), (0 -> 6), then (5 -> 8) from inside the first event.
  EXPECT_EQ(obs.scheduled, (std::vector<std::pair<SimTime, SimTime>>{{0, 5}, {0, 6}, {5, 8}}));
  EXPECT_EQ(obs.cancels, 1);
  EXPECT_EQ(obs.events, (std::vector<SimTime>{5, 8}));
  e.remove_observer(&obs);
  e.schedule_after(1, [] {});
  e.run();
  EXPECT_EQ(obs.events.size(), 2u);  // removed: saw nothing more
}

TEST(Callback, LargeAndMoveOnlyCallablesWorkAndAreDestroyedOnCancel) {
  Engine e;
  auto token = std::make_shared<int>(0);
  // 64 bytes of capture exceed the 48-byte inline buffer: stored on the heap.
  std::array<std::int64_t, 8> big{1, 2, 3, 4, 5, 6, 7, 8};
  std::int64_t sum = 0;
  e.schedule_at(1, [big, &sum, token] {
    for (auto v : big) sum += v;
  });
  auto owned = std::make_unique<int>(41);
  e.schedule_at(2, [p = std::move(owned), &sum] { sum += *p; });
  const EventId c = e.schedule_at(3, [token] {});
  // Three copies of the token: ours, the first event's, the cancelled event's.
  EXPECT_EQ(token.use_count(), 3);
  e.cancel(c);
  EXPECT_EQ(token.use_count(), 2);  // the cancelled callback was destroyed at once
  e.run();
  // 1 + ... + 8 = 36, plus 41.
  EXPECT_EQ(sum, 77);
  EXPECT_EQ(token.use_count(), 1);  // fired callbacks are destroyed too
}

}  // namespace
}  // namespace scalescope
