// Statistics observer: sweeps each rank's timeline into busy times and the breakdown.
#include "scalescope/sim/statistics.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>

namespace scalescope {

namespace {
constexpr int kFirstComm = static_cast<int>(BreakdownPart::tp_comm);
constexpr int kHostWait = static_cast<int>(BreakdownPart::host_wait);
constexpr int kBubble = static_cast<int>(BreakdownPart::bubble);
}  // namespace

const char* breakdown_part_name(BreakdownPart p) {
  switch (p) {
    case BreakdownPart::forward:
      return "forward";
    case BreakdownPart::backward:
      return "backward";
    case BreakdownPart::recompute:
      return "recompute";
    case BreakdownPart::optimizer:
      return "optimizer";
    case BreakdownPart::other_compute:
      return "other_compute";
    case BreakdownPart::tp_comm:
      return "tp_comm";
    case BreakdownPart::sp_comm:
      return "sp_comm";
    case BreakdownPart::dp_comm:
      return "dp_comm";
    case BreakdownPart::zero_comm:
      return "zero_comm";
    case BreakdownPart::pp_comm:
      return "pp_comm";
    case BreakdownPart::cp_comm:
      return "cp_comm";
    case BreakdownPart::ep_comm:
      return "ep_comm";
    case BreakdownPart::other_comm:
      return "other_comm";
    case BreakdownPart::host_wait:
      return "host_wait";
    case BreakdownPart::bubble:
      return "bubble";
  }
  return "?";
}

Seconds Breakdown::compute() const {
  return (*this)[BreakdownPart::forward] + (*this)[BreakdownPart::backward] +
         (*this)[BreakdownPart::recompute];
}
Seconds Breakdown::all_compute() const {
  return compute() + (*this)[BreakdownPart::optimizer] + (*this)[BreakdownPart::other_compute];
}
Seconds Breakdown::exposed_comm() const {
  Seconds s;
  for (int i = kFirstComm; i < kHostWait; ++i) s += parts[static_cast<std::size_t>(i)];
  return s;
}
Seconds Breakdown::sum() const {
  Seconds s;
  for (const Seconds& p : parts) s += p;
  return s;
}

const RankStats* SimResult::rank_stats(int rank) const {
  auto it = std::lower_bound(ranks.begin(), ranks.end(), rank,
                             [](const RankStats& s, int r) { return s.rank < r; });
  return it != ranks.end() && it->rank == rank ? &*it : nullptr;
}

int StatsCollector::bucket_of(const Task& t) {
  if (t.is_comm()) {
    switch (t.category) {
      case TaskCategory::tp_comm:
        return static_cast<int>(BreakdownPart::tp_comm);
      case TaskCategory::sp_comm:
        return static_cast<int>(BreakdownPart::sp_comm);
      case TaskCategory::dp_comm:
        return static_cast<int>(BreakdownPart::dp_comm);
      case TaskCategory::zero_comm:
        return static_cast<int>(BreakdownPart::zero_comm);
      case TaskCategory::pp_comm:
        return static_cast<int>(BreakdownPart::pp_comm);
      case TaskCategory::cp_comm:
        return static_cast<int>(BreakdownPart::cp_comm);
      case TaskCategory::ep_comm:
        return static_cast<int>(BreakdownPart::ep_comm);
      default:
        return static_cast<int>(BreakdownPart::other_comm);
    }
  }
  switch (t.category) {
    case TaskCategory::host:
      return kHostWait;
    case TaskCategory::forward:
      return static_cast<int>(BreakdownPart::forward);
    case TaskCategory::backward:
      return static_cast<int>(BreakdownPart::backward);
    case TaskCategory::recompute:
      return static_cast<int>(BreakdownPart::recompute);
    case TaskCategory::optimizer:
      return static_cast<int>(BreakdownPart::optimizer);
    default:
      return static_cast<int>(BreakdownPart::other_compute);
  }
}

void StatsCollector::simulation_started(const TaskGraph& graph) {
  graph_ = &graph;
  ranks_.assign(static_cast<std::size_t>(graph.rank_bound()), RankState{});
  for (const Task& t : graph.tasks()) ranks_[static_cast<std::size_t>(t.rank)].present = true;
  step_end_ = 0;
}

// Attributes [s.last, t) by the rule in simulator.hpp: compute parts first, then exposed
// communication, then host wait, else bubble; equal split among the distinct active parts of the
// winning class.
void StatsCollector::advance(RankState& s, SimTime t) const {
  assert(t >= s.last && "StatsCollector: events out of time order");
  const SimTime dt = t - s.last;
  s.last = t;
  if (dt == 0) return;
  constexpr std::uint32_t kComputeMask = (1u << kFirstComm) - 1;
  constexpr std::uint32_t kCommMask = ((1u << kHostWait) - 1) & ~kComputeMask;
  std::uint32_t m = s.mask & kComputeMask;
  if (m == 0) m = s.mask & kCommMask;
  if (m == 0) m = s.mask;  // neither: host wait (the only other bit) or nothing
  if (m == 0) {
    s.part_ns[kBubble] += static_cast<double>(dt);
    return;
  }
  const double share = static_cast<double>(dt) / std::popcount(m);
  for (; m != 0; m &= m - 1) s.part_ns[static_cast<std::size_t>(std::countr_zero(m))] += share;
}

void StatsCollector::task_started(int rank, int /*stream*/, TaskId task, SimTime t) {
  RankState& s = ranks_[static_cast<std::size_t>(rank)];
  advance(s, t);
  const Task& k = graph_->task(task);
  const int b = bucket_of(k);
  if (s.active[static_cast<std::size_t>(b)]++ == 0) s.mask |= 1u << b;
  s.busy_ns[static_cast<std::size_t>(k.category)] -= t;
  if (k.kind == TaskKind::compute) s.flops += k.flops;
  if (k.kind == TaskKind::collective || k.kind == TaskKind::send) s.comm_bytes += k.amount;
}

void StatsCollector::task_finished(int rank, int /*stream*/, TaskId task, SimTime t) {
  RankState& s = ranks_[static_cast<std::size_t>(rank)];
  advance(s, t);
  const Task& k = graph_->task(task);
  const int b = bucket_of(k);
  if (--s.active[static_cast<std::size_t>(b)] == 0) s.mask &= ~(1u << b);
  s.busy_ns[static_cast<std::size_t>(k.category)] += t;
  s.end = std::max(s.end, t);
}

void StatsCollector::simulation_finished(SimTime step_end) {
  step_end_ = step_end;
  for (RankState& s : ranks_) {
    if (s.present) advance(s, step_end);
  }
}

void StatsCollector::fill(SimResult& result) const {
  result.ranks.clear();
  result.critical_rank = -1;
  result.breakdown = Breakdown{};
  result.mean_breakdown = Breakdown{};
  SimTime latest = -1;
  for (std::size_t r = 0; r < ranks_.size(); ++r) {
    const RankState& s = ranks_[r];
    if (!s.present) continue;
    RankStats st;
    st.rank = static_cast<int>(r);
    st.end = s.end;
    st.flops = s.flops;
    st.comm_bytes = s.comm_bytes;
    for (int c = 0; c < kNumTaskCategories; ++c) {
      st.busy[static_cast<std::size_t>(c)] = from_sim_time(s.busy_ns[static_cast<std::size_t>(c)]);
    }
    for (int b = 0; b < kNumBreakdownParts; ++b) {
      st.breakdown.parts[static_cast<std::size_t>(b)] =
          Seconds(s.part_ns[static_cast<std::size_t>(b)] * 1e-9);
    }
    st.breakdown.total = from_sim_time(step_end_);
    if (s.end > latest) {
      latest = s.end;
      result.critical_rank = st.rank;
      result.breakdown = st.breakdown;
    }
    result.ranks.push_back(st);
  }
  if (!result.ranks.empty()) {
    const double n = static_cast<double>(result.ranks.size());
    for (const RankStats& st : result.ranks) {
      for (int b = 0; b < kNumBreakdownParts; ++b) {
        result.mean_breakdown.parts[static_cast<std::size_t>(b)] +=
            st.breakdown.parts[static_cast<std::size_t>(b)] / n;
      }
    }
  }
  result.mean_breakdown.total = from_sim_time(step_end_);
}

double median(std::vector<double> values) {
  if (values.empty()) return std::nan("");
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace scalescope
