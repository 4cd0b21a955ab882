// Fuzz target: cluster files (topologies/*.json) -> cluster_from_json, with the sizes simulate and plan request.
#include "fuzz_common.hpp"
#include "scalescope/sim/cluster.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace scalescope;
  return fuzz::on_json(data, size, [&](const Json& j) {
    // Sizes as simulate/plan ask for them (--nodes, --gpus); small, so one input builds in milliseconds
    // (a file's own "nodes" may ask for 65,536 GPUs, which takes seconds: tested by tests/sim instead).
    ClusterOptions one_node;
    one_node.nodes = 1;
    fuzz::check(cluster_from_json(j, "fuzz-cluster.json", one_node), [](const Cluster& c) { (void)c.num_gpus(); });
    ClusterOptions gpus;
    gpus.gpus = 64;
    fuzz::check(cluster_from_json(j, "fuzz-cluster.json", gpus), [](const Cluster& c) { (void)c.num_gpus(); });
  });
}
