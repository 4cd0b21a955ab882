// Tests for the eager-framework host cost: loading the measured file, its errors, and what it does
// to a prediction (the GPU waits for a host that issues layers slower than the GPU runs them).
#include "scalescope/models/framework_host.hpp"

#include <gtest/gtest.h>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope::models {
namespace {

const std::string kMeasured = "validation/profiles/h200-torch/host_dispatch.json";
const std::string kData = std::string(SCALESCOPE_TEST_DATA) + "/host/";

TEST(FrameworkHost, ReadsTheMeasuredH200File) {
  auto c = load_framework_host_cost(kMeasured);
  ASSERT_TRUE(c.has_value()) << c.error().str();
  // From the short-sequence profiles in validation/profiles/h200-torch/host-seq256/: single GPU,
  // llama-1b, mbs 1, gbs 16: wall 0.415476 s / (16 micro-batches x 16 layers) = 1.623 ms;
  // TP on 2 GPUs, same config: 1.677216 s / 256 = 6.552 ms.
  EXPECT_NEAR(c->module.value, 0.415476 / 256, 1e-6);
  EXPECT_NEAR(c->tensor_parallel.value, 1.677216 / 256, 1e-6);
  Plan p;
  p.tp = 2;
  EXPECT_EQ(c->for_plan(p, 2).value, c->tensor_parallel.value);
  p.tp = 1;
  EXPECT_EQ(c->for_plan(p, 2).value, c->module.value);
}

TEST(FrameworkHost, ErrorsNameTheFileAndTheField) {
  auto missing = load_framework_host_cost(kData + "nope.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().str().find("nope.json"), std::string::npos);
  auto schema = load_framework_host_cost(kData + "bad_schema.json");
  ASSERT_FALSE(schema.has_value());
  EXPECT_NE(schema.error().str().find("scalescope.host_dispatch/1"), std::string::npos);
  auto zero = load_framework_host_cost(kData + "zero.json");
  ASSERT_FALSE(zero.has_value());
  EXPECT_NE(zero.error().str().find("module"), std::string::npos) << zero.error().str();
}

TEST(FrameworkHost, TensorParallelCostPicksTheNearestMeasuredProcessCount) {
  FrameworkHostCost c{"test", "test", Seconds(1e-3), Seconds(8e-3), {{2, Seconds(8e-3)}, {4, Seconds(10e-3)}}};
  Plan p;
  p.tp = 1;
  EXPECT_EQ(c.for_plan(p, 4).value, 1e-3);  // no TP: the module cost, whatever the count
  p.tp = 2;
  EXPECT_EQ(c.for_plan(p, 2).value, 8e-3);
  EXPECT_EQ(c.for_plan(p, 4).value, 10e-3);  // TP=2 x DP=2: four processes
  EXPECT_EQ(c.for_plan(p, 8).value, 10e-3);  // nearest measured: 4
  EXPECT_EQ(c.for_plan(p, 3).value, 10e-3);  // 2 and 4 equally near: the larger
  c.tensor_parallel_by_processes.clear();    // no counts: the one TP value
  EXPECT_EQ(c.for_plan(p, 3).value, 8e-3);
}

TEST(FrameworkHost, LocalExpertsAddTheirHostTimeToTheMoeShareOfEveryLayer) {
  // 10 ms per layer plus 1 ms per local expert in MoE layers: 16 local experts (128 experts, ep 8) in 3 of 4 MoE
  // layers average 10 + 1 x 16 x 0.75 = 22 ms per layer; the TP value gets the same addition.
  FrameworkHostCost c{"test", "test", Seconds(10e-3), Seconds(12e-3), {}};
  c.per_local_expert = Seconds(1e-3);
  Plan p;
  EXPECT_NEAR(c.for_plan(p, 8, 16, 0.75).value, 22e-3, 1e-12);
  EXPECT_NEAR(c.for_plan(p, 8).value, 10e-3, 1e-12);  // a dense model: no experts
  p.tp = 2;
  EXPECT_NEAR(c.for_plan(p, 8, 16, 0.75).value, 24e-3, 1e-12);
  // From a file: the key is read, and a value above 0.1 s per expert is refused naming the key.
  Json doc = Json::parse(R"({"schema": "scalescope.host_dispatch/1", "framework": "x",
      "per_layer_microbatch_s": {"module": 0.01, "tensor_parallel": 0.01}, "per_local_expert_s": 0.0011})");
  auto ok = framework_host_cost_from_json(doc, "moe-te.json");
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  EXPECT_DOUBLE_EQ(ok->per_local_expert.value, 0.0011);
  doc["per_local_expert_s"] = 0.5;
  auto bad = framework_host_cost_from_json(doc, "moe-te.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("per_local_expert_s"), std::string::npos) << bad.error().str();
  EXPECT_NE(bad.error().str().find("moe-te.json"), std::string::npos) << bad.error().str();
}

TEST(FrameworkHost, ReadsTheSession7LeaseFileWithItsProcessCounts) {
  // validation/h200x4-tp-lease7/host-seq256: profile_step.py --timing-only --seq 256, llama-1b
  // mbs 1 gbs 16 (16 micro-batches x 16 layers = 256): single GPU 0.556184 s, TP=2 2.114483 s,
  // TP=4 2.503792 s (rank 0; the file takes rank 0's wall).
  auto c = load_framework_host_cost("validation/h200x4-tp-lease7/host_dispatch.json");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_NEAR(c->module.value, 0.556184 / 256, 1e-6);
  EXPECT_NEAR(c->tensor_parallel.value, 2.114483 / 256, 1e-6);
  ASSERT_EQ(c->tensor_parallel_by_processes.size(), 2u);
  EXPECT_NEAR(c->tensor_parallel_by_processes.at(4).value, 2.503792 / 256, 1e-6);
  auto bad = load_framework_host_cost(kData + "bad_processes.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("tensor_parallel_by_processes"), std::string::npos) << bad.error().str();
  EXPECT_NE(bad.error().str().find("\"two\""), std::string::npos) << bad.error().str();
}

TEST(FrameworkHost, ReadsTheOptionalKeysAStackProfileHostHas) {
  // tests/data/host/extras.json: the values written there.
  auto c = load_framework_host_cost(kData + "extras.json");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_DOUBLE_EQ(c->module.value, 0.0115);
  EXPECT_DOUBLE_EQ(c->edge_per_microbatch.value, 0.003);
  EXPECT_DOUBLE_EQ(c->per_step.value, 0.002);
  EXPECT_DOUBLE_EQ(c->forward_fraction, 0.6);
  EXPECT_DOUBLE_EQ(c->after_sync_fraction, 0.25);
  ASSERT_EQ(c->process_samples.size(), 3u);
  // E[max of 2 draws] over {0.9, 1.0, 1.3}: 0.9 (1/9) + 1.0 (4/9 - 1/9) + 1.3 (1 - 4/9) = (0.9 + 3 + 6.5) / 9
  EXPECT_NEAR(c->slowest_of(2), 10.4 / 9, 1e-12);
  // Without them: no edge or step cost, shares not measured.
  auto plain = load_framework_host_cost(kMeasured);
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(plain->edge_per_microbatch.value, 0.0);
  EXPECT_LT(plain->forward_fraction, 0.0);
  auto bad = load_framework_host_cost(kData + "bad_share.json");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("forward_share"), std::string::npos) << bad.error().str();
  EXPECT_NE(bad.error().str().find("[0, 1]"), std::string::npos) << bad.error().str();
}

struct Inputs {
  ModelSpec model;
  Plan plan;
  Cluster cluster;
};

Inputs tp_setup(const char* plan_text) {
  auto model = load_model_by_name_or_path("validation/models/llama-1b.json");
  auto plan = parse_plan(plan_text);
  auto cluster = load_cluster_by_name_or_path("hgx-h200-4", ClusterOptions{1, {}});
  EXPECT_TRUE(model && plan && cluster);
  return Inputs{*model, *plan, *cluster};
}

/// The prediction of `s` on its GPU's datasheet (compute and collectives).
Expected<Prediction> predict_on_datasheet(const Inputs& s, const PredictOptions& o) {
  auto compute = ComputeModel::datasheet(s.cluster.gpu_spec());
  if (!compute) return compute.error();
  const CollectiveModel coll(s.cluster, datasheet_collective_params());
  return predict(s.model, s.plan, s.cluster, coll, *compute, o);
}

TEST(FrameworkHost, SlowHostBoundsTheStepFromBelow) {
  const Inputs s = tp_setup("tp=4,pp=1,dp=1,mbs=1,gbs=16");
  PredictOptions o;
  o.build.per_layer_tasks = true;  // as with a host cost, so that the GPU work is the same
  auto plain = predict_on_datasheet(s, o);
  ASSERT_TRUE(plain.has_value()) << plain.error().str();
  o.host = FrameworkHostCost{"test", "test", Seconds(1e-3), Seconds(20e-3), {}};
  auto hosted = predict_on_datasheet(s, o);
  ASSERT_TRUE(hosted.has_value()) << hosted.error().str();
  // 16 micro-batches x 16 layers x 20 ms = 5.12 s of host time per rank: the step cannot be
  // shorter, and the GPU (datasheet llama-1b TP=4: well under a second) mostly waits: its busy
  // time is at most the plain step, so the wait is at least 5.12 s minus that.
  EXPECT_GE(hosted->step_time_s, 5.12);
  EXPECT_LT(plain->step_time_s, 2.0);
  EXPECT_GT(hosted->sim.breakdown[BreakdownPart::host_wait].value, 5.12 - plain->step_time_s);
  EXPECT_EQ(plain->sim.breakdown[BreakdownPart::host_wait].value, 0.0);
}

// The expected slowest of N processes, by hand from E[max] = sum_i x_(i) ((i/K)^N - ((i-1)/K)^N):
// samples {1.2, 0.9, 1.0} sorted 0.9, 1.0, 1.2; N = 2: (0.9 * 1 + 1.0 * 3 + 1.2 * 5) / 9 = 1.1;
// N = 3: (0.9 * 1 + 1.0 * 7 + 1.2 * 19) / 27 = 30.7 / 27.
TEST(FrameworkHost, SlowestOfNRanksIsTheExpectedMaximumOfTheSampledProcesses) {
  FrameworkHostCost c{"test", "test", Seconds(1e-3), Seconds(1e-3), {}};
  EXPECT_EQ(c.slowest_of(8), 1.0);  // no samples: the costs as given
  c.process_samples = {1.2, 0.9, 1.0};
  EXPECT_EQ(c.slowest_of(1), 1.0);  // one rank: the typical process the costs came from
  EXPECT_NEAR(c.slowest_of(2), 1.1, 1e-12);
  EXPECT_NEAR(c.slowest_of(3), 30.7 / 27.0, 1e-12);
  EXPECT_NEAR(c.slowest_of(100000), 1.2, 1e-12);  // never beyond the slowest process measured
  c.process_samples = {0.5, 1.0, 1.01};  // a low outlier: E[max of 2] = (0.5 + 3 + 5.05) / 9 = 0.95 < 1
  EXPECT_EQ(c.slowest_of(2), 1.0);       // never faster than the median process the costs came from
}

// A host-bound plan of 4 ranks with sampled processes waits for the slowest: its host costs grow by slowest_of(4).
TEST(FrameworkHost, HostBoundStepOfSeveralRanksWaitsForTheSlowestProcess) {
  const Inputs s = tp_setup("tp=1,pp=1,dp=4,mbs=1,gbs=16");
  PredictOptions o;
  o.host = FrameworkHostCost{"test", "test", Seconds(20e-3), Seconds(20e-3), {}};
  auto typical = predict_on_datasheet(s, o);
  ASSERT_TRUE(typical.has_value()) << typical.error().str();
  o.host->process_samples = {0.8, 1.0, 1.0, 1.5};
  auto sampled = predict_on_datasheet(s, o);
  ASSERT_TRUE(sampled.has_value()) << sampled.error().str();
  // 4 micro-batches x 16 layers x 20 ms = 1.28 s of host per rank, far above the GPU's work: the step is the
  // host's and scales with it. E[max of 4] = (0.8 * 1 + 1.0 * 15 + 1.0 * 65 + 1.5 * 175) / 256.
  const double factor = (0.8 * 1 + 1.0 * 15 + 1.0 * 65 + 1.5 * 175) / 256.0;
  EXPECT_GE(typical->step_time_s, 1.28);
  EXPECT_NEAR(sampled->step_time_s / typical->step_time_s, factor, 0.01 * factor);
  bool named = false;
  for (const auto& in : sampled->compute_inputs) named = named || in.name == "host_slowest_of_ranks";
  EXPECT_TRUE(named);
}

}  // namespace
}  // namespace scalescope::models
