// FlowNetwork: transfers ("flows") over sets of shared resources (links), each progressing at
// its max-min fair rate, re-solved lazily once per instant and only where something changed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "scalescope/sim/engine.hpp"
#include "scalescope/sim/maxmin.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope {

/// Names one flow. Default-constructed: no flow.
struct FlowId {
  std::uint64_t serial = 0;  ///< 1, 2, ... in start() order, unique per network; 0 = none
  std::uint32_t slot = 0;    ///< where the network keeps the flow's state
  bool valid() const { return serial != 0; }
  friend bool operator==(const FlowId&, const FlowId&) = default;
};

/// What an observer learns about a flow. `resources` is valid during the call only.
struct FlowInfo {
  FlowId id;
  std::span<const int> resources;
  Bytes size;                ///< of each of the `count` flows
  std::uint32_t count = 1;   ///< identical flows this one stands for (start()'s `count`)
  SimTime start = 0;     ///< when start() was called
  SimTime transfer = 0;  ///< when the latency ended and bytes began to move (finished only)
  SimTime end = 0;       ///< completion time (finished only)
};

/// Watches a flow network (Perfetto traces, statistics).
class FlowObserver {
 public:
  virtual ~FlowObserver() = default;
  virtual void on_flow_started(const FlowInfo&) {}
  /// Called at completion, before the flow's on_done callback.
  virtual void on_flow_finished(const FlowInfo&) {}
};

/// Transfers over resources of fixed capacity (the cluster graph uses its directed edge
/// indices as resource ids 0..R-1), sharing them by max-min fairness (maxmin.hpp).
///
/// Rates change only when a flow starts transferring, a flow finishes, or a capacity changes.
/// Each of these marks resources dirty and schedules ONE end-of-instant resolve event
/// (EventOrder::end_of_instant), so any number of changes at one instant cost one
/// recomputation, which re-solves only the connected components (resources linked by flows)
/// that contain a dirty resource. Each flow's remaining bytes are brought up to date whenever
/// its component is re-solved, and its completion is rescheduled only if its rate changed.
/// Flows of one resolve that complete at the same nanosecond share one engine event (they
/// then finish in the order they were re-solved), and so do flows started one after the
/// other whose latencies end at the same nanosecond. Completion times are rounded up to whole
/// nanoseconds (after forgiving a relative 1e-12 of floating-point noise); a flow whose
/// remaining bytes fall below kDoneBytes counts as done.
///
/// Redundant links are left out: every flow has an upper bound b_f = min(cap_f, min over its
/// resources of C_r / count_f) that any feasible rate respects. A resource whose flows cannot
/// fill it even at their bounds (sum of count_f * b_f <= C_r) constrains nothing, so removing it
/// leaves the feasible set, and with it the max-min solution, unchanged; such "slack" resources do
/// not join flows into components and are not passed to the solver (each flow is given b_f as its
/// bound). The sums are kept exactly (integer bytes/s, b_f rounded up). In a large fabric most
/// switch links are slack most of the time, which keeps components small.
///
/// Capacity 0 (a failed link) gives the flows on it rate 0: they stall, keep their remaining
/// bytes and have no completion event until a later set_capacity() gives them bandwidth. If
/// nothing else is pending, Engine::run() then returns with active_flows() > 0.
///
/// Events hold a pointer to the network: it must outlive the engine's run, and its destructor
/// cancels its pending events. Not thread-safe (one network per engine per thread).
class FlowNetwork {
 public:
  using DoneFn = std::function<void(FlowId)>;
  static constexpr double kDoneBytes = 1e-6;

  FlowNetwork(Engine& engine, std::vector<BytesPerSecond> capacities);
  ~FlowNetwork();
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  /// Starts a flow over `resources` (distinct ids): it first waits `latency` using no
  /// bandwidth, then moves `size` bytes at its max-min fair rate, never above `rate_cap`;
  /// on_done(id) runs at completion (from an engine event, never inside start()). A size-0
  /// flow completes when its latency has passed. A flow over no resources moves at rate_cap
  /// (instantly when uncapped).
  /// The resources are copied into the flow's slot, whose storage is reused from flow to flow
  /// (no allocation per flow once the slots have grown).
  /// `count` > 1 starts that many identical flows (same resources, size, latency and cap, started
  /// now) as one aggregate: they always have the same max-min rate (maxmin.hpp, multiplicity),
  /// so they finish together and on_done runs once for all of them; rate_Bps() and remaining()
  /// are each flow's, bytes_carried() counts all of them.
  FlowId start(std::span<const int> resources, Bytes size, DoneFn on_done,
               Seconds latency = Seconds(0.0),
               BytesPerSecond rate_cap = BytesPerSecond(kUnboundedRate), std::uint32_t count = 1);
  FlowId start(std::initializer_list<int> resources, Bytes size, DoneFn on_done,
               Seconds latency = Seconds(0.0),
               BytesPerSecond rate_cap = BytesPerSecond(kUnboundedRate), std::uint32_t count = 1) {
    return start(std::span<const int>(resources.begin(), resources.size()), size, std::move(on_done), latency,
                 rate_cap, count);
  }

  /// Changes a resource's capacity (>= 0) from now on; rates are re-solved at the end of
  /// this instant.
  void set_capacity(int resource, BytesPerSecond capacity);
  BytesPerSecond capacity(int resource) const;
  int resource_count() const { return static_cast<int>(capacity_.size()); }

