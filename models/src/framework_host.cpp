// Loader of the framework host-cost file (format in framework_host.hpp).
#include "scalescope/models/framework_host.hpp"

#include "scalescope/sim/json_reader.hpp"

namespace scalescope::models {

Expected<FrameworkHostCost> load_framework_host_cost(const std::string& path) {
  auto doc = read_json_file(path);
  if (!doc) return doc.error();
  return catch_errors([&]() -> FrameworkHostCost {
    JsonCursor root(*doc, path);
    root.expect_object();
    root.expect_keys({"schema", "framework", "gpu", "host", "method", "fitted_on", "per_layer_microbatch_s", "rows"});
    const std::string schema = root.get_string("schema");
    if (schema != "scalescope.host_dispatch/1") {
      root.at("schema").fail("expected \"scalescope.host_dispatch/1\", got \"" + schema + "\"");
    }
    FrameworkHostCost c;
    c.source = path;
    c.framework = root.get_string("framework", "");
    const JsonCursor per = root.at("per_layer_microbatch_s");
    per.expect_keys({"module", "tensor_parallel"});
    c.module = Seconds(per.get_positive("module"));
    c.tensor_parallel = Seconds(per.get_positive("tensor_parallel"));
    return c;
  });
}

}  // namespace scalescope::models
