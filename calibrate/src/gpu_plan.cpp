// Pure planning helpers of the GPU calibration program: sizes, nccl-tests counts, statistics,
// budget.
#include "scalescope/calibrate/gpu_plan.hpp"

#include <algorithm>
#include <cassert>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>

namespace scalescope::calib {

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::uint64_t value = 0;
  std::size_t digits = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
    const std::uint64_t d = static_cast<std::uint64_t>(text[i] - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return std::nullopt;
    value = value * 10 + d;
  }
  if (digits == 0) return std::nullopt;
  std::string suffix;
  for (; i < text.size(); ++i) {
    if (std::isspace(static_cast<unsigned char>(text[i]))) continue;
    suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(text[i])));
  }
  unsigned shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else {
    const char unit = suffix[0];
    const std::string rest = suffix.substr(1);
    if (rest != "" && rest != "B" && rest != "IB") return std::nullopt;
    switch (unit) {
      case 'K':
        shift = 10;
        break;
      case 'M':
        shift = 20;
        break;
      case 'G':
        shift = 30;
        break;
      case 'T':
        shift = 40;
        break;
      default:
        return std::nullopt;
    }
  }
  if (shift > 0 && value > (std::numeric_limits<std::uint64_t>::max() >> shift))
    return std::nullopt;
  return value << shift;
}

std::vector<std::uint64_t> doubling_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes) {
  std::vector<std::uint64_t> out;
  if (min_bytes == 0 || min_bytes > max_bytes) return out;
  for (std::uint64_t s = min_bytes; s <= max_bytes; s *= 2) {
    out.push_back(s);
    if (s > max_bytes / 2) break;  // the next doubling would pass max (or overflow)
  }
  return out;
}

namespace {
struct OpName {
  CollOp op;
  std::string_view name;
};
constexpr OpName kOpNames[] = {
    {CollOp::all_reduce, "all_reduce"},         {CollOp::all_gather, "all_gather"},
    {CollOp::reduce_scatter, "reduce_scatter"}, {CollOp::alltoall, "alltoall"},
    {CollOp::broadcast, "broadcast"},           {CollOp::sendrecv, "sendrecv"},
    {CollOp::sendrecv_pair, "sendrecv_pair"},
};
}  // namespace

std::string_view coll_op_name(CollOp op) {
  for (const auto& e : kOpNames)
    if (e.op == op) return e.name;
  assert(false && "coll_op_name: unknown op");
  return "unknown";
}

std::optional<CollOp> coll_op_from_name(std::string_view name) {
  for (const auto& e : kOpNames)
    if (e.name == name) return e.op;
  return std::nullopt;
}

std::vector<CollOp> all_coll_ops() {
  std::vector<CollOp> out;
  for (const auto& e : kOpNames) out.push_back(e.op);
  return out;
}

CollCounts coll_counts(CollOp op, std::uint64_t requested_bytes, std::uint32_t elt_size,
                       int nranks) {
  assert(elt_size > 0 && nranks > 0 && "coll_counts: element size and rank count must be positive");
  const std::uint64_t n = static_cast<std::uint64_t>(nranks);
  const std::uint64_t count = requested_bytes / elt_size;
  const std::uint64_t align = std::max<std::uint64_t>(1, 16 / elt_size);
  CollCounts c;
  switch (op) {
    case CollOp::all_reduce:
    case CollOp::broadcast:
    case CollOp::sendrecv:
    case CollOp::sendrecv_pair:
      c.param_count = count;
      c.send_elems = count;
      c.recv_elems = count;
      break;
    case CollOp::all_gather: {
      const std::uint64_t block = count / (align * n) * align;
      c.param_count = block;
      c.send_elems = block;
      c.recv_elems = block * n;
      break;
    }
    case CollOp::reduce_scatter: {
      const std::uint64_t block = count / (align * n) * align;
      c.param_count = block;
      c.send_elems = block * n;
      c.recv_elems = block;
      break;
    }
    case CollOp::alltoall: {
      const std::uint64_t block = count / (align * n) * align;
      c.param_count = block;
      c.send_elems = block * n;
      c.recv_elems = block * n;
      break;
    }
  }
  c.bytes = std::max(c.send_elems, c.recv_elems) * elt_size;
  c.total_count = c.bytes / elt_size;
  return c;
}

std::vector<int> group_size_order(int n) {
  std::vector<int> out;
  if (n < 2) return out;
  out.push_back(n);
  if (n > 2) out.push_back(2);
  for (int p = 4; p < n; p *= 2) out.push_back(p);
  for (int k = 3; k < n; ++k)
    if ((k & (k - 1)) != 0) out.push_back(k);
  return out;
}

double busbw_factor(CollOp op, int nranks) {
  assert(nranks > 0 && "busbw_factor: rank count must be positive");
  const double n = static_cast<double>(nranks);
  switch (op) {
    case CollOp::all_reduce:
      return 2.0 * (n - 1.0) / n;
    case CollOp::all_gather:
    case CollOp::reduce_scatter:
    case CollOp::alltoall:
      return (n - 1.0) / n;
    case CollOp::broadcast:
    case CollOp::sendrecv:
    case CollOp::sendrecv_pair:
      return 1.0;
  }
  return 1.0;
}

SampleStats summarize(std::vector<double> samples) {
  assert(!samples.empty() && "summarize: empty sample");
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  auto quantile = [&](double q) {
    const double pos = q * static_cast<double>(n - 1);
    const auto lo = static_cast<std::size_t>(std::floor(pos));
    const std::size_t hi = std::min(lo + 1, n - 1);
    const double frac = pos - static_cast<double>(lo);
    return samples[lo] + (samples[hi] - samples[lo]) * frac;
  };
  SampleStats s;
  s.n = n;
  s.min = samples.front();
  s.median = quantile(0.5);
  s.p90 = quantile(0.9);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  return s;
}

RepPlan coll_rep_plan(std::uint64_t bytes, int base_iters, int base_warmup) {
  constexpr std::uint64_t kLarge = 64ull << 20;
  if (bytes <= kLarge) return RepPlan{base_warmup, base_iters, 5};
  return RepPlan{std::min(base_warmup, 2), std::min(base_iters, 5), 3};
}

int cap_iters_to_batch(int iters, double est_seconds_per_iter, double max_batch_s) {
  if (est_seconds_per_iter <= 0.0) return std::max(1, iters);
  const double fit = std::floor(max_batch_s / est_seconds_per_iter);
  const int cap = fit >= static_cast<double>(iters) ? iters : static_cast<int>(fit);
  return std::max(1, cap);
}

int reps_for_duration(double est_seconds, int min_reps, double min_total_s, int max_reps) {
  assert(min_reps >= 1 && min_reps <= max_reps &&
         "reps_for_duration: need 1 <= min_reps <= max_reps");
  if (est_seconds <= 0.0) return max_reps;
  const double want = std::ceil(min_total_s / est_seconds);
  if (want >= static_cast<double>(max_reps)) return max_reps;
  return std::clamp(static_cast<int>(want), min_reps, max_reps);
}

double section_deadline(double now_s, double total_s, double weight, double remaining_weight) {
  const double left = std::max(0.0, total_s - now_s);
  if (remaining_weight <= 0.0) return now_s + left;
  return now_s + left * std::clamp(weight / remaining_weight, 0.0, 1.0);
}

}  // namespace scalescope::calib
