// Import of PyTorch profiler traces (torch_trace.hpp): a real one-GPU trace of validation/programs' gpt-ln on an
// H100 (validation/session9/h100/traces/), and malformed traces.
#include "scalescope/calibrate/torch_trace.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "scalescope/models/stack_profile.hpp"

namespace scalescope::calib {
namespace {

const std::string kTrace = SCALESCOPE_SOURCE_DIR "/validation/session9/h100/traces/gpt-ln-mbs4-seq768.json.gz";

models::ModelSpec gpt_ln() {
  return models::load_model(SCALESCOPE_SOURCE_DIR "/validation/programs/gpt-ln-0.5b.json").value();
}

TraceImportOptions options() {
  TraceImportOptions o;
  o.micro_batch = 4;
  o.seq = 768;
  return o;
}

// Expected counts from an independent reading of the same file (Python, json + gzip): 741 GPU activities are
// launched inside ProfilerStep#2, 26.222 ms of GPU time, 208 of them (8.553 ms) inside Optimizer.step#AdamW.step.
// gpt_ln.py's forward layer is LayerNorm, qkv addmm (+ its workspace memset), attention (+ memset), proj addmm,
// residual add, LayerNorm, fc addmm (+ memset), GELU, fc2 addmm, residual add: 13 kernels.
TEST(TorchTrace, ImportsTheStepLayersAndPhasesOfARealTrace) {
  auto r = import_torch_trace(kTrace, gpt_ln(), options());
  ASSERT_TRUE(r.has_value()) << r.error().str();
  const auto& s = r->summary;
  EXPECT_EQ(s.kernels, 741u);
  EXPECT_NEAR(s.gpu_busy_s, 26.2217e-3, 1e-6);
  EXPECT_NEAR(s.optimizer_gpu_s, 8.5528e-3, 1e-6);
  EXPECT_EQ(s.layer_period, 13);
  EXPECT_EQ(s.gpu, "NVIDIA H100 80GB HBM3");
  EXPECT_LT(s.fixed_gpu_s, 1e-5);  // nearly everything scales with a size expression
  // The four GEMMs of the layer, forward: qkv (Q + 2K out, H in), proj (H out, Q in), fc (F out), fc2 (F in).
  std::vector<std::string> gemms;
  for (const auto& row : r->stack["phases"]["layer_forward"])
    if (row["kind"] == "gemm") gemms.push_back(row["m"].get<std::string>() + "/" + row["k"].get<std::string>());
  EXPECT_EQ(gemms, (std::vector<std::string>{"Q+2*K/H", "H/Q", "F/H", "H/F"}));
  // The document loads as a stack profile, and the pure-bf16 program was recognised (bf16 embedding table).
  auto stack = models::stack_from_json(r->stack, "imported");
  ASSERT_TRUE(stack.has_value()) << stack.error().str();
  EXPECT_EQ(r->stack["trace"]["symbols"]["bf16"], 1.0);
  EXPECT_EQ(r->stack["properties"]["residual_bytes"], 2.0);
}

// The host dilation D solves S = (step - optimizer)/D + max(optimizer/D, optimizer GPU time): with S = 20 ms and
// 8.55 ms of optimizer GPU time, D = (profiled step - profiled optimizer) / (20 - 8.55) ms.
TEST(TorchTrace, HostStepTimeSetsTheProfilerDilation) {
  TraceImportOptions o = options();
  o.host_step_time_s = 0.020;
  o.host_seq = 32;
  auto r = import_torch_trace(kTrace, gpt_ln(), o);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  const double step = r->summary.step_cpu_s;
  const double opt = r->stack["host"]["per_step_s"].get<double>() * r->summary.host_dilation;  // profiled
  EXPECT_NEAR(r->summary.host_dilation, (step - opt) / (0.020 - r->summary.optimizer_gpu_s), 1e-6);
  EXPECT_GT(r->summary.host_dilation, 1.0);
}

std::string write(const std::string& name, const std::string& text) {
  const auto p = std::filesystem::temp_directory_path() / name;
  std::ofstream(p) << text;
  return p.string();
}

TEST(TorchTrace, BadTracesAreInputErrorsNamingTheFile) {
  auto missing = import_torch_trace("/nonexistent/trace.json", gpt_ln(), options());
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().str().find("/nonexistent/trace.json"), std::string::npos);

  auto bad = import_torch_trace(write("ss_bad_trace.json", "{\"traceEvents\": [ {\"ph\": "), gpt_ln(), options());
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("malformed JSON"), std::string::npos);

  auto cpu_only = import_torch_trace(
      write("ss_cpu_trace.json", R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "tid": 1,
          "ts": 1, "dur": 2}]})"),
      gpt_ln(), options());
  ASSERT_FALSE(cpu_only.has_value());
  EXPECT_NE(cpu_only.error().str().find("no GPU kernels"), std::string::npos);

  auto two_steps = import_torch_trace(
      write("ss_two_steps.json", R"({"traceEvents": [
          {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#AdamW.step", "tid": 1, "ts": 1, "dur": 2},
          {"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#AdamW.step", "tid": 1, "ts": 5, "dur": 2}]})"),
      gpt_ln(), options());
  ASSERT_FALSE(two_steps.has_value());
  EXPECT_NE(two_steps.error().str().find("no ProfilerStep# marker"), std::string::npos);

  models::ModelSpec wrong = gpt_ln();
  wrong.layers = 7;  // the trace ran 12
  auto layers = import_torch_trace(kTrace, wrong, options());
  ASSERT_FALSE(layers.has_value());
  EXPECT_NE(layers.error().str().find("more than 7 times"), std::string::npos);
}

}  // namespace
}  // namespace scalescope::calib
