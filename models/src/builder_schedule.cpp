// Pipeline schedules: the order of forward and backward passes on one stage (GPipe, 1F1B, interleaved).
#include <algorithm>
#include <cassert>
#include <map>

#include "scalescope/models/builder.hpp"

namespace scalescope::models {

int plan_rank(const Plan& plan, int stage, int dp_rank, int tp_rank, int cp_rank) {
  return tp_rank + plan.tp * (cp_rank + plan.cp * (dp_rank + plan.dp * stage));
}

std::vector<ScheduleStep> pipeline_order(Schedule schedule, int pp, int vpp, int stage, int m) {
  assert(pp > 0 && vpp > 0 && stage >= 0 && stage < pp && m > 0 && "pipeline_order: bad arguments");
  std::vector<ScheduleStep> out;
  switch (schedule) {
    case Schedule::gpipe:
      for (int i = 0; i < m; ++i) out.push_back({true, 0, i});
      for (int i = 0; i < m; ++i) out.push_back({false, 0, i});
      return out;
    case Schedule::one_f_one_b: {
      const int warmup = std::min(pp - stage - 1, m);
      const int remaining = m - warmup;
      for (int i = 0; i < warmup; ++i) out.push_back({true, 0, i});
      for (int i = 0; i < remaining; ++i) {
        out.push_back({true, 0, warmup + i});
        out.push_back({false, 0, i});
      }
      for (int i = remaining; i < m; ++i) out.push_back({false, 0, i});
      return out;
    }
    case Schedule::interleaved: {
      const int total = m * vpp;
      const int group = pp * vpp;
      auto step = [&](int k, bool forward) {
        int chunk = (k % group) / pp;
        if (!forward) chunk = vpp - chunk - 1;
        return ScheduleStep{forward, chunk, (k / group) * pp + k % pp};
      };
      int warmup = m == pp ? total : std::min((pp - stage - 1) * 2 + (vpp - 1) * pp, total);
      const int remaining = total - warmup;
      for (int k = 0; k < warmup; ++k) out.push_back(step(k, true));
      for (int i = 0; i < remaining; ++i) {
        out.push_back(step(warmup + i, true));
        out.push_back(step(i, false));
      }
      for (int k = remaining; k < total; ++k) out.push_back(step(k, false));
      return out;
    }
  }
  return out;
}

namespace {

/// A compute action of the torch program, or an idle slot (chunk < 0).
struct Slot {
  bool forward = true;
  int chunk = -1;  ///< global virtual stage (chunk * pp + rank); -1: idle
  int microbatch = 0;
};

// torch.distributed.pipelining.schedules._get_1f1b_rank_ops (non zero-bubble) for one rank.
std::vector<Slot> torch_compute_slots(int pp, int vpp, int m, int rank) {
  const int rounds = std::max(1, m / pp);
  const int per_round = m / rounds;
  const int warmup = std::min((vpp - 1) * per_round + 2 * (pp - 1 - rank), m * vpp);
  const int ops = m * vpp;
  const int fwd_bwd = ops - warmup;
  const int post_warmup = (vpp * pp + 2 * (pp - 1 - rank)) - (warmup + rank);
  auto fwd_chunk = [&](int k) { return ((k / per_round) % vpp) * pp + rank; };
  auto bwd_chunk = [&](int k) { return (vpp - 1 - ((k - warmup) / per_round) % vpp) * pp + rank; };
  std::vector<int> fwd_mb(static_cast<std::size_t>(pp * vpp), 0), bwd_mb(fwd_mb);
  std::vector<Slot> out(static_cast<std::size_t>(rank), Slot{});
  auto fwd = [&](int k) {
    const int v = fwd_chunk(k);
    out.push_back({true, v, fwd_mb[static_cast<std::size_t>(v)]++});
  };
  auto bwd = [&](int k) {
    const int v = bwd_chunk(k);
    out.push_back({false, v, bwd_mb[static_cast<std::size_t>(v)]++});
  };
  for (int k = 0; k < warmup + fwd_bwd + warmup; ++k) {
    if (k < warmup) {
      fwd(k);
      if (k == warmup - 1) out.insert(out.end(), static_cast<std::size_t>(std::max(0, post_warmup)), Slot{});
    } else if (k < warmup + fwd_bwd) {
      fwd(k);
      bwd(k);
    } else {
      out.push_back(Slot{});
      bwd(k);
    }
  }
  return out;
}

// The lowering passes before the communication is placed (torch _prepare_schedule_with_comms): idle slots
// dropped ("the timestep lock" is abandoned), FSDP UNSHARD / RESHARD actions added (_add_unshard_reshard,
// at most 3 active stages) and a REDUCE_GRAD after each stage's last backward (_add_reduce_grad). The
// added actions do nothing without FSDP but take their turn when the communication is placed: kept as
// Slot{} (chunk -1) entries.
std::vector<Slot> torch_lowered(const std::vector<Slot>& slots, int m) {
  constexpr std::size_t kMaxActive = 3;
  std::vector<Slot> acts;
  for (const Slot& a : slots) {
    if (a.chunk >= 0) acts.push_back(a);
  }
  std::vector<Slot> out;
  std::vector<int> active;  // kept sorted: Python iterates a set of small ints in ascending order
  std::map<int, int> backwards;
  for (std::size_t i = 0; i < acts.size(); ++i) {
    std::vector<int> next_n;
    for (std::size_t j = i; j < acts.size() && next_n.size() < kMaxActive; ++j) {
      if (std::find(next_n.begin(), next_n.end(), acts[j].chunk) == next_n.end()) next_n.push_back(acts[j].chunk);
    }
    std::vector<int> evict;
    for (int v : active) {
      if (std::find(next_n.begin(), next_n.end(), v) == next_n.end()) evict.push_back(v);
    }
    for (int v : evict) {
      active.erase(std::find(active.begin(), active.end(), v));
      out.push_back(Slot{});  // RESHARD
    }
    for (int v : next_n) {
      if (std::find(active.begin(), active.end(), v) != active.end()) continue;
      active.insert(std::upper_bound(active.begin(), active.end(), v), v);
      out.push_back(Slot{});  // UNSHARD
    }
    out.push_back(acts[i]);
    if (!acts[i].forward && ++backwards[acts[i].chunk] == m) out.push_back(Slot{});  // REDUCE_GRAD
  }
  for (std::size_t k = 0; k < active.size(); ++k) out.push_back(Slot{});  // RESHARD
  return out;
}

}  // namespace

std::vector<std::vector<TorchPipelineAction>> torch_interleaved_program(int pp, int vpp, int m) {
  assert(pp > 1 && vpp > 0 && m > 0 && "torch_interleaved_program: bad arguments");
  const int last = pp * vpp - 1;
  using Kind = TorchPipelineAction::Kind;
  std::vector<std::vector<Slot>> compute;
  for (int r = 0; r < pp; ++r) compute.push_back(torch_lowered(torch_compute_slots(pp, vpp, m, r), m));
  // What each rank has placed: (kind, forward, global chunk, micro-batch) as one key.
  auto key = [&](Kind k, bool forward, int v, int mb) {
    return ((static_cast<long long>(mb) * (last + 1) + v) * 2 + (forward ? 1 : 0)) * 3 + static_cast<int>(k);
  };
  std::vector<std::vector<long long>> placed(static_cast<std::size_t>(pp));
  auto has = [&](int r, long long k) {
    const auto& v = placed[static_cast<std::size_t>(r)];
    return std::find(v.begin(), v.end(), k) != v.end();
  };
  std::vector<std::vector<TorchPipelineAction>> out(static_cast<std::size_t>(pp));
  auto append = [&](int r, Kind k, bool forward, int v, int mb) {
    out[static_cast<std::size_t>(r)].push_back({k, ScheduleStep{forward, v / pp, mb}});
    placed[static_cast<std::size_t>(r)].push_back(key(k, forward, v, mb));
  };
  std::vector<std::size_t> next(static_cast<std::size_t>(pp), 0);
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < pp; ++r) {
      const auto& slots = compute[static_cast<std::size_t>(r)];
      std::size_t& i = next[static_cast<std::size_t>(r)];
      if (i == slots.size()) continue;
      const Slot a = slots[i];
      if (a.chunk >= 0) {
        // Ready: the input was received, or produced by the neighbouring chunk on this rank.
        const bool needs = a.forward ? a.chunk != 0 : a.chunk != last;
        const int from = a.forward ? a.chunk - 1 : a.chunk + 1;
        if (needs && !has(r, key(Kind::recv, a.forward, a.chunk, a.microbatch)) &&
            !has(r, key(Kind::compute, a.forward, from, a.microbatch))) {
          continue;
        }
        append(r, Kind::compute, a.forward, a.chunk, a.microbatch);
        const bool sends = a.forward ? a.chunk != last : a.chunk != 0;
        if (sends) {
          const int to = a.forward ? a.chunk + 1 : a.chunk - 1;
          append(r, Kind::send, a.forward, a.chunk, a.microbatch);
          append(to % pp, Kind::recv, a.forward, to, a.microbatch);
        }
      }
      ++i;
      progress = true;
    }
  }
  for (int r = 0; r < pp; ++r) {
    assert(next[static_cast<std::size_t>(r)] == compute[static_cast<std::size_t>(r)].size() &&
           "torch_interleaved_program: the compute schedule could not be placed");
  }
  return out;
}

}  // namespace scalescope::models
