// Fuzz target: plan text ("tp=2,pp=1,dp=4,mbs=1,gbs=32") -> parse_plan, then validate() against a model.
#include "fuzz_common.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  static const models::ModelSpec llama = models::load_model_by_name_or_path("llama3-8b").value();
  fuzz::check(models::parse_plan(fuzz::text_of(data, size)), [](const models::Plan& p) {
    if (models::parse_plan(models::to_string(p)).value() != p) __builtin_trap();  // the text form round-trips
    auto v = models::validate(p, llama, 1 << 20);
    if (!v) fuzz::check_error(v.error());
  });
  return 0;
}
