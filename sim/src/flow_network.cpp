// FlowNetwork: flow lifecycle (latency, transfer, completion batches), capacities and queries.
// The once-per-instant re-solve lives in flow_network_resolve.cpp.
#include "scalescope/sim/flow_network.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <utility>

namespace scalescope {
namespace {

constexpr double kSecondsPerNs = 1e-9;

SimTime saturating_add(SimTime t, SimTime dt) {
  return dt > kSimTimeMax - t ? kSimTimeMax : t + dt;
}

}  // namespace

FlowNetwork::FlowNetwork(Engine& engine, std::vector<BytesPerSecond> capacities) : engine_(engine) {
  const std::size_t n = capacities.size();
  capacity_.reserve(n);
  for (const BytesPerSecond c : capacities) {
    assert(c.value >= 0.0 && "FlowNetwork: negative capacity");
    capacity_.push_back(c.value);
  }
  carried_.assign(n, 0.0);
  users_.resize(n);
  res_mark_.assign(n, 0);
  res_local_.assign(n, 0);
  res_dirty_.assign(n, 0);
  load_.assign(n, 0);
}

FlowNetwork::~FlowNetwork() {
  if (resolve_event_.valid()) engine_.cancel(resolve_event_);
  for (const Batch& b : batches_) {
    if (b.event.valid()) engine_.cancel(b.event);
  }
}

FlowId FlowNetwork::start(std::span<const int> resources, Bytes size, DoneFn on_done, Seconds latency,
                          BytesPerSecond rate_cap, std::uint32_t count) {
  assert(count >= 1 && "FlowNetwork::start: count must be at least 1");
  assert(size.value >= 0.0 && "FlowNetwork::start: negative size");
  assert(latency.value >= 0.0 && "FlowNetwork::start: negative latency");
  assert(rate_cap.value >= 0.0 && "FlowNetwork::start: negative rate cap");
#ifndef NDEBUG
  for (std::size_t i = 0; i < resources.size(); ++i) {
    assert(resources[i] >= 0 && resources[i] < resource_count() && "FlowNetwork: bad resource");
    for (std::size_t j = i + 1; j < resources.size(); ++j)
      assert(resources[i] != resources[j] && "FlowNetwork: a flow uses a resource at most once");
  }
#endif
  std::uint32_t f = 0;
  if (!free_flows_.empty()) {
    f = free_flows_.back();
    free_flows_.pop_back();
  } else {
    f = static_cast<std::uint32_t>(flows_.size());
    flows_.emplace_back();
  }
  Flow& fl = flows_[f];
  fl.hops.clear();
  for (const int r : resources) fl.hops.push_back(Hop{r, 0});
  fl.on_done = std::move(on_done);
  fl.size = size.value;
  fl.remaining = size.value;
  fl.rate = 0.0;
  fl.cap = rate_cap.value;
  fl.count = count;
  fl.start = engine_.now();
  fl.transfer = 0;
  fl.last_update = engine_.now();
  fl.serial = next_serial_++;
  fl.mark = 0;
  fl.batch = kNoBatch;
  fl.state = State::waiting;
  const FlowId id{fl.serial, f};
  ++active_;

  const SimTime delay = to_sim_time(latency);
  if (delay > 0) {
    // Flows whose latency ends at the same time as the previous one's share its wake-up
    // event (a collective step starts many flows with the same latency at once).
    const SimTime t = saturating_add(engine_.now(), delay);
    if (open_wake_ == kNoBatch || batches_[open_wake_].time != t) {
      open_wake_ = new_batch();
      Batch& wake = batches_[open_wake_];
      wake.time = t;
      wake.wakes = true;
      wake.event = engine_.schedule_at(t, [this, b = open_wake_] { fire_batch(b); });
    }
    Batch& wake = batches_[open_wake_];
    wake.members.push_back(Member{f, fl.serial});
    ++wake.live;
  } else {
    begin_transfer(f);
  }
  if (!observers_.empty()) {
    Route route;
    const FlowInfo fi = info(flows_[f], id, route);
    for (FlowObserver* o : observers_) o->on_flow_started(fi);
  }
  return id;
}

void FlowNetwork::begin_transfer(std::uint32_t f) {
  Flow& fl = flows_[f];
  fl.transfer = engine_.now();
  fl.last_update = engine_.now();
  if (fl.remaining <= kDoneBytes) {  // nothing to move: done once the latency has passed
    const Completion now_done{engine_.now(), f};
    schedule_completions({&now_done, 1});
    return;
  }
  fl.state = State::transferring;
  set_bound(f);
  add_load(fl, +1);
  for (std::size_t k = 0; k < fl.hops.size(); ++k) {
    const int r = fl.hops[k].resource;
    fl.hops[k].pos = static_cast<std::uint32_t>(users_[r].size());
    users_[r].push_back(User{f, static_cast<std::uint32_t>(k)});
    mark_dirty(r);
  }
  dirty_flows_.push_back(f);
  request_resolve();
}

std::uint32_t FlowNetwork::new_batch() {
  if (!free_batches_.empty()) {
    const std::uint32_t b = free_batches_.back();
    free_batches_.pop_back();
    return b;
  }
  batches_.emplace_back();
  return static_cast<std::uint32_t>(batches_.size() - 1);
}

void FlowNetwork::schedule_completions(std::span<const Completion> sorted) {
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t end = i + 1;
    while (end < sorted.size() && sorted[end].time == sorted[i].time) ++end;
    const std::uint32_t b = new_batch();
    Batch& batch = batches_[b];
    batch.time = sorted[i].time;
    batch.wakes = false;
    batch.live = static_cast<std::uint32_t>(end - i);
    for (; i < end; ++i) {
      Flow& fl = flows_[sorted[i].flow];
      assert(fl.batch == kNoBatch && "FlowNetwork: flow already has a completion");
      fl.batch = b;
      fl.token = next_token_++;
      batch.members.push_back(Member{sorted[i].flow, fl.token});
    }
    batch.event = engine_.schedule_at(sorted[end - 1].time, [this, b] { fire_batch(b); });
  }
}

