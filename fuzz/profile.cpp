// Fuzz target: calibration profiles -> profile_from_json (collectives, P2P, GEMM, ...) and
// compute_profile_from_json (the GEMM / attention / memory part the compute model reads).
#include "fuzz_common.hpp"
#include "scalescope/calibrate/profile.hpp"
#include "scalescope/models/compute_profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(calib::profile_from_json(j, "fuzz-profile.json"),
                [](const calib::Profile& p) { (void)dump_json(calib::to_json(p)); });
    fuzz::check(models::compute_profile_from_json(j, "fuzz-profile.json"), [](const models::ComputeProfile&) {});
  });
}
