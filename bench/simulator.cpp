// Speed of the task-graph executor on a synthetic GPT-3-175B-like 1F1B graph (tp=8, pp=8, dp=16 on
// 1,024 H100s, 96 microbatches, 12 layers per stage): symmetric analytical, all ranks analytical
// and flow.
#include "scalescope/sim/simulator.hpp"

#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope {
namespace {

using TC = TaskCategory;

// Shape of the synthetic job. Per layer and microbatch: forward = attention part, TP all_reduce,
// MLP part, TP all_reduce (Megatron, on the critical path); backward the same at twice the compute.
struct Job {
  int tp = 8, pp = 8, dp = 16, microbatches = 96, layers_per_stage = 12;
  // GPT-3 175B, mbs 1, seq 2048, hidden 12288: ~0.95 TFLOP per layer forward per GPU at tp 8, at
  // ~600 TFLOP/s achieved -> ~1.6 ms, split 1/3 attention, 2/3 MLP (synthetic numbers, for speed
  // only).
  Seconds f_attn = microseconds(530), f_mlp = microseconds(1060);
  Bytes tp_bytes = Bytes(2048.0 * 12288 * 2);  // s * h * 2 bytes (bf16)
  Bytes act_bytes = Bytes(2048.0 * 12288 * 2);
  Bytes grad_bucket =
      Bytes(2.7e9 * 2 / 12);  // bf16 grads of a stage's 1/8 shard, one bucket per layer
  Seconds optimizer = milliseconds(4);
  int rank(int p, int d, int t) const { return (p * dp + d) * tp + t; }
};

enum Stream {
  kCompute = 0,
  kTp = 1,
  kRecvAct = 2,
  kSendAct = 3,
  kRecvGrad = 4,
  kSendGrad = 5,
  kDp = 6
};

std::uint64_t key(int kind, int a, int b, int c, int d) {
  return (static_cast<std::uint64_t>(kind) << 60) | (static_cast<std::uint64_t>(a) << 44) |
         (static_cast<std::uint64_t>(b) << 28) | (static_cast<std::uint64_t>(c) << 12) |
         static_cast<std::uint64_t>(d);
}

// One rank's 1F1B timeline. Each direction of p2p traffic has its own stream, so the FIFO order on
// both ends always matches (no send/recv deadlock).
void add_rank(TaskGraph& g, const Job& j, int p, int d, int t) {
  const int r = j.rank(p, d, t);
  std::vector<int> tp_group, dp_group;
  for (int k = 0; k < j.tp; ++k) tp_group.push_back(j.rank(p, d, k));
  for (int k = 0; k < j.dp; ++k) dp_group.push_back(j.rank(p, k, t));
  const GroupId tpg = g.intern_group(tp_group), dpg = g.intern_group(dp_group);
  const int m = j.microbatches, L = j.layers_per_stage;
  const int warmup = std::min(j.pp - p - 1, m);
  std::vector<TaskId> last_bwd_layer_end(static_cast<std::size_t>(j.layers_per_stage), kNoTask);

  auto forward = [&](int mb) {
    TaskId prev = kNoTask;
    if (p > 0)
      prev = g.add_recv(r, kRecvAct, TC::pp_comm, "recv act", j.rank(p - 1, d, t), j.act_bytes,
                        static_cast<std::uint32_t>(mb), {mb, -1, static_cast<std::int16_t>(p)});
    for (int l = 0; l < L; ++l) {
      const TaskLabels lab{mb, static_cast<std::int16_t>(l), static_cast<std::int16_t>(p)};
      const TaskId a = g.add_compute(r, kCompute, TC::forward, "fwd attn", j.f_attn, lab);
      if (prev != kNoTask) g.precede(prev, a);
      const TaskId ar1 = g.add_collective(r, kTp, TC::tp_comm, "tp ar", CollOp::all_reduce, tpg,
                                          j.tp_bytes, key(1, p * j.dp + d, mb, l, 0), lab);
      g.precede(a, ar1);
      const TaskId b = g.add_compute(r, kCompute, TC::forward, "fwd mlp", j.f_mlp, lab);
      g.precede(ar1, b);
      const TaskId ar2 = g.add_collective(r, kTp, TC::tp_comm, "tp ar", CollOp::all_reduce, tpg,
                                          j.tp_bytes, key(1, p * j.dp + d, mb, l, 1), lab);
      g.precede(b, ar2);
      prev = ar2;
    }
    if (p < j.pp - 1) {
      const TaskId s =
          g.add_send(r, kSendAct, TC::pp_comm, "send act", j.rank(p + 1, d, t), j.act_bytes,
                     static_cast<std::uint32_t>(mb), {mb, -1, static_cast<std::int16_t>(p)});
      g.precede(prev, s);
    }
  };
  auto backward = [&](int mb) {
    TaskId prev = kNoTask;
    if (p < j.pp - 1)
      prev = g.add_recv(r, kRecvGrad, TC::pp_comm, "recv grad", j.rank(p + 1, d, t), j.act_bytes,
                        static_cast<std::uint32_t>(mb), {mb, -1, static_cast<std::int16_t>(p)});
    for (int l = L - 1; l >= 0; --l) {
      const TaskLabels lab{mb, static_cast<std::int16_t>(l), static_cast<std::int16_t>(p)};
      const TaskId b = g.add_compute(r, kCompute, TC::backward, "bwd mlp", j.f_mlp * 2.0, lab);
      if (prev != kNoTask) g.precede(prev, b);
      const TaskId ar1 = g.add_collective(r, kTp, TC::tp_comm, "tp ar", CollOp::all_reduce, tpg,
                                          j.tp_bytes, key(2, p * j.dp + d, mb, l, 0), lab);
      g.precede(b, ar1);
      const TaskId a = g.add_compute(r, kCompute, TC::backward, "bwd attn", j.f_attn * 2.0, lab);
      g.precede(ar1, a);
      const TaskId ar2 = g.add_collective(r, kTp, TC::tp_comm, "tp ar", CollOp::all_reduce, tpg,
                                          j.tp_bytes, key(2, p * j.dp + d, mb, l, 1), lab);
      g.precede(a, ar2);
      prev = ar2;
      if (mb == m - 1) last_bwd_layer_end[static_cast<std::size_t>(l)] = ar2;
    }
    if (p > 0) {
      const TaskId s =
          g.add_send(r, kSendGrad, TC::pp_comm, "send grad", j.rank(p - 1, d, t), j.act_bytes,
                     static_cast<std::uint32_t>(mb), {mb, -1, static_cast<std::int16_t>(p)});
      g.precede(prev, s);
    }
  };

  // 1F1B order; backward of microbatch k finishes in order, so the last one (m-1) is last.
  for (int mb = 0; mb < warmup; ++mb) forward(mb);
  for (int i = 0; i < m - warmup; ++i) {
    forward(warmup + i);
    backward(i);
  }
  for (int mb = m - warmup; mb < m; ++mb) backward(mb);

  // DP gradient all_reduce per layer bucket once its last backward is done, then the optimizer
  // step.
  std::vector<TaskId> buckets;
  for (int l = L - 1; l >= 0; --l) {
    const TaskId ar =
        g.add_collective(r, kDp, TC::dp_comm, "dp ar", CollOp::all_reduce, dpg, j.grad_bucket,
                         key(3, p * j.tp + t, l, 0, 0), {-1, static_cast<std::int16_t>(l), -1});
    g.precede(last_bwd_layer_end[static_cast<std::size_t>(l)], ar);
    buckets.push_back(ar);
  }
  const TaskId opt = g.add_compute(r, kCompute, TC::optimizer, "optimizer", j.optimizer);
  g.precede(buckets.back(), opt);
}

TaskGraph build(const Job& j, bool symmetric) {
  TaskGraph g;
  const std::size_t per_rank =
      static_cast<std::size_t>(j.microbatches) * j.layers_per_stage * 8 + 4 * j.microbatches + 16;
  const std::size_t ranks =
      symmetric ? static_cast<std::size_t>(j.pp) : static_cast<std::size_t>(j.pp * j.dp * j.tp);
  g.reserve(per_rank * ranks, per_rank * ranks);
  g.set_stream_name(kCompute, "compute");
  g.set_stream_name(kTp, "tp-comm");
  g.set_stream_name(kRecvAct, "pp recv act");
  g.set_stream_name(kSendAct, "pp send act");
  g.set_stream_name(kRecvGrad, "pp recv grad");
  g.set_stream_name(kSendGrad, "pp send grad");
  g.set_stream_name(kDp, "dp-comm");
  for (int p = 0; p < j.pp; ++p) {
    for (int d = 0; d < (symmetric ? 1 : j.dp); ++d) {
      for (int t = 0; t < (symmetric ? 1 : j.tp); ++t) add_rank(g, j, p, d, t);
    }
  }
  return g;
}

struct World {
  Cluster cluster;
  CollectiveModel model;
  explicit World(Cluster c)
      : cluster(std::move(c)), model(cluster, datasheet_collective_params()) {}
};

std::unique_ptr<World> make_world() {
  auto c = load_cluster_by_name_or_path("h100-rail-ndr", ClusterOptions{128, {}});
  if (!c) {
    std::fprintf(stderr, "%s\n", c.error().str().c_str());
    std::abort();
  }
  return std::make_unique<World>(std::move(c).value());
}

double peak_rss_GiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB on Linux
}

