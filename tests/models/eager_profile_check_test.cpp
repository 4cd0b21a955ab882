// Checks (not fits) the eager-PyTorch compute model against torch.profiler kernel time per step of the
// harness on one H200 (validation/profiles/h200-torch/profile-n1.json, -n2.json): GEMM, flash attention
// and memory-bound (elementwise + copy) time predicted from calibrate/profiles/h200x4.json.
// Run from the repository root (ctest does). Prints one "PROFILE_CHECK {json}" line per configuration,
// which validation/make_report.py copies into validation/REPORT.md.
#include <gtest/gtest.h>

#include "scalescope/models/stack_profile.hpp"

#include <cstdio>

#include "scalescope/models/compute_profile.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/model_spec.hpp"
#include "scalescope/models/plan.hpp"
#include "gpu_fixtures.hpp"

namespace scalescope::models {
namespace {

struct StepKinds {
  double gemm = 0, attention = 0, memory = 0;
};

PhaseCost operator+(PhaseCost a, const PhaseCost& b) { return a += b; }

/// Per-step kernel time of one rank by kind: micro-batches x (layers x layer + embedding + head); the
/// optimizer is left out (the profile has its own category).
StepKinds predict_kinds(const ModelSpec& s, const Plan& p, const ComputeModel& m) {
  const LayerCost l = layer_cost(s, p, m);
  const EdgeCost e = edge_cost(s, p, m);
  PhaseCost mb = (l.forward + l.backward) * static_cast<double>(s.layers / p.pp);
  mb += e.embedding_forward;
  mb += e.embedding_backward;
  mb += e.head_forward;
  mb += e.head_backward;
  const double n = static_cast<double>(p.gbs) / (p.mbs * p.dp);
  return {mb.by_kind[0].value * n, mb.by_kind[1].value * n, mb.by_kind[2].value * n};
}

ComputeModel h200_eager() {
  const GpuSpec g = testing::h200_spec("H200");  // only the peak clamp is used
  auto prof = load_compute_profile("calibrate/profiles/h200x4.json");
  EXPECT_TRUE(prof.has_value()) << prof.error().str();
  auto m = ComputeModel::with_profile(g, std::move(prof).value());
  EXPECT_TRUE(m.has_value());
  m->set_stack(load_stack("pytorch-eager").value());
  return std::move(m).value();
}

TEST(EagerProfileCheck, PredictedKernelTimePerStepIsNearTheTorchProfilerMeasurement) {
  const ComputeModel m = h200_eager();
  ASSERT_GT(m.attention_rows(), 0u) << "calibrate/profiles/h200x4.json has no attention section";
  int checked = 0;
  for (const char* file : {"validation/profiles/h200-torch/profile-n1.json", "validation/profiles/h200-torch/profile-n2.json"}) {
    auto doc = read_json_file(file);
    ASSERT_TRUE(doc.has_value()) << doc.error().str();
    for (const Json& group : (*doc)["results"]) {
      for (const Json& r : group) {
        const std::string config = r["config"].get<std::string>();
        if (r["rank"].get<int>() != 0 || config.starts_with("tp:") || config.starts_with("pp")) continue;
        const std::string model_name = config.substr(config.find(':') + 1, config.find(':', config.find(':') + 1) - config.find(':') - 1);
        auto spec = load_model_by_name_or_path("validation/models/" + model_name + ".json");
        ASSERT_TRUE(spec.has_value()) << spec.error().str();
        auto plan = parse_plan(r["plan"].get<std::string>());
        ASSERT_TRUE(plan.has_value()) << plan.error().str();
        const StepKinds pred = predict_kinds(*spec, *plan, m);
        const Json& k = r["kernel_s_per_step"];
        const double gemm = k["gemm"].get<double>(), att = k["attention"].get<double>();
        const double mem = k["elementwise"].get<double>() + k["copy"].get<double>();
        const Json line = {{"config", config}, {"gemm_measured_s", gemm}, {"gemm_predicted_s", pred.gemm},
                           {"attention_measured_s", att}, {"attention_predicted_s", pred.attention},
                           {"memory_measured_s", mem}, {"memory_predicted_s", pred.memory}};
        std::printf("PROFILE_CHECK %s\n", line.dump().c_str());
        // Bounds of the check (the model was not fitted to these numbers): GEMMs come from the cuBLASLt
        // sweep and attention from the SDPA sweep, so within 15%. The memory-bound time is the hand-counted
        // byte table at the best measured elementwise bandwidth (fp32 a + b over 3.2 GB), a floor: real
        // eager kernels cannot beat it, so the prediction must not exceed the measurement; and if the table
        // missed whole kernels it would explain far less than the measured time, so at least 45% of it.
        EXPECT_NEAR(pred.gemm / gemm, 1.0, 0.15) << config;
        EXPECT_NEAR(pred.attention / att, 1.0, 0.15) << config;
        EXPECT_LE(pred.memory, mem) << config;
        EXPECT_GE(pred.memory / mem, 0.45) << config;
        ++checked;
      }
    }
  }
  // 4 single-GPU configurations (llama-1b mbs 1, 2, 4; llama-3b) and ddp, zero3 on 2 GPUs.
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace scalescope::models
