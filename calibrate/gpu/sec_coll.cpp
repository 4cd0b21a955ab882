// Collectives section: NCCL all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv
// (ring shift) and sendrecv_pair on GPU groups 0..k-1, nccl-tests semantics (see gpu_plan.hpp).
//
// Timing: per size, warm-up calls, then `reps` batches of `iters` back-to-back calls; on each
// rank a CUDA event before and after the batch; a batch's time per call is the slowest rank's
// (stop - start) / iters; the row holds the median, minimum and p90 over batches. One thread
// queues every rank's calls, so a spin kernel holds the GPUs until the whole batch is queued: the
// batch then runs back to back as with one process per GPU (nccl-tests' usual mode) instead of at
// this thread's launch rate. (nccl-tests times one batch with a host timer and averages over
// ranks by default.)
#include <algorithm>
#include <memory>

#include "check.hpp"
#include "coll_group.hpp"
#include "sections.hpp"

namespace scalescope::gpu {

namespace {

using calib::CollOp;

constexpr double kWaitTimeout = 90.0;  // seconds before a wait counts as a hang

const char* impl_of(CollOp op) {
  switch (op) {
    case CollOp::all_reduce:
      return "ncclAllReduce";
    case CollOp::all_gather:
      return "ncclAllGather";
    case CollOp::reduce_scatter:
      return "ncclReduceScatter";
    case CollOp::alltoall:
      return "grouped ncclSend/ncclRecv to every rank (self included)";
    case CollOp::broadcast:
      return "ncclBroadcast";
    case CollOp::sendrecv:
      return "grouped ncclSend to rank+1 / ncclRecv from rank-1";
    case CollOp::sendrecv_pair:
      return "ncclSend on src / ncclRecv on dst, other ranks idle";
  }
  return "";
}

/// Measures one (op, group) over every size. Returns false when the budget stopped it.
bool measure(RunContext& ctx, CollGroup& g, CollOp op, int src, int dst) {
  const int k = g.size();
  const std::string opname(calib::coll_op_name(op));
  const std::string label = op == CollOp::sendrecv_pair
                                ? strf("%s %d->%d (of %d)", opname.c_str(), src, dst, k)
                                : strf("%s on %d GPUs", opname.c_str(), k);
  if (!ctx.fits(2.0)) {
    ctx.budget_stop(label);
    return false;
  }
  const double t_begin = ctx.now_s();
  std::vector<int> ranks(static_cast<std::size_t>(k));
  for (int r = 0; r < k; ++r) ranks[static_cast<std::size_t>(r)] = r;
  Json entry{{"op", opname},
             {"nranks", k},
             {"ranks", ranks},
             {"dtype", "float"},
             {"redop", op == CollOp::all_reduce || op == CollOp::reduce_scatter ? "sum" : "none"},
             {"root", op == CollOp::broadcast ? 0 : -1},
             {"in_place", false},
             {"impl", impl_of(op)}};
  if (op == CollOp::sendrecv_pair) {
    entry["src"] = src;
    entry["dst"] = dst;
  }
  const std::string bad = g.check(op, src, dst);
  entry["check"] = bad.empty() ? "passed" : "FAILED: " + bad;
  entry["rows"] = Json::array();
  std::size_t idx = 0;
  ctx.profile.edit([&](Json& d) {
    idx = d["collectives"].size();
    d["collectives"].push_back(entry);
  });
  if (!bad.empty()) {
    ctx.record_error(label + ": correctness check failed, not timed: " + bad);
    return true;
  }

  double last_point_s = 0.0;
  Json first_row, last_row;
  for (std::uint64_t size : calib::doubling_sizes(ctx.opt.min_bytes, ctx.opt.max_bytes)) {
    const calib::CollCounts cc = calib::coll_counts(op, size, 4, k);
    if (cc.bytes == 0) continue;  // too small to split into aligned per-rank blocks
    if (!ctx.fits(2.5 * last_point_s + 0.05)) {
      ctx.budget_stop(
          strf("%s from %llu bytes", label.c_str(), static_cast<unsigned long long>(size)));
      return false;
    }
    const double t0 = ctx.now_s();
    const calib::RepPlan plan = calib::coll_rep_plan(cc.bytes, ctx.opt.iters, ctx.opt.warmup);
    const CollCall call{op, cc.param_count, src, dst};
    const int warm = std::max(1, plan.warmup);
    const double tw = ctx.now_s();
    for (int i = 0; i < warm; ++i) g.launch(call);
    const double launch_s = (ctx.now_s() - tw) / warm;  // host time to queue one call on all ranks
    g.wait(kWaitTimeout, "warm-up collectives");
    const double est = (ctx.now_s() - tw) / warm;
    const int iters = calib::cap_iters_to_batch(plan.iters, est, 0.1);
    // Spin long enough for the host to queue the whole batch (2x margin), within 50 us .. 50 ms.
    const auto spin_ns =
        static_cast<std::uint64_t>(std::clamp(2.0 * iters * launch_s + 50e-6, 50e-6, 0.05) * 1e9);
    std::vector<double> per_call;
    for (int rep = 0; rep < plan.reps; ++rep) {
      const auto ranks_s = g.time_batch(call, iters, spin_ns, kWaitTimeout);
      per_call.push_back(*std::max_element(ranks_s.begin(), ranks_s.end()) / iters);
    }
    const calib::SampleStats st = calib::summarize(per_call);
    const double algbw = static_cast<double>(cc.bytes) / st.median / 1e9;
    Json row{{"bytes", cc.bytes},
             {"count", cc.total_count},
             {"count_per_call", cc.param_count},
             {"time_us", round_to(st.median * 1e6, 0.001)},
             {"time_us_min", round_to(st.min * 1e6, 0.001)},
             {"time_us_p90", round_to(st.p90 * 1e6, 0.001)},
             {"algbw_GBps", round_to(algbw, 0.001)},
             {"busbw_GBps", round_to(algbw * calib::busbw_factor(op, k), 0.001)},
             {"iters", iters},
             {"reps", plan.reps},
             {"host_launch_us", round_to(launch_s * 1e6, 0.01)}};
    ctx.profile.edit([&](Json& d) { d["collectives"][idx]["rows"].push_back(row); });
    if (first_row.is_null()) first_row = row;
    last_row = row;
    last_point_s = ctx.now_s() - t0;
  }
  if (!first_row.is_null())
    ctx.log(
        strf("%s: check passed; %.2f us at %llu B .. %.1f us at %llu B, busbw %.1f GB/s (%.1f s)",
             label.c_str(), first_row["time_us"].get<double>(),
             static_cast<unsigned long long>(first_row["bytes"].get<std::uint64_t>()),
             last_row["time_us"].get<double>(),
             static_cast<unsigned long long>(last_row["bytes"].get<std::uint64_t>()),
             last_row["busbw_GBps"].get<double>(), ctx.now_s() - t_begin));
  return true;
}

}  // namespace

void run_coll(RunContext& ctx) {
  const int n = ctx.ngpus;
  if (n < 2) return ctx.log("fewer than 2 GPUs: no collectives");
  std::vector<CollOp> ops;
  for (CollOp op : calib::all_coll_ops()) {
    const std::string name(calib::coll_op_name(op));
    if (ctx.opt.coll_ops.empty() ||
        std::find(ctx.opt.coll_ops.begin(), ctx.opt.coll_ops.end(), name) != ctx.opt.coll_ops.end())
      ops.push_back(op);
  }
  ctx.profile.edit([&](Json& d) {
    d["collectives_method"] =
        "nccl-tests semantics, float32, out of place; per size: warm-up calls, then batches of "
        "iters back-to-back "
        "calls (one ncclGroupStart/End over all ranks per call, single thread; a spin kernel on "
        "every GPU holds the "
        "batch until it is fully queued, so host launch time is not in it: host_launch_us reports "
        "it); time per call "
        "= slowest rank's CUDA-event time of the batch / iters; time_us = median over batches "
        "(also min, p90); "
        "algbw = bytes / time_us; busbw = algbw x nccl-tests factor";
  });
  double last_group_s = 5.0;
  for (int k : calib::group_size_order(n)) {
    if (!ctx.fits(std::min(last_group_s, 30.0))) {
      ctx.budget_stop(strf("collectives on %d GPUs", k));
      return;
    }
    const double t0 = ctx.now_s();
    std::unique_ptr<CollGroup> g;
    try {
      g = std::make_unique<CollGroup>(k, ctx.opt.max_bytes);
    } catch (const GpuError& e) {
      ctx.record_error(strf("creating NCCL communicators for GPUs 0..%d: %s", k - 1, e.what()));
      ctx.save();
      continue;
    }
    ctx.log(strf("communicators for GPUs 0..%d ready (%.1f s)", k - 1, ctx.now_s() - t0));
    bool stopped = false;
    try {
      for (CollOp op : ops) {
        if (op == CollOp::sendrecv_pair) {
          if (k != n) continue;  // pairs are measured once, in the full group
          for (int a = 0; a < k && !stopped; ++a)
            for (int b = 0; b < k && !stopped; ++b)
              if (a != b) stopped = !measure(ctx, *g, op, a, b);
        } else {
          stopped = !measure(ctx, *g, op, 0, 1);
        }
        ctx.save();
        if (stopped) break;
      }
    } catch (const GpuError& e) {
      g->mark_broken();
      ctx.record_error(strf("collectives on %d GPUs: %s", k, e.what()));
    }
    if (const std::string err = g->close(60.0); !err.empty()) {
      ctx.record_error(err + "; no further collectives");
      ctx.detached_work = true;
      ctx.save();
      return;
    }
    g.reset();
    ctx.save();
    last_group_s = ctx.now_s() - t0;
    if (stopped) return;
  }
}

}  // namespace scalescope::gpu
