// Engine speed: events per second for a self-rescheduling chain, a heap of 1,000 pending
// events, and a schedule/cancel mix (the flow network's completion-event pattern).
#include "scalescope/sim/engine.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>

namespace {

using scalescope::Engine;
using scalescope::EventId;
using scalescope::SimTime;

constexpr std::int64_t kEvents = 1'000'000;

// Each fired event schedules the next one 1 ns later: one pending event at a time.
void BM_EngineChain(benchmark::State& state) {
  std::uint64_t total = 0;
  for (auto _ : state) {
    Engine e;
    struct Ticker {
      Engine* e;
      std::int64_t left;
      void fire() {
        if (--left > 0) e->schedule_after(1, [this] { fire(); });
      }
    } ticker{&e, kEvents};
    e.schedule_at(0, [&ticker] { ticker.fire(); });
    total += e.run();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineChain)->Unit(benchmark::kMillisecond);

// 1,000 pending events; each fired event schedules a replacement at a pseudo-random
// 1..1,024 ns ahead, so every pop and push works on a heap of 1,000.
void BM_EngineHeap1000(benchmark::State& state) {
  std::uint64_t total = 0;
  for (auto _ : state) {
    Engine e;
    struct Source {
      Engine* e;
      std::int64_t left;
      std::uint64_t lcg = 7;
      void fire() {
        if (--left <= 0) return;
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        e->schedule_after(static_cast<SimTime>(1 + ((lcg >> 33) & 1023)), [this] { fire(); });
      }
    } src{&e, kEvents};
    for (int i = 0; i < 1000; ++i) e.schedule_at(i, [&src] { src.fire(); });
    total += e.run();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineHeap1000)->Unit(benchmark::kMillisecond);

// Each fired event schedules two events and cancels one of them (1,000 pending): the cost
// of lazy cancellation, including the heap rebuilds it triggers.
void BM_EngineScheduleCancel(benchmark::State& state) {
  std::uint64_t total = 0;
  for (auto _ : state) {
    Engine e;
    struct Source {
      Engine* e;
      std::int64_t left;
      std::uint64_t lcg = 11;
      void fire() {
        if (--left <= 0) return;
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        const SimTime dt = static_cast<SimTime>(1 + ((lcg >> 33) & 1023));
        const EventId doomed = e->schedule_after(dt + 7, [this] { fire(); });
        e->schedule_after(dt, [this] { fire(); });
        e->cancel(doomed);
      }
    } src{&e, kEvents};
    for (int i = 0; i < 1000; ++i) e.schedule_at(i, [&src] { src.fire(); });
    total += e.run();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineScheduleCancel)->Unit(benchmark::kMillisecond);

}  // namespace