void FlowNetwork::leave_batch(std::uint32_t f) {
  Flow& fl = flows_[f];
  if (fl.batch == kNoBatch) return;
  Batch& batch = batches_[fl.batch];
  if (--batch.live == 0) {  // nobody left to complete: drop the event and recycle the batch
    engine_.cancel(batch.event);
    batch.event = {};
    batch.members.clear();
    free_batches_.push_back(fl.batch);
  }
  fl.batch = kNoBatch;
}

void FlowNetwork::fire_batch(std::uint32_t b) {
  // Callbacks may start flows, which may create batches, so work on a copy of the member list
  // and recycle the batch only at the end.
  firing_.swap(batches_[b].members);
  batches_[b].event = {};
  const bool wakes = batches_[b].wakes;
  if (open_wake_ == b) open_wake_ = kNoBatch;
  for (const Member& m : firing_) {
    if (wakes) {  // latency over: start moving bytes
      if (flows_[m.flow].serial == m.token) begin_transfer(m.flow);
      continue;
    }
    Flow& fl = flows_[m.flow];
    if (fl.batch != b || fl.token != m.token) continue;  // left the batch since
    fl.batch = kNoBatch;
    finish(m.flow);
  }
  firing_.clear();
  firing_.swap(batches_[b].members);
  batches_[b].live = 0;
  free_batches_.push_back(b);
}

void FlowNetwork::finish(std::uint32_t f) {
  {
    Flow& fl = flows_[f];
    if (fl.state == State::transferring) {
      // A completion stays scheduled only while the rate it was computed from holds, so the
      // bytes left as of last_update are exactly what moved since.
      const double moved = std::max(fl.remaining, 0.0) * fl.count;
      add_load(fl, -1);
      bool others = false;
      for (const Hop& hop : fl.hops) {
        const int r = hop.resource;
        carried_[r] += moved;
        std::vector<User>& u = users_[r];
        const User last = u.back();
        u[hop.pos] = last;
        flows_[last.flow].hops[last.k].pos = hop.pos;
        u.pop_back();
        if (!u.empty()) {
          mark_dirty(r);
          others = true;
        }
      }
      if (others) request_resolve();
    }
    fl.remaining = 0.0;
    fl.rate = 0.0;
  }
  const FlowId id{flows_[f].serial, f};
  if (!observers_.empty()) {
    Route route;  // this call's copy: an observer may start flows, which reuses slots and grows flows_
    FlowInfo fi = info(flows_[f], id, route);
    fi.end = engine_.now();
    for (FlowObserver* o : observers_) o->on_flow_finished(fi);
  }
  Flow& fl = flows_[f];  // observers may have started flows (flows_ may have grown)
  DoneFn done = std::move(fl.on_done);
  fl.on_done = nullptr;
  fl.serial = 0;
  fl.state = State::free;
  free_flows_.push_back(f);
  --active_;
  if (done) done(id);
}

namespace {
// Loads at or above this are never slack (a flow without a finite bound).
constexpr std::uint64_t kUnboundedLoad = std::uint64_t{1} << 62;
}  // namespace

