// Fuzz target: measured-run files (scalescope.measured/1, validation/*/measured) -> measured_run_from_json.
#include "fuzz_common.hpp"
#include "scalescope/planner/scaling.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(planner::measured_run_from_json(j, "fuzz-measured.json"), [](const planner::MeasuredRun& r) {
      auto curves = planner::group_curves({r, r});
      for (auto& c : curves) planner::finish_curve(c);
    });
  });
}
