// Speed of calibration: loading the measured h200x4 profile, fitting the collective model to it, and
// parsing an nccl-tests log.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "scalescope/calibrate/fit.hpp"
#include "scalescope/calibrate/nccl_tests.hpp"

namespace {

using namespace scalescope;

const std::string kProfile = std::string(SCALESCOPE_SOURCE_DIR) + "/calibrate/profiles/h200x4.json";

void BM_LoadProfileH200x4(benchmark::State& state) {
  for (auto _ : state) {
    auto p = calib::load_profile(kProfile);
    if (!p) state.SkipWithError(p.error().str().c_str());
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_LoadProfileH200x4)->Unit(benchmark::kMillisecond);

void BM_FitCollectivesH200x4(benchmark::State& state) {
  auto p = calib::load_profile(kProfile);
  auto c = load_cluster_by_name_or_path("hgx-h200-4");
  if (!p || !c) {
    state.SkipWithError("h200x4 profile or hgx-h200-4 cluster missing");
    return;
  }
  for (auto _ : state) {
    auto fit = calib::fit_collective_params(*p, *c);
    benchmark::DoNotOptimize(fit);
  }
}
BENCHMARK(BM_FitCollectivesH200x4)->Unit(benchmark::kMillisecond);

void BM_ParseNcclTestsLog(benchmark::State& state) {
  std::ifstream in(std::string(SCALESCOPE_SOURCE_DIR) + "/tests/data/nccl-tests/all_reduce_g4_h200.log");
  std::ostringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  for (auto _ : state) {
    auto runs = calib::parse_nccl_tests_log(text, "all_reduce_g4_h200.log");
    benchmark::DoNotOptimize(runs);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
}
BENCHMARK(BM_ParseNcclTestsLog)->Unit(benchmark::kMicrosecond);

}  // namespace