void FlowNetwork::set_bound(std::uint32_t f) {
  Flow& fl = flows_[f];
  double b = fl.cap;
  for (const Hop& hop : fl.hops) b = std::min(b, capacity_[hop.resource] / fl.count);
  fl.bound = b;
  const double load = std::ceil(b) * fl.count;
  fl.load = load < static_cast<double>(kUnboundedLoad) ? static_cast<std::uint64_t>(load) + fl.count : kUnboundedLoad;
}

void FlowNetwork::add_load(const Flow& fl, int sign) {
  for (const Hop& hop : fl.hops) {
    std::uint64_t& l = load_[hop.resource];
    l = sign > 0 ? std::min(l + fl.load, kUnboundedLoad * 2) : l - fl.load;
  }
}

bool FlowNetwork::slack(int resource) const {
  return load_[resource] < kUnboundedLoad && static_cast<double>(load_[resource]) <= capacity_[resource];
}

void FlowNetwork::mark_dirty(int resource) {
  if (res_dirty_[resource] == 0) {
    res_dirty_[resource] = 1;
    dirty_res_.push_back(resource);
  }
}

void FlowNetwork::request_resolve() {
  if (!resolve_event_.valid()) {
    resolve_event_ = engine_.schedule_at(
        engine_.now(), [this] { resolve(); }, EventOrder::end_of_instant);
  }
}

const FlowNetwork::Flow* FlowNetwork::find(FlowId id) const {
  if (!id.valid() || id.slot >= flows_.size()) return nullptr;
  const Flow& fl = flows_[id.slot];
  return fl.serial == id.serial ? &fl : nullptr;
}

void FlowNetwork::set_capacity(int resource, BytesPerSecond capacity) {
  assert(resource >= 0 && resource < resource_count() && "FlowNetwork: bad resource");
  assert(capacity.value >= 0.0 && "FlowNetwork: negative capacity");
  capacity_[resource] = capacity.value;
  if (!users_[resource].empty()) {
    // The bounds of the flows on it change, and with them the loads of their other resources.
    for (const User& u : users_[resource]) {
      Flow& fl = flows_[u.flow];
      add_load(fl, -1);
      set_bound(u.flow);
      add_load(fl, +1);
      for (const Hop& hop : fl.hops) mark_dirty(hop.resource);
    }
    request_resolve();
  }
}

BytesPerSecond FlowNetwork::capacity(int resource) const {
  assert(resource >= 0 && resource < resource_count() && "FlowNetwork: bad resource");
  return BytesPerSecond(capacity_[resource]);
}

double FlowNetwork::rate_Bps(FlowId id) const {
  const Flow* fl = find(id);
  return fl != nullptr && fl->state == State::transferring ? fl->rate : 0.0;
}

Bytes FlowNetwork::remaining(FlowId id) const {
  const Flow* fl = find(id);
  if (fl == nullptr) return Bytes(0.0);
  if (fl->state != State::transferring || fl->rate <= 0.0)
    return Bytes(std::max(fl->remaining, 0.0));
  const SimTime dt = engine_.now() - fl->last_update;
  if (dt <= 0) return Bytes(std::max(fl->remaining, 0.0));  // also avoids inf * 0
  return Bytes(std::max(fl->remaining - fl->rate * static_cast<double>(dt) * kSecondsPerNs, 0.0));
}

bool FlowNetwork::is_active(FlowId id) const { return find(id) != nullptr; }

Bytes FlowNetwork::bytes_carried(int resource) const {
  assert(resource >= 0 && resource < resource_count() && "FlowNetwork: bad resource");
  double total = carried_[resource];
  for (const User& u : users_[resource]) {
    const Flow& fl = flows_[u.flow];
    const SimTime dt = engine_.now() - fl.last_update;
    if (fl.rate <= 0.0 || dt <= 0) continue;
    total += std::min(fl.rate * static_cast<double>(dt) * kSecondsPerNs, std::max(fl.remaining, 0.0)) * fl.count;
  }
  return Bytes(total);
}

FlowInfo FlowNetwork::info(const Flow& fl, FlowId id, Route& route) const {
  FlowInfo fi;
  fi.id = id;
  route.clear();
  for (const Hop& hop : fl.hops) route.push_back(hop.resource);
  fi.resources = std::span<const int>(route.data(), route.size());  // valid while `route` lives
  fi.size = Bytes(fl.size);
  fi.count = fl.count;
  fi.start = fl.start;
  fi.transfer = fl.transfer;
  return fi;
}

void FlowNetwork::add_observer(FlowObserver* observer) {
  assert(observer != nullptr && "FlowNetwork::add_observer: null observer");
  observers_.push_back(observer);
}

void FlowNetwork::remove_observer(FlowObserver* observer) { std::erase(observers_, observer); }

}  // namespace scalescope
