// Fuzz target: cluster files (topologies/*.json) -> cluster_from_json, with and without a size request.
#include "fuzz_common.hpp"
#include "scalescope/sim/cluster.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  return fuzz::on_json(data, size, [&](const Json& j) {
    fuzz::check(cluster_from_json(j, "fuzz-cluster.json"), [](const Cluster& c) { (void)c.num_gpus(); });
    ClusterOptions o;
    o.gpus = 64;  // the way simulate/plan ask for a size
    fuzz::check(cluster_from_json(j, "fuzz-cluster.json", o), [](const Cluster& c) { (void)c.num_gpus(); });
  });
}
