// Fuzz target: collective-parameters files (`calibrate fit -o`) -> collective_params_from_json.
#include "fuzz_common.hpp"
#include "scalescope/sim/collective_params.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(collective_params_from_json(j, "fuzz-params.json"),
                [](const CollectiveParams& p) { (void)dump_json(to_json(p)); });
  });
}
