// The task-graph executor: runs a compiled TaskGraph on the Engine, costing communication with the
// collective model (analytical) or as flows on one shared FlowNetwork (flow), and feeds observers.
#include "scalescope/sim/simulator.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/engine.hpp"
#include "scalescope/sim/flow_network.hpp"
#include "scalescope/sim/statistics.hpp"
#include "interference.hpp"
#include "task_graph_compile.hpp"

namespace scalescope {

const char* fidelity_name(Fidelity f) { return f == Fidelity::analytical ? "analytical" : "flow"; }

namespace {

// Cache key of an analytical cost: a collective (op, group, bytes) or a transfer (src, dst, bytes).
struct CostKey {
  std::uint32_t a, b;
  double bytes;
  bool operator==(const CostKey& o) const { return a == o.a && b == o.b && bytes == o.bytes; }
};
struct CostKeyHash {
  std::size_t operator()(const CostKey& k) const noexcept {
    std::uint64_t bits;
    std::memcpy(&bits, &k.bytes, sizeof bits);
    std::uint64_t h = (static_cast<std::uint64_t>(k.a) << 32 | k.b) * 0x9E3779B97F4A7C15ull;
    h ^= bits + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2);
    return static_cast<std::size_t>(h * 0xC2B2AE3D27D4EB4Full);
  }
};

// Per-flow plan of a transfer at flow fidelity, derived from the analytical sendrecv cost (see
// run_transfer).
struct TransferCost {
  SimTime analytical_ns = 0;
  Seconds latency;
  double wire_bytes_per_flow = 0.0;
  double rate_cap = 0.0;  // wire bytes/s of one flow alone (its analytical rate)
  int flows = 1;
};

// Tags of the work the interference tracker runs for the Runner.
constexpr std::uint8_t kStretchedCompute = 0, kStretchedCollective = 1, kStretchedTransfer = 2;

class Runner {
 public:
  Runner(const TaskGraph& g, const detail::CompiledGraph& c, const Cluster& cluster,
         const CollectiveModel& model, const SimOptions& options)
      : g_(g), c_(c), cluster_(cluster), model_(model), opt_(options) {}

  Expected<SimResult> run();

 private:
  Expected<bool> check_options() const;
  Expected<bool> check_against_cluster();
  void arrive(TaskId t);
  void begin(TaskId t);
  void finish(TaskId t);
  void start_collective(std::uint32_t inst);
  void finish_collective(std::uint32_t inst);
  void start_transfer(TaskId first, TaskId second);
  void finish_transfer(TaskId first);
  bool use_flows_for_group(GroupId group);
  bool group_in_one_node(GroupId group);
  static void stretched_done(void* self, std::uint8_t tag, std::uint32_t owner);
  SimTime collective_ns(const Task& t);
  const TransferCost& transfer_cost(int src, int dst, double bytes);
  Error deadlock_error() const;

  const TaskGraph& g_;
  const detail::CompiledGraph& c_;
  const Cluster& cluster_;
  const CollectiveModel& model_;
  const SimOptions& opt_;