  /// Current rate of a transferring flow in bytes/s; 0 while in its latency, before the
  /// first resolve, once finished, or for an unknown id.
  double rate_Bps(FlowId id) const;
  /// Bytes the flow still has to move now (its size during the latency, 0 once finished).
  Bytes remaining(FlowId id) const;
  /// True from start() until the flow's completion.
  bool is_active(FlowId id) const;
  /// Flows started and not finished (latency phase included).
  std::size_t active_flows() const { return active_; }
  /// Bytes moved over `resource` so far by finished and transferring flows.
  Bytes bytes_carried(int resource) const;

  /// Statistics: resolves that had flows to solve, and flows re-solved over all of them.
  std::uint64_t recomputations() const { return recomputations_; }
  std::uint64_t flows_resolved() const { return flows_resolved_; }

  /// Observers are not owned and must outlive the network or be removed first.
  void add_observer(FlowObserver* observer);
  void remove_observer(FlowObserver* observer);

 private:
  // waiting: in its latency, or of size 0 and about to complete; transferring: on its resources.
  enum class State : std::uint8_t { free, waiting, transferring };
  struct Hop {
    int resource;
    std::uint32_t pos;  // index of the flow in users_[resource]
  };
  struct Flow {
    // The route, with each resource this flow's index in users_[resource]; inline up to 8 hops (every
    // route of the built-in topologies), so that removing a flow touches one cache line per peer.
    boost::container::small_vector<Hop, 8> hops;
    DoneFn on_done;
    double size = 0.0;
    double remaining = 0.0;  // bytes left as of last_update
    double rate = 0.0;       // bytes/s
    double cap = kUnboundedRate;
    double bound = kUnboundedRate;  // b_f (see the class comment)
    std::uint64_t load = 0;         // count * b_f in whole bytes/s, added to load_ of its resources
    std::uint32_t count = 1;  // identical flows aggregated in this one
    SimTime start = 0;
    SimTime transfer = 0;
    SimTime last_update = 0;
    std::uint64_t serial = 0;        // 0: slot free
    std::uint64_t mark = 0;          // resolve stamp
    std::uint64_t token = 0;         // membership in `batch`, matched against Batch::members
    std::uint32_t batch = kNoBatch;  // completion batch, if a completion is scheduled
    State state = State::free;
  };
  struct User {  // one transferring flow on a resource
    std::uint32_t flow;
    std::uint32_t k;  // index of the resource in the flow's route
  };
  static constexpr std::uint32_t kNoBatch = ~std::uint32_t{0};
  struct Member {
    std::uint32_t flow;
    std::uint64_t token;
  };
  // Flows whose latency ends (wakes) or that complete at one time, through one engine event.
  struct Batch {
    std::vector<Member> members;  // completions: may hold flows that left since (token mismatch)
    EventId event;
    SimTime time = 0;
    std::uint32_t live = 0;  // members still in the batch
    bool wakes = false;      // latency ends (token: the flow's serial) rather than completions
  };
  struct Completion {
    SimTime time;
    std::uint32_t flow;
  };

  const Flow* find(FlowId id) const;
  void begin_transfer(std::uint32_t f);
  void finish(std::uint32_t f);
  void schedule_completions(std::span<const Completion> sorted);
  std::uint32_t new_batch();
  void leave_batch(std::uint32_t f);
  void fire_batch(std::uint32_t b);
  void mark_dirty(int resource);
  /// Computes fl.bound and fl.load and adds the load to its resources (sign +1) or removes it (-1).
  void set_bound(std::uint32_t f);
  void add_load(const Flow& fl, int sign);
  bool slack(int resource) const;
  void request_resolve();
  void resolve();
  void collect_components();
  void solve_component(std::size_t flow_begin, std::size_t flow_end, std::size_t res_begin,
                       std::size_t res_end);
  using Route = boost::container::small_vector<int, 8>;
  /// What observers are told of `fl`; its resources are copied into `route`, which must outlive the calls.
  FlowInfo info(const Flow& fl, FlowId id, Route& route) const;

  Engine& engine_;
  std::vector<double> capacity_;
  std::vector<double> carried_;
  std::vector<std::vector<User>> users_;
  std::vector<std::uint64_t> res_mark_;
  std::vector<std::uint32_t> res_local_;
  std::vector<std::uint8_t> res_dirty_;
  std::vector<std::uint64_t> load_;  // per resource: sum of its transferring flows' count * b_f
  std::vector<Flow> flows_;
  std::vector<std::uint32_t> free_flows_;
  std::vector<int> dirty_res_;
  std::vector<std::uint32_t> dirty_flows_;  // began transferring since the last resolve
  std::vector<FlowObserver*> observers_;
  std::vector<Batch> batches_;
  std::vector<std::uint32_t> free_batches_;
  std::vector<Member> firing_;
  std::uint32_t open_wake_ = kNoBatch;  // the latest wake-up batch, joinable until it fires
  EventId resolve_event_;
  std::uint64_t next_serial_ = 1;
  std::uint64_t next_token_ = 1;
  std::uint64_t stamp_ = 0;
  std::uint64_t recomputations_ = 0;
  std::uint64_t flows_resolved_ = 0;
  std::size_t active_ = 0;

  // Scratch for resolve(), kept to avoid reallocating.
  struct ComponentEnd {
    std::size_t flows;      // end of the component's flows in comp_flows_
    std::size_t resources;  // end of its resources in comp_res_
  };
  std::vector<std::uint32_t> comp_flows_;  // touched components, one after the other
  std::vector<int> comp_res_;
  std::vector<ComponentEnd> comp_ends_;
  std::vector<double> local_capacity_;
  std::vector<std::uint32_t> local_offsets_;
  std::vector<std::uint32_t> local_resources_;
  std::vector<double> local_bound_;
  std::vector<std::uint32_t> local_count_;
  std::vector<double> local_rate_;
  std::vector<Completion> completions_;
  MaxMinSolver solver_;
};

}  // namespace scalescope
