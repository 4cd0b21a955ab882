// Fuzz target: native model files (models/catalog/*.json) -> model_from_json, then its counts.
#include "fuzz_common.hpp"
#include "scalescope/models/counts.hpp"
#include "scalescope/models/model_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(models::model_from_json(j, "fuzz-model.json"), [](const models::ModelSpec& m) {
      (void)dump_json(models::to_json(m));
      (void)models::flops_per_token(m, {}).total();
    });
  });
}
