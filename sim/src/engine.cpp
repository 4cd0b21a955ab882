// Discrete-event engine: the event loop, lazy cancellation and heap maintenance.
#include "scalescope/sim/engine.hpp"

#include <algorithm>

namespace scalescope {

Engine::Engine() = default;
Engine::~Engine() = default;

void Engine::add_chunk() {
  assert(slot_count_ < (std::uint32_t{1} << 31) && "Engine: too many pending events");
  chunks_.push_back(std::make_unique<Slot[]>(std::size_t{1} << kChunkBits));
}

void Engine::sift_down(std::size_t i, Entry e) {
  const std::size_t n = heap_.size();
  const OrderKey k = order_key(e);
  for (;;) {
    const std::size_t first = 4 * i + 1;
    if (first >= n) break;
    std::size_t best = first;
    OrderKey best_key = order_key(heap_[first]);
    const std::size_t last = std::min(first + 4, n);
    for (std::size_t c = first + 1; c < last; ++c) {  // branch-free minimum of the children
      const OrderKey ck = order_key(heap_[c]);
      const bool smaller = ck < best_key;
      best = smaller ? c : best;
      best_key = smaller ? ck : best_key;
    }
    if (!(best_key < k)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

void Engine::pop_top() {
  const Entry last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
}

bool Engine::cancel(EventId id) {
  if (!pending(id)) return false;
  Slot& s = slot(id.slot);
  s.key = 0;
  s.cb.reset();
  free_.push_back(id.slot);
  --live_;
  ++stale_;
  if (!observers_.empty()) [[unlikely]] {
    for (EngineObserver* o : observers_) o->on_cancel(now_, id);
  }
  // Cancelled entries stay in the heap until popped; rebuild once they are the majority so
  // that the heap stays O(pending events) under heavy cancel/reschedule traffic.
  if (stale_ > 64 && 2 * stale_ > heap_.size()) compact();
  return true;
}

void Engine::compact() {
  std::erase_if(heap_, [this](const Entry& e) { return slot(e.slot).key != e.key; });
  stale_ = 0;
  // Floyd's bottom-up heap construction; (time, key) is a total order, so the result does not
  // depend on the order of the entries.
  if (heap_.size() > 1) {
    for (std::size_t i = (heap_.size() - 2) / 4 + 1; i-- > 0;) sift_down(i, heap_[i]);
  }
}

void Engine::drop_stale_top() {
  while (!heap_.empty() && slot(heap_.front().slot).key != heap_.front().key) {
    pop_top();
    --stale_;
  }
}

SimTime Engine::next_event_time() {
  drop_stale_top();
  return heap_.empty() ? kSimTimeMax : heap_.front().time;
}

std::uint64_t Engine::run(SimTime until) {
  assert(!running_ && "Engine::run is not reentrant");
  running_ = true;
  stop_requested_ = false;
  std::uint64_t fired = 0;
  bool drained = true;  // every event with time <= until was processed
  while (!heap_.empty()) {
    const Entry top = heap_.front();
    if (top.time > until) break;
    pop_top();
    Slot& s = slot(top.slot);
    if (s.key != top.key) {  // cancelled
      --stale_;
      continue;
    }
    s.key = 0;  // firing: no longer cancellable, slot not yet reusable
    --live_;
    now_ = top.time;
    if (!observers_.empty()) [[unlikely]] {
      for (EngineObserver* o : observers_) o->on_event(now_, EventId{top.key, top.slot});
    }
    s.cb();
    s.cb.reset();
    free_.push_back(top.slot);
    ++fired;
    ++fired_;
    if (stop_requested_) {
      drained = false;
      break;
    }
  }
  if (drained && until != kSimTimeMax && now_ < until) now_ = until;
  running_ = false;
  stop_requested_ = false;
  return fired;
}

void Engine::add_observer(EngineObserver* observer) {
  assert(observer != nullptr && "Engine::add_observer: null observer");
  observers_.push_back(observer);
}

void Engine::remove_observer(EngineObserver* observer) { std::erase(observers_, observer); }

void Engine::notify_schedule(SimTime at, EventId id) {
  for (EngineObserver* o : observers_) o->on_schedule(now_, at, id);
}

}  // namespace scalescope
