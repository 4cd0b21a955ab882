// GPUs for model tests: a name, a datasheet bf16 dense peak and HBM bandwidth (all the compute model
// needs from a GpuSpec). The numbers are the vendors' datasheets, named at each use.
#pragma once

#include <string>

#include "scalescope/sim/cluster.hpp"

namespace scalescope::models::testing {

inline GpuSpec gpu_spec(std::string model, double hbm_GBps, double bf16_TFLOPS) {
  GpuSpec g;
  g.model = std::move(model);
  g.hbm_bandwidth = GBps(hbm_GBps);
  g.peak.bf16 = TFLOPS(bf16_TFLOPS);
  return g;
}

/// H200 SXM: 989.4 TFLOP/s bf16 dense, 4.8 TB/s HBM3e.
inline GpuSpec h200_spec(std::string model = "H200 test") { return gpu_spec(std::move(model), 4800, 989.4); }
/// H100 SXM: 989.4 TFLOP/s bf16 dense, 3.35 TB/s HBM3.
inline GpuSpec h100_spec(std::string model = "H100 test") { return gpu_spec(std::move(model), 3350, 989.4); }
/// A100 SXM: 312 TFLOP/s bf16 dense, 2.039 TB/s HBM2e.
inline GpuSpec a100_spec(std::string model = "A100 test") { return gpu_spec(std::move(model), 2039, 312); }

}  // namespace scalescope::models::testing
