// Discrete-event engine: an integer-nanosecond clock, a 4-ary heap of pending events with a
// stable tie-break, O(1) lazy cancellation and observers that cost one branch when absent.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "scalescope/sim/callback.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope {

/// Names one scheduled event. Default-constructed: no event (valid() == false).
struct EventId {
  std::uint64_t key = 0;   ///< (order bit << 63) | scheduling sequence number; 0 = none
  std::uint32_t slot = 0;  ///< where the engine keeps its callback
  bool valid() const { return key != 0; }
  friend bool operator==(const EventId&, const EventId&) = default;
};

/// Among events at the same instant, all `normal` ones fire (in scheduling order) before any
/// `end_of_instant` one (also in scheduling order). Models use end_of_instant to do work once
/// per instant after everything else that happens then (e.g. re-solving bandwidth shares).
enum class EventOrder : std::uint8_t { normal, end_of_instant };

/// Watches an engine (tracing, statistics) without the engine knowing what it is for.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  /// An event was scheduled at time `at` while the clock read `now`.
  virtual void on_schedule(SimTime /*now*/, SimTime /*at*/, EventId) {}
  /// A pending event was cancelled.
  virtual void on_cancel(SimTime /*now*/, EventId) {}
  /// An event is about to fire (the clock already reads its time).
  virtual void on_event(SimTime /*now*/, EventId) {}
};

/// Runs callbacks in time order. Events at the same time fire in the order they were scheduled
/// (see EventOrder for the one exception), so runs are deterministic. Not thread-safe; use one
/// engine per simulation (the planner runs many engines in parallel threads).
class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Schedules `fn` (any callable `void()`) at absolute time t >= now().
  template <class F>
  EventId schedule_at(SimTime t, F&& fn, EventOrder order = EventOrder::normal) {
    assert(t >= now_ && "Engine::schedule_at: scheduling in the past");
    const std::uint32_t s = acquire_slot();
    Slot& sl = slot(s);
    sl.cb.emplace(std::forward<F>(fn));
    const std::uint64_t key = next_seq_++ | (order == EventOrder::normal ? 0 : kLateBit);
    sl.key = key;
    push(Entry{t, key, s});
    ++live_;
    const EventId id{key, s};
    if (!observers_.empty()) [[unlikely]]
      notify_schedule(t, id);
    return id;
  }

  /// Schedules `fn` at now() + dt (dt >= 0; saturates at kSimTimeMax).
  template <class F>
  EventId schedule_after(SimTime dt, F&& fn, EventOrder order = EventOrder::normal) {
    assert(dt >= 0 && "Engine::schedule_after: negative delay");
    const SimTime t = dt > kSimTimeMax - now_ ? kSimTimeMax : now_ + dt;
    return schedule_at(t, std::forward<F>(fn), order);
  }

  /// Cancels a pending event: it will never fire and its callback is destroyed now. Returns
  /// false if `id` already fired, is firing, was cancelled, or is not valid. O(1) amortized.
  bool cancel(EventId id);

  /// True while `id` is scheduled and has neither fired nor been cancelled.
  bool pending(EventId id) const {
    return id.valid() && id.slot < slot_count_ && slot(id.slot).key == id.key;
  }

  SimTime now() const { return now_; }

  /// Fires every pending event with time <= until, in order, including those scheduled by the
  /// callbacks themselves, and returns how many fired. Afterwards now() is the time of the
  /// last event fired, or `until` when until < kSimTimeMax and all events up to it were
  /// processed (the clock never goes back). A callback may call stop() to return early.
  std::uint64_t run(SimTime until = kSimTimeMax);

  /// From inside a callback: run() returns once the current event has finished.
  void stop() { stop_requested_ = true; }

  /// True when no event is pending.
  bool empty() const { return live_ == 0; }
  std::size_t pending_events() const { return live_; }
  /// Events fired over the engine's lifetime.
  std::uint64_t events_fired() const { return fired_; }

  /// Time of the next pending event, or kSimTimeMax if none.
  SimTime next_event_time();

  /// Observers are not owned and must outlive the engine or be removed first.
  void add_observer(EngineObserver* observer);
  void remove_observer(EngineObserver* observer);

 private:
  static constexpr std::uint64_t kLateBit = std::uint64_t{1} << 63;
  static constexpr std::uint64_t kSignBit = std::uint64_t{1} << 63;
  static constexpr unsigned kChunkBits = 10;  // 1,024 slots (64 KiB) per chunk
  static constexpr std::uint32_t kChunkMask = (1u << kChunkBits) - 1;

  struct Entry {  // a heap element: plain data, ordered by (time, key)
    SimTime time;
    std::uint64_t key;
    std::uint32_t slot;
  };
  struct Slot {
    Callback cb;
    std::uint64_t key = 0;  // key of the pending event that owns the slot; 0: free or firing
  };

  // (time, key) as one unsigned 128-bit number (time's sign bit flipped so the order of
  // signed times is kept): one comparison, which the compiler can do without branches.
  __extension__ using OrderKey = unsigned __int128;
  static OrderKey order_key(const Entry& e) {
    return (static_cast<OrderKey>(static_cast<std::uint64_t>(e.time) ^ kSignBit) << 64) | e.key;
  }

  // Slots live in fixed-size chunks so that a callback's storage stays put while it runs,
  // even if it schedules enough events to add chunks.
  Slot& slot(std::uint32_t s) { return chunks_[s >> kChunkBits][s & kChunkMask]; }
  const Slot& slot(std::uint32_t s) const { return chunks_[s >> kChunkBits][s & kChunkMask]; }

  std::uint32_t acquire_slot() {
    if (!free_.empty()) {
      const std::uint32_t s = free_.back();
      free_.pop_back();
      return s;
    }
    if ((slot_count_ & kChunkMask) == 0) add_chunk();
    return slot_count_++;
  }

  void push(Entry e) {
    std::size_t i = heap_.size();
    heap_.push_back(e);
    const OrderKey k = order_key(e);
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!(k < order_key(heap_[parent]))) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }

  void pop_top();
  void sift_down(std::size_t i, Entry e);
  void drop_stale_top();
  void compact();
  void add_chunk();
  void notify_schedule(SimTime at, EventId id);

  std::vector<Entry> heap_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::vector<std::uint32_t> free_;
  std::vector<EngineObserver*> observers_;
  std::uint32_t slot_count_ = 0;
  std::uint64_t next_seq_ = 1;
  std::uint64_t fired_ = 0;
  std::size_t live_ = 0;   // pending events
  std::size_t stale_ = 0;  // heap entries of cancelled events, dropped lazily
  SimTime now_ = 0;
  bool running_ = false;
  bool stop_requested_ = false;
};

}  // namespace scalescope