  Engine engine_;
  std::unique_ptr<FlowNetwork> net_;
  std::unique_ptr<detail::InterferenceTracker> interference_;  // when SimOptions::interference is active
  StatsCollector stats_;
  std::vector<std::uint32_t> pending_;  // per task: unfinished predecessors (explicit + stream)
  std::vector<std::uint32_t> inst_waiting_;  // per instance: present participants not yet arrived
  std::vector<std::uint8_t> waiting_;  // send/recv: 1 while arrived and waiting for its partner
  std::vector<std::uint32_t>
      flows_left_;  // flow fidelity, by the transfer's first task: flows not yet done
  std::vector<TaskTiming> timing_;        // when recording
  std::vector<std::int8_t> group_one_node_;  // per group: -1 unknown, 0 spans nodes, 1 one node
  std::unordered_map<CostKey, SimTime, CostKeyHash> coll_cost_;
  std::unordered_map<CostKey, TransferCost, CostKeyHash> xfer_cost_;
  struct TransferRoute {
    std::vector<int> links;
    std::uint32_t count = 1;  // the transfer's flows on this route (run as one aggregate flow)
  };
  std::unordered_map<std::uint64_t, std::vector<TransferRoute>>
      routes_;  // (src, dst) -> its distinct routes over the ECMP keys 0..flows-1
  std::size_t finished_ = 0;
  SimTime last_end_ = 0;
};

Expected<bool> Runner::check_options() const {
  for (auto [name, value] : {std::pair{"compute_slowdown", opt_.interference.compute_slowdown},
                             std::pair{"comm_slowdown", opt_.interference.comm_slowdown}}) {
    if (!std::isfinite(value) || value <= 0.0) {
      return input_error("simulation options", std::string("interference.") + name,
                         "expected a finite factor > 0, got " + std::to_string(value));
    }
  }
  return true;
}

Expected<bool> Runner::check_against_cluster() {
  const int gpus = cluster_.num_gpus();
  if (g_.rank_bound() > gpus) {
    return input_error("task graph", "",
                       "rank " + std::to_string(g_.rank_bound() - 1) + " is outside cluster '" +
                           cluster_.name() + "' (" + std::to_string(gpus) + " GPUs, ranks 0.." +
                           std::to_string(gpus - 1) + ")");
  }
  // Each distinct (op, group) once: is it something the collective model can run?
  std::vector<std::uint8_t> checked_ops(g_.num_groups(), 0);  // bit per CollOp
  for (std::size_t inst = 0; inst < g_.num_collective_instances(); ++inst) {
    const TaskId first = c_.instance_tasks[c_.instance_offset[inst]];
    const Task& t = g_.task(first);
    const auto bit = static_cast<std::uint8_t>(1u << static_cast<unsigned>(t.op));
    if (checked_ops[t.a] & bit) continue;
    checked_ops[t.a] |= bit;
    if (auto why = model_.check(t.op, g_.group(t.a))) {
      return input_error("task graph", "",
                         g_.describe(first) + ": the collective model cannot run it: " + *why);
    }
    for (GroupId s : g_.concurrent(t.a)) {
      if (g_.group(s).size() != g_.group(t.a).size()) {
        return input_error("task graph", "", g_.describe(first) + ": a concurrent sibling group has " +
                                                 std::to_string(g_.group(s).size()) + " ranks, the group " +
                                                 std::to_string(g_.group(t.a).size()));
      }
      if (auto why = model_.check(t.op, g_.group(s))) {
        return input_error("task graph", "", g_.describe(first) + ": its concurrent sibling group: " + *why);
      }
    }
  }
  for (TaskId i = 0; i < g_.size(); ++i) {
    const Task& t = g_.task(i);
    if ((t.kind == TaskKind::send || t.kind == TaskKind::recv) && static_cast<int>(t.a) == t.rank) {
      return input_error("task graph", "",
                         g_.describe(i) + ": a rank cannot send to or receive from itself");
    }
  }
  return true;
}

Expected<SimResult> Runner::run() {
  if (auto ok = check_options(); !ok) return ok.error();
  if (auto ok = check_against_cluster(); !ok) return ok.error();
  const std::size_t n = g_.size();
  pending_ = c_.num_preds;
  inst_waiting_.resize(g_.num_collective_instances());
  for (std::size_t i = 0; i < inst_waiting_.size(); ++i) {
    inst_waiting_[i] = c_.instance_offset[i + 1] - c_.instance_offset[i];
  }
  waiting_.assign(n, 0);
  if (opt_.fidelity == Fidelity::flow) flows_left_.assign(n, 0);
  group_one_node_.assign(g_.num_groups(), -1);
  if (opt_.record_task_times) timing_.assign(n, TaskTiming{});
  if (opt_.fidelity == Fidelity::flow)
    net_ = std::make_unique<FlowNetwork>(engine_, model_.effective_capacities());
  if (opt_.interference.active() || g_.has_task_interference()) {
    interference_ = std::make_unique<detail::InterferenceTracker>(engine_, opt_.interference, cluster_.num_gpus(),
                                                                 &Runner::stretched_done, this);
  }

  stats_.simulation_started(g_);
  for (SimObserver* o : opt_.observers) o->simulation_started(g_);
  for (TaskId t = 0; t < n; ++t) {
    if (pending_[t] == 0) arrive(t);
  }
  engine_.run();
  if (finished_ != n) {
    // A cycle through dependencies, stream order or rendezvous is what stalls a run without a
    // stalled flow; with validation on, name the whole cycle rather than one stuck task.
    if (opt_.validate && !(net_ && net_->active_flows() > 0)) {
      if (auto cycle = detail::check_cycles(g_, c_); !cycle) return cycle.error();
    }
    return deadlock_error();
  }

  stats_.simulation_finished(last_end_);
  for (SimObserver* o : opt_.observers) o->simulation_finished(last_end_);
  SimResult r;
  r.fidelity = opt_.fidelity;
  r.step_ns = last_end_;
  r.step_time = from_sim_time(last_end_);
  r.events = engine_.events_fired();
  stats_.fill(r);
  r.task_times = std::move(timing_);
  return r;
}

// All predecessors are done: compute runs now; communication waits for its peers.
void Runner::arrive(TaskId t) {
  const Task& k = g_.task(t);
  if (opt_.record_task_times) timing_[t].ready = engine_.now();
  switch (k.kind) {
    case TaskKind::compute:
      if (interference_) {
        begin(t);
        const TaskGraph::TaskInterference f = g_.interference(t);
        interference_->start_compute(k.rank, to_sim_time(k.duration()), kStretchedCompute, t, f.slowed, f.slows);
        return;
      }
      [[fallthrough]];
    case TaskKind::delay:
      begin(t);
      engine_.schedule_after(to_sim_time(k.duration()), [this, t] { finish(t); });
      return;
    case TaskKind::collective:
      if (--inst_waiting_[k.b] == 0) {
        start_collective(k.b);
      } else {
        for (SimObserver* o : opt_.observers) o->task_waiting(k.rank, k.stream, t, engine_.now());
      }
      return;
    case TaskKind::send:
    case TaskKind::recv: {
      const TaskId p = c_.partner[t];
      if (p == kNoTask) {
        start_transfer(t, kNoTask);
      } else if (waiting_[p] == 1) {
        waiting_[p] = 0;
        start_transfer(k.kind == TaskKind::send ? t : p, k.kind == TaskKind::send ? p : t);
      } else {
        waiting_[t] = 1;
        for (SimObserver* o : opt_.observers) o->task_waiting(k.rank, k.stream, t, engine_.now());
      }
      return;
    }
  }
}

void Runner::begin(TaskId t) {
  const Task& k = g_.task(t);
  const SimTime now = engine_.now();
  if (opt_.record_task_times) timing_[t].start = now;
  stats_.task_started(k.rank, k.stream, t, now);
  for (SimObserver* o : opt_.observers) o->task_started(k.rank, k.stream, t, now);
}

void Runner::finish(TaskId t) {
  const Task& k = g_.task(t);
  const SimTime now = engine_.now();
  if (opt_.record_task_times) timing_[t].end = now;
  stats_.task_finished(k.rank, k.stream, t, now);
  for (SimObserver* o : opt_.observers) o->task_finished(k.rank, k.stream, t, now);
  ++finished_;
  last_end_ = std::max(last_end_, now);
  for (std::uint32_t e = c_.succ_offset[t]; e < c_.succ_offset[t + 1]; ++e) {
    const TaskId s = c_.succ[e];
    if (--pending_[s] == 0) arrive(s);
  }
  const TaskId next = c_.stream_next[t];
  if (next != kNoTask && --pending_[next] == 0) arrive(next);
}

bool Runner::group_in_one_node(GroupId group) {
  std::int8_t& f = group_one_node_[group];
  if (f < 0) {
    const auto ranks = g_.group(group);
    f = std::all_of(ranks.begin(), ranks.end(), [&](int r) { return cluster_.same_node(r, ranks.front()); }) ? 1 : 0;
  }
  return f == 1;
}

bool Runner::use_flows_for_group(GroupId group) {
  if (opt_.fidelity != Fidelity::flow) return false;
  return !opt_.analytical_intra_node || !group_in_one_node(group);
}

void Runner::stretched_done(void* self, std::uint8_t tag, std::uint32_t owner) {
  auto* runner = static_cast<Runner*>(self);
  switch (tag) {
    case kStretchedCompute: runner->finish(owner); return;
    case kStretchedCollective: runner->finish_collective(owner); return;
    default: runner->finish_transfer(owner); return;
  }
}

SimTime Runner::collective_ns(const Task& t) {
  const CostKey key{static_cast<std::uint32_t>(t.op) << 28 ^ t.a, 0xFFFFFFFFu, t.amount};
  auto it = coll_cost_.find(key);
  if (it != coll_cost_.end()) return it->second;
  const auto siblings = opt_.concurrent_collectives ? g_.concurrent(t.a) : std::span<const GroupId>{};
  SimTime ns = 0;
  if (siblings.empty()) {
    ns = to_sim_time(model_.analytical(t.op, g_.group(t.a), t.bytes()).time);
  } else {
    std::vector<std::span<const int>> groups;
    groups.reserve(siblings.size());
    for (GroupId s : siblings) groups.push_back(g_.group(s));
    ns = to_sim_time(model_.analytical_concurrent(t.op, g_.group(t.a), groups, t.bytes()).time);
  }
  coll_cost_.emplace(key, ns);
  return ns;
}

void Runner::start_collective(std::uint32_t inst) {
  const std::uint32_t lo = c_.instance_offset[inst], hi = c_.instance_offset[inst + 1];
  for (std::uint32_t k = lo; k < hi; ++k) begin(c_.instance_tasks[k]);
  const Task& t = g_.task(c_.instance_tasks[lo]);
  if (use_flows_for_group(t.a)) {
    model_.start(engine_, *net_, t.op, g_.group(t.a), t.bytes(),
                 [this, inst](Seconds) { finish_collective(inst); });
  } else if (interference_ && group_in_one_node(t.a)) {
    std::vector<int> ranks;  // the participants present (all of them unless the graph is symmetric)
    ranks.reserve(hi - lo);
    for (std::uint32_t k = lo; k < hi; ++k) ranks.push_back(g_.task(c_.instance_tasks[k]).rank);
    interference_->start_comm(ranks, collective_ns(t), kStretchedCollective, inst);
  } else {
    engine_.schedule_after(collective_ns(t), [this, inst] { finish_collective(inst); });
  }
}

void Runner::finish_collective(std::uint32_t inst) {
  for (std::uint32_t k = c_.instance_offset[inst]; k < c_.instance_offset[inst + 1]; ++k)
    finish(c_.instance_tasks[k]);
}

// A transfer's cost comes from the collective model's point-to-point form (sendrecv over {src,
// dst}, whose p2p pattern runs the two directions on separate directed links, so its time is one
// direction's). At flow fidelity the one direction src -> dst runs as params.p2p_channels flows
// over the cluster's routes (ECMP keys 0..q-1), each moving its share of the wire bytes after the
// model's latency, capped at the rate the analytical model gives one such flow alone; uncontended,
// the two fidelities therefore agree.
const TransferCost& Runner::transfer_cost(int src, int dst, double bytes) {
  const CostKey key{static_cast<std::uint32_t>(src), static_cast<std::uint32_t>(dst), bytes};
  auto it = xfer_cost_.find(key);
  if (it != xfer_cost_.end()) return it->second;
  const int pair[2] = {src, dst};
  const CollResult r = model_.analytical(CollOp::sendrecv, pair, Bytes(bytes));
  const CollectiveParams& p = model_.params();
  TransferCost tc;
  tc.analytical_ns = to_sim_time(r.time);
  tc.latency = r.latency;
  tc.flows = std::max(1, p.p2p_channels);
  const double eff =
      p.proto_eff(r.algorithm, r.protocol) * p.bus_eff(CollOp::sendrecv, r.algorithm, r.link_class);
  tc.wire_bytes_per_flow = bytes / (eff > 0.0 ? eff : 1.0) / tc.flows;
  const double transfer_s = (r.time - r.latency).value;
  tc.rate_cap = transfer_s > 0.0 ? tc.wire_bytes_per_flow / transfer_s : kUnboundedRate;
  return xfer_cost_.emplace(key, tc).first->second;
}

// `first` is the send (or a solo send/recv), `second` the matching recv or kNoTask.
void Runner::start_transfer(TaskId first, TaskId second) {
  begin(first);
  if (second != kNoTask) begin(second);
  const Task& t = g_.task(first);
  const int src = t.kind == TaskKind::send ? t.rank : static_cast<int>(t.a);
  const int dst = t.kind == TaskKind::send ? static_cast<int>(t.a) : t.rank;
  const TransferCost& tc = transfer_cost(src, dst, t.amount);
  const bool flows = opt_.fidelity == Fidelity::flow &&
                     !(opt_.analytical_intra_node && cluster_.same_node(src, dst));
  if (!flows) {
    if (interference_ && cluster_.same_node(src, dst)) {
      const int present[2] = {t.rank, second != kNoTask ? g_.task(second).rank : t.rank};
      interference_->start_comm(std::span<const int>(present, second != kNoTask ? 2 : 1), tc.analytical_ns,
                                kStretchedTransfer, first);
      return;
    }
    engine_.schedule_after(tc.analytical_ns, [this, first] { finish_transfer(first); });
    return;
  }
  auto& routes = routes_[static_cast<std::uint64_t>(src) << 32 | static_cast<std::uint32_t>(dst)];
  if (routes.empty()) {
    for (int q = 0; q < tc.flows; ++q) {
      std::vector<int> links = cluster_.route(src, dst, static_cast<std::uint64_t>(q));
      auto same = std::find_if(routes.begin(), routes.end(), [&](const TransferRoute& r) { return r.links == links; });
      if (same != routes.end()) {
        ++same->count;
      } else {
        routes.push_back(TransferRoute{std::move(links), 1});
      }
    }
  }
  flows_left_[first] = static_cast<std::uint32_t>(routes.size());
  for (const TransferRoute& r : routes) {
    net_->start(
        r.links, Bytes(tc.wire_bytes_per_flow),
        [this, first](FlowId) {
          if (--flows_left_[first] == 0) finish_transfer(first);
        },
        tc.latency, BytesPerSecond(tc.rate_cap), r.count);
  }
}

void Runner::finish_transfer(TaskId first) {
  finish(first);
  const TaskId second = c_.partner[first];
  if (second != kNoTask) finish(second);
}

Error Runner::deadlock_error() const {
  if (net_ && net_->active_flows() > 0) {
    return runtime_error("simulation stalled: " + std::to_string(net_->active_flows()) +
                         " flows cannot progress (a link with zero capacity?)");
  }
  // Prefer a task that arrived and waits for a peer: that is where the run got stuck.
  for (TaskId t = 0; t < g_.size(); ++t) {
    if (pending_[t] != 0) continue;
    const Task& k = g_.task(t);
    if (k.kind == TaskKind::collective && inst_waiting_[k.b] != 0) {
      std::string missing;
      for (std::uint32_t i = c_.instance_offset[k.b]; i < c_.instance_offset[k.b + 1]; ++i) {
        const TaskId p = c_.instance_tasks[i];
        if (pending_[p] != 0) missing += (missing.empty() ? "" : ", ") + g_.describe(p);
      }
      return runtime_error("simulation deadlocked: " + g_.describe(t) + " waits for " + missing);
    }
    if ((k.kind == TaskKind::send || k.kind == TaskKind::recv) && waiting_[t] == 1) {
      return runtime_error("simulation deadlocked: " + g_.describe(t) + " waits for " +
                           g_.describe(c_.partner[t]));
    }
  }
  for (TaskId t = 0; t < g_.size(); ++t) {
    if (pending_[t] != 0)
      return runtime_error("simulation deadlocked: " + g_.describe(t) + " never became ready");
  }
  return runtime_error("simulation ended with unfinished tasks");
}

}  // namespace

Expected<SimResult> simulate(const TaskGraph& graph, const Cluster& cluster,
                             const CollectiveModel& model, const SimOptions& options) {
  auto compiled = detail::compile(graph, options.validate);
  if (!compiled) return compiled.error();
  Runner runner(graph, *compiled, cluster, model, options);
  return runner.run();
}

}  // namespace scalescope