void report(benchmark::State& state, const TaskGraph& g, const SimResult& r) {
  state.counters["tasks"] = static_cast<double>(g.size());
  state.counters["step_s"] = r.step_time.value;
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["peak_rss_GiB"] = peak_rss_GiB();
}

void BM_BuildSymmetric(benchmark::State& state) {
  const Job j;
  std::size_t n = 0;
  for (auto _ : state) {
    TaskGraph g = build(j, true);
    n = g.size();
    benchmark::DoNotOptimize(g);
  }
  state.counters["tasks"] = static_cast<double>(n);
}
BENCHMARK(BM_BuildSymmetric)->Unit(benchmark::kMillisecond);

void BM_SimulateSymmetricAnalytical(benchmark::State& state) {
  const auto wp = make_world();
  const World& w = *wp;
  const TaskGraph g = build(Job{}, true);
  SimOptions o;
  o.validate = state.range(0) != 0;
  SimResult r;
  for (auto _ : state) r = std::move(simulate(g, w.cluster, w.model, o)).value();
  report(state, g, r);
}
BENCHMARK(BM_SimulateSymmetricAnalytical)
    ->Arg(1)
    ->Arg(0)
    ->ArgName("validate")
    ->Unit(benchmark::kMillisecond);

void BM_SimulateFullAnalytical(benchmark::State& state) {
  const auto wp = make_world();
  const World& w = *wp;
  const TaskGraph g = build(Job{}, false);
  SimResult r;
  for (auto _ : state) r = std::move(simulate(g, w.cluster, w.model)).value();
  report(state, g, r);
}
BENCHMARK(BM_SimulateFullAnalytical)->Unit(benchmark::kMillisecond)->Iterations(1);

// Flow fidelity over all ranks. Arg: 1 = intra-node traffic (the TP all_reduces) analytical, DP and
// PP as flows; 0 = everything as flows (only with few microbatches: range(1)).
void BM_SimulateFullFlow(benchmark::State& state) {
  const auto wp = make_world();
  const World& w = *wp;
  Job j;
  j.microbatches = static_cast<int>(state.range(1));
  const TaskGraph g = build(j, false);
  SimOptions o;
  o.fidelity = Fidelity::flow;
  o.analytical_intra_node = state.range(0) != 0;
  SimResult r;
  for (auto _ : state) r = std::move(simulate(g, w.cluster, w.model, o)).value();
  report(state, g, r);
}
BENCHMARK(BM_SimulateFullFlow)
    ->Args({1, 16})
    ->Args({1, 96})
    ->Args({0, 8})
    ->ArgNames({"intra_analytical", "microbatches"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace scalescope
