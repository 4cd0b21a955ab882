// Speed of `scalescope simulate` on the GPT-3 175B / 1,024-GPU case (tp=8, pp=8, dp=16, mbs=1, gbs=1536,
// 96 micro-batches per pipeline, 1F1B, full recompute) on h100-rail-ndr: build + simulate symmetric
// analytical (target < 20 ms), and every rank at flow fidelity (target < 30 s and 8 GiB).
#include <benchmark/benchmark.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/compute_profile.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace {

using namespace scalescope;
using namespace scalescope::models;

struct Case {
  Cluster cluster;
  CollectiveModel collectives;
  ComputeModel compute;
  ModelSpec model;
  Plan plan;
  Case(Cluster c, ComputeModel m, ModelSpec s, Plan p)
      : cluster(std::move(c)), collectives(cluster, datasheet_collective_params()), compute(std::move(m)),
        model(std::move(s)), plan(p) {}
};

Case& gpt3() {
  static Case* c = [] {
    auto cluster = load_cluster_by_name_or_path("h100-rail-ndr", ClusterOptions{128, {}});
    auto model = load_model_by_name_or_path("gpt3-175b");
    auto plan = parse_plan("tp=8,pp=8,dp=16,mbs=1,gbs=1536,schedule=1f1b,recompute=full");
    if (!cluster || !model || !plan) std::abort();  // built-in files of the source tree
    auto compute = ComputeModel::datasheet(cluster->gpu_spec());
    if (!compute) std::abort();
    return new Case(std::move(cluster).value(), std::move(compute).value(), *model, *plan);
  }();
  return *c;
}

double max_rss_GiB() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / (1024.0 * 1024.0);  // ru_maxrss is in KiB on Linux
}

// The datasheet compute model of the case plus the h200x4 profile's measured `interference` rows (and
// nothing else of that profile): every compute task gets its own per-kernel factors.
const ComputeModel& compute_with_interference() {
  static const ComputeModel* m = [] {
    auto profile = load_compute_profile_by_name_or_path("h200x4");
    if (!profile) std::abort();  // built-in profile of the source tree
    ComputeProfile only;
    only.source = profile->source;
    only.interference = profile->interference;
    auto model = ComputeModel::with_profile(gpt3().cluster.gpu_spec(), only);
    if (!model || !model->per_kernel_interference()) std::abort();
    return new ComputeModel(std::move(model).value());
  }();
  return *m;
}

void run(benchmark::State& state, bool symmetric, Fidelity fidelity, bool intra_analytical = false,
         bool interference = false) {
  Case& c = gpt3();
  const ComputeModel& compute = interference ? compute_with_interference() : c.compute;
  BuildOptions o;
  o.symmetric = symmetric;
  SimOptions so;
  so.fidelity = fidelity;
  so.validate = false;
  so.analytical_intra_node = intra_analytical;
  std::size_t tasks = 0;
  double step = 0;
  for (auto _ : state) {
    auto g = build_task_graph(c.model, c.plan, c.cluster, compute, o);
    if (!g) std::abort();
    auto r = simulate(*g, c.cluster, c.collectives, so);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().str().c_str());
      std::abort();
    }
    tasks = g->size();
    step = r->step_time.value;
    benchmark::DoNotOptimize(r);
  }
  state.counters["tasks"] = static_cast<double>(tasks);
  state.counters["step_s"] = step;
  state.counters["max_rss_GiB"] = max_rss_GiB();
}

void BM_Gpt3_1024_BuildOnly_Symmetric(benchmark::State& state) {
  Case& c = gpt3();
  for (auto _ : state) {
    auto g = build_task_graph(c.model, c.plan, c.cluster, c.compute);
    benchmark::DoNotOptimize(g);
  }
}
BENCHMARK(BM_Gpt3_1024_BuildOnly_Symmetric)->Unit(benchmark::kMillisecond);

void BM_Gpt3_1024_Symmetric_Analytical(benchmark::State& state) { run(state, true, Fidelity::analytical); }
BENCHMARK(BM_Gpt3_1024_Symmetric_Analytical)->Unit(benchmark::kMillisecond);

// With compute-communication interference (the h200x4 profile's per-kernel factors): every compute task
// and every intra-node (TP) collective runs through the rate tracker (sim/src/interference.hpp).
void BM_Gpt3_1024_Symmetric_Analytical_Interference(benchmark::State& state) {
  run(state, true, Fidelity::analytical, false, true);
}
BENCHMARK(BM_Gpt3_1024_Symmetric_Analytical_Interference)->Unit(benchmark::kMillisecond);

void BM_Gpt3_1024_AllRanks_Analytical(benchmark::State& state) { run(state, false, Fidelity::analytical); }
BENCHMARK(BM_Gpt3_1024_AllRanks_Analytical)->Unit(benchmark::kMillisecond)->Iterations(1);

void BM_Gpt3_1024_AllRanks_Flow(benchmark::State& state) { run(state, false, Fidelity::flow); }
BENCHMARK(BM_Gpt3_1024_AllRanks_Flow)->Unit(benchmark::kMillisecond)->Iterations(1);

// Intra-node collectives (the tp=8 groups, one per node, on NVLink that no other traffic uses) at
// their analytical time; inter-node PP and DP traffic still as flows.
void BM_Gpt3_1024_AllRanks_Flow_IntraNodeAnalytical(benchmark::State& state) {
  run(state, false, Fidelity::flow, true);
}
BENCHMARK(BM_Gpt3_1024_AllRanks_Flow_IntraNodeAnalytical)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
