// Pure planning helpers of the GPU calibration program (no CUDA): size sweeps, nccl-tests byte
// counts and bus-bandwidth factors, sample statistics, repetition policy and time budget.
//
// nccl-tests conventions reproduced here (NVIDIA/nccl-tests, src/*.cu, GetCollByteCount/GetBw):
//   count = size / sizeof(elt)
//   all_reduce, broadcast, sendrecv:  every rank passes `count`; algbw = count*elt / t
//   all_gather, reduce_scatter, alltoall: per-rank block = floor(count / (A*n)) * A elements,
//     A = 16 / sizeof(elt) (16-byte aligned blocks); the whole buffer holds n blocks;
//     algbw = n*block*elt / t (the size of the whole buffer over the time)
//   busbw = algbw * factor:  all_reduce 2(n-1)/n;  all_gather, reduce_scatter, alltoall (n-1)/n;
//     broadcast, sendrecv 1.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalescope::calib {

/// Parses a byte count such as "8", "64K", "1M", "1G", "2GiB", "512MB" (K/M/G/T are binary
/// multiples, as in nccl-tests' -b/-e options). Returns nullopt when malformed or overflowing.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);

/// min, 2*min, 4*min, ... up to and including max. Empty when min is 0 or min > max.
std::vector<std::uint64_t> doubling_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes);

enum class CollOp {
  all_reduce,
  all_gather,
  reduce_scatter,
  alltoall,
  broadcast,
  sendrecv,
  sendrecv_pair
};

/// Names used in the profile: "all_reduce", ..., "sendrecv" (nccl-tests ring shift: every rank
/// sends to rank+1), "sendrecv_pair" (one rank sends to one other rank, the others idle).
std::string_view coll_op_name(CollOp op);
std::optional<CollOp> coll_op_from_name(std::string_view name);
/// All ops in measuring order.
std::vector<CollOp> all_coll_ops();

/// Element counts of one nccl-tests measurement point.
struct CollCounts {
  std::uint64_t param_count = 0;  ///< the count passed to NCCL per call (per peer for alltoall)
  std::uint64_t send_elems = 0;   ///< elements in each rank's send buffer
  std::uint64_t recv_elems = 0;   ///< elements in each rank's receive buffer
  std::uint64_t bytes = 0;        ///< nccl-tests "size": max(send, recv) elements * elt size
  std::uint64_t total_count = 0;  ///< bytes / elt size
};
/// Counts for `requested_bytes` on `nranks` ranks; bytes may round down (aligned blocks) and
/// can be 0 for tiny sizes (the caller skips those points).
CollCounts coll_counts(CollOp op, std::uint64_t requested_bytes, std::uint32_t elt_size,
                       int nranks);

/// Group sizes (GPUs 0..k-1) in measuring order, most useful first, so that a run cut short by
/// its time budget still has them: all n, then 2, then the other powers of two (4, 8, ...)
/// ascending, then the remaining sizes ascending. Empty for n < 2.
std::vector<int> group_size_order(int n);

/// nccl-tests bus-bandwidth factor (see the header comment); sendrecv_pair is 1.
double busbw_factor(CollOp op, int nranks);

/// Median, minimum, 90th percentile (linear interpolation between order statistics, as numpy's
/// default), mean and count of a non-empty sample.
struct SampleStats {
  double median = 0.0;
  double min = 0.0;
  double p90 = 0.0;
  double mean = 0.0;
  std::size_t n = 0;
};
SampleStats summarize(std::vector<double> samples);

/// Warm-up iterations, iterations per timed batch, and number of timed batches of one point.
struct RepPlan {
  int warmup = 0;
  int iters = 0;
  int reps = 0;
};
/// Collectives: up to 64 MiB {warmup, iters, 5 batches}; above it {min(warmup,2), min(iters,5),
/// 3 batches}, so that the large sizes (which dominate the run time) cost little.
RepPlan coll_rep_plan(std::uint64_t bytes, int base_iters, int base_warmup);
/// Lowers iters so that one batch of iterations lasts at most max_batch_s (at least 1 iteration).
int cap_iters_to_batch(int iters, double est_seconds_per_iter, double max_batch_s);
/// Repetitions of one timed operation: enough to last min_total_s, at least min_reps, at most
/// max_reps (est_seconds <= 0 gives max_reps).
int reps_for_duration(double est_seconds, int min_reps, double min_total_s, int max_reps);

/// Deadline (seconds since the start) of a section that starts at now_s: it gets the share
/// weight / remaining_weight of the time left before total_s (remaining_weight counts this section
/// and every section still to come), so time a section does not use rolls over to the next ones.
double section_deadline(double now_s, double total_s, double weight, double remaining_weight);

}  // namespace scalescope::calib
