// Fuzz target: plan JSON files -> plan_from_json, then validate() against a model.
#include "fuzz_common.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  static const models::ModelSpec llama = models::load_model_by_name_or_path("llama3-8b").value();
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(models::plan_from_json(j, "fuzz-plan.json"), [](const models::Plan& p) {
      (void)dump_json(models::to_json(p));
      auto v = models::validate(p, llama, 0);
      if (!v) fuzz::check_error(v.error());
    });
  });
}
