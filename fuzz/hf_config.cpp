// Fuzz target: Hugging Face config.json -> import_hf_config_json.
#include "fuzz_common.hpp"
#include "scalescope/models/hf_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(models::import_hf_config_json(j, "fuzz/config.json"),
                [](const models::ModelSpec& m) { (void)dump_json(models::to_json(m)); });
  });
}
