// Results no one should trust are refused (issue 28: seq_len 999999999 printed MFU 137.9% with a step
// time pinned at 2^63 ns, exit 0): implausible_result() names the value that is out of range.
#include <gtest/gtest.h>

#include "scalescope/models/predict.hpp"

namespace scalescope::models {
namespace {

Prediction sane() {
  Prediction p;
  p.step_time_s = 1.5;
  p.mfu = 0.45;
  p.hfu = 0.5;
  p.memory.weights = Bytes(1e9);
  return p;
}

TEST(PredictSanity, ASaneResultPasses) { EXPECT_FALSE(implausible_result(sane()).has_value()); }

TEST(PredictSanity, MfuAbove100PercentIsRefused) {
  Prediction p = sane();
  p.mfu = 1.379;
  ASSERT_TRUE(implausible_result(p).has_value());
  EXPECT_NE(implausible_result(p)->find("MFU 137.9"), std::string::npos) << *implausible_result(p);
}

TEST(PredictSanity, Fp8PlansAreBoundedByTheFp8Peak) {
  // An FP8 plan's GEMMs run at up to the fp8 peak (H100 SXM datasheet: 1,979 of 989 TFLOP/s bf16 dense):
  // an MFU of 101% of the bf16 peak is possible there (NeMo's GPT-3 175B FP8 rows predict it from the
  // datasheet), 201% is not.
  Prediction p = sane();
  p.mfu_ceiling = 1979.0 / 989.0;
  p.mfu = p.hfu = 1.01;
  EXPECT_FALSE(implausible_result(p).has_value());
  p.mfu = p.hfu = 2.01;
  ASSERT_TRUE(implausible_result(p).has_value());
  EXPECT_NE(implausible_result(p)->find("of the bf16 peak (the fp8 peak)"), std::string::npos) << *implausible_result(p);
}

TEST(PredictSanity, PinnedOrNonFiniteStepTimeIsRefused) {
  Prediction p = sane();
  p.step_time_s = 9223372036.854775807;  // 2^63 ns: the engine's clock saturated
  EXPECT_TRUE(implausible_result(p).has_value());
  p.step_time_s = std::nan("");
  EXPECT_TRUE(implausible_result(p).has_value());
  p.step_time_s = 0;
  EXPECT_TRUE(implausible_result(p).has_value());
}

TEST(PredictSanity, NegativeMemoryIsRefused) {
  Prediction p = sane();
  p.memory.activations = Bytes(-1.0);
  ASSERT_TRUE(implausible_result(p).has_value());
  EXPECT_NE(implausible_result(p)->find("memory -1"), std::string::npos) << *implausible_result(p);
}


TEST(PredictSanity, TaskGraphBoundCountsThePipelinesSimulated) {
  // GPT-3 175B, tp 8, pp 8, dp 1,024 (65,536 GPUs), 96 micro-batches per pipeline, no host cost: 96 x 8 stages
  // x pipelines. Every rank: 8 x 1,024 pipelines = 6,291,456 units (over the 2,097,152 limit); under the rail
  // classes only TP rank 0 of each replica: 1,024 pipelines = 786,432 (bench_flow_scale's 64k run); symmetric: 768.
  auto model = load_model_by_name_or_path("gpt3-175b");
  auto plan = parse_plan("tp=8,pp=8,dp=1024,mbs=1,gbs=98304,schedule=1f1b,recompute=full");
  ASSERT_TRUE(model && plan);
  BuildOptions bo;
  bo.symmetric = false;
  EXPECT_EQ(task_graph_units(*model, *plan, bo), 6291456.0);
  bo.tp_classes = true;
  EXPECT_EQ(task_graph_units(*model, *plan, bo), 786432.0);
  bo.symmetric = true;
  EXPECT_EQ(task_graph_units(*model, *plan, bo), 768.0);
  bo = BuildOptions{};
  bo.symmetric = false;
  bo.per_layer_tasks = true;  // host cost: a task per layer (96 layers) instead of per stage
  EXPECT_EQ(task_graph_units(*model, *plan, bo), 96.0 * 96.0 * 8.0 * 1024.0);
}

}  // namespace
}  // namespace scalescope::models
