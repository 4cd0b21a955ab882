// Loader of the framework host-cost file (format in framework_host.hpp).
#include "scalescope/models/framework_host.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <utility>

#include "scalescope/sim/json_reader.hpp"

namespace scalescope::models {

Seconds FrameworkHostCost::for_plan(const Plan& plan, int processes_on_host, int local_experts, double moe_share) const {
  const Seconds experts(per_local_expert.value * std::max(0, local_experts) * std::clamp(moe_share, 0.0, 1.0));
  if (plan.tp <= 1) return module + experts;
  const std::map<int, Seconds>::value_type* best = nullptr;
  for (const auto& entry : tensor_parallel_by_processes) {
    // iterating in ascending count, `<=` lets the larger of two equally near counts win
    if (!best || std::abs(entry.first - processes_on_host) <= std::abs(best->first - processes_on_host)) best = &entry;
  }
  return (best ? best->second : tensor_parallel) + experts;
}

double FrameworkHostCost::slowest_of(int ranks) const {
  if (ranks <= 1 || process_samples.empty()) return 1.0;
  std::vector<double> x = process_samples;
  std::sort(x.begin(), x.end());
  const double K = static_cast<double>(x.size()), N = static_cast<double>(ranks);
  double expected = 0.0, below = 0.0;  // below = ((i-1)/K)^N
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double upto = std::pow(static_cast<double>(i + 1) / K, N);
    expected += x[i] * (upto - below);
    below = upto;
  }
  // The costs come from the median process; with low outliers the expected slowest of a few can fall below it,
  // but the slowest of several ranks is never expected to be faster than the typical one.
  return std::max(1.0, expected);
}

namespace {

/// Host time per layer and micro-batch: positive and at most 1 s (measured: 1.6-9.8 ms; plausible
/// ranges in docs/plausible-ranges.md).
double checked_host_seconds(const JsonCursor& c) {
  const double v = c.as_positive_number();
  if (v > 1.0) c.fail("expected seconds per layer and micro-batch in (0, 1], got " + std::to_string(v));
  return v;
}

}  // namespace

Expected<FrameworkHostCost> load_framework_host_cost(const std::string& path) {
  auto doc = read_json_file(path);
  if (!doc) return doc.error();
  return framework_host_cost_from_json(*doc, path);
}

Expected<FrameworkHostCost> framework_host_cost_from_json(const Json& doc, const std::string& path) {
  return catch_errors([&]() -> FrameworkHostCost {
    JsonCursor root(doc, path);
    root.expect_object();
    root.expect_keys({"schema", "framework", "gpu", "host", "method", "fitted_on", "per_layer_microbatch_s",
                      "per_edge_microbatch_s", "per_step_s", "forward_share", "after_sync_share", "process_samples", "rows",
                      "per_local_expert_s"});
    const std::string schema = root.get_string("schema");
    if (schema != "scalescope.host_dispatch/1") {
      root.at("schema").fail("expected \"scalescope.host_dispatch/1\", got \"" + schema + "\"");
    }
    FrameworkHostCost c;
    c.source = path;
    c.framework = root.get_string("framework", "");
    c.host_machine = root.get_string("host", c.host_machine);
    const JsonCursor per = root.at("per_layer_microbatch_s");
    per.expect_keys({"module", "tensor_parallel", "tensor_parallel_by_processes"});
    c.module = Seconds(checked_host_seconds(per.at("module")));
    c.tensor_parallel = Seconds(checked_host_seconds(per.at("tensor_parallel")));
    if (per.has("tensor_parallel_by_processes")) {
      for (const auto& [key, value] : per.at("tensor_parallel_by_processes").members()) {
        int processes = 0;
        const auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), processes);
        if (ec != std::errc{} || end != key.data() + key.size() || processes < 1) {
          value.fail("expected a process count (an integer >= 1) as the key, got \"" + key + "\"");
        }
        c.tensor_parallel_by_processes[processes] = Seconds(checked_host_seconds(value));
      }
    }
    read_host_extras(root, c);
    if (auto e = root.find("per_local_expert_s")) {
      const double v = e->as_nonnegative_number();
      if (v > 0.1) e->fail("expected seconds per local expert, MoE layer and micro-batch in [0, 0.1], got " + std::to_string(v));
      c.per_local_expert = Seconds(v);
    }
    return c;
  });
}

void read_host_extras(const JsonCursor& host, FrameworkHostCost& into) {
  if (auto st = host.find("per_step_s")) into.per_step = Seconds(st->as_nonnegative_number());
  if (auto e = host.find("per_edge_microbatch_s")) into.edge_per_microbatch = Seconds(e->as_nonnegative_number());
  // Shares of the layer's host time (import: the profiled CPU time of the forward, and after its sync).
  for (auto [key, out] : {std::pair{"forward_share", &into.forward_fraction},
                          std::pair{"after_sync_share", &into.after_sync_fraction}}) {
    if (auto f = host.find(key)) {
      const double v = f->as_nonnegative_number();
      if (!(v <= 1.0)) f->fail("expected a share in [0, 1]");
      *out = v;
    }
  }
  if (auto ps = host.find("process_samples")) {
    // Each process's host-bound step relative to the one the costs come from (import --host-process-times).
    ps->expect_array();
    if (ps->size() < 2 || ps->size() > 64) ps->fail("expected 2 to 64 processes' relative host times");
    for (const auto& x : ps->items()) {
      const double v = x.as_positive_number();
      if (!(v >= 0.1 && v <= 10.0)) x.fail("expected a host time relative to the one the costs come from, in [0.1, 10]");
      into.process_samples.push_back(v);
    }
  }
}

}  // namespace scalescope::models
