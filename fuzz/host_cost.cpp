// Fuzz target: host dispatch cost files (scalescope.host_dispatch/1) -> framework_host_cost_from_json.
#include "fuzz_common.hpp"
#include "scalescope/models/framework_host.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(models::framework_host_cost_from_json(j, "fuzz-host.json"), [](const models::FrameworkHostCost& c) {
      models::Plan p;
      p.tp = 2;
      (void)c.for_plan(p, 8);
    });
  });
}
