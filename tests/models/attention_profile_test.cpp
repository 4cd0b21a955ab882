// Tests for measured flash attention: the profile `attention` section (reading, import from a
// measure_attention.py file) and the compute model's log-space interpolation of fwd / bwd rates.
#include <gtest/gtest.h>

#include <cmath>

#include <algorithm>
#include <string>

#include "scalescope/models/compute_profile.hpp"
#include "scalescope/models/layer_kernels.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "datasheet_rig.hpp"
#include "gpu_fixtures.hpp"
#include "model_fixtures.hpp"

namespace scalescope::models {
namespace {

GpuSpec h200() { return testing::h200_spec(); }

// F_fwd of (b, H, s, d) causal = 4 b H s^2 d / 2.
double fwd_flops(double b, double heads, double s, double d) { return 4.0 * b * heads * s * s * d / 2.0; }

AttentionShape shape(std::int64_t b, std::int64_t heads, std::int64_t kv, std::int64_t d, std::int64_t s) {
  AttentionShape a;
  a.batch = b;
  a.heads = heads;
  a.kv_heads = kv;
  a.head_dim = d;
  a.seq = s;
  return a;
}

// Two rows that differ only in seq (2048, 8192): forward at 100 and 400 TFLOP/s, backward at 50 and 200.
ComputeProfile two_row_profile() {
  ComputeProfile p;
  p.source = "test.json";
  for (auto [s, fwd_rate, bwd_rate] : {std::tuple{2048.0, 100e12, 50e12}, std::tuple{8192.0, 400e12, 200e12}}) {
    AttentionSample a;
    a.shape = shape(1, 32, 8, 64, static_cast<std::int64_t>(s));
    a.forward = Seconds(fwd_flops(1, 32, s, 64) / fwd_rate);
    a.backward = Seconds(2.5 * fwd_flops(1, 32, s, 64) / bwd_rate);
    p.attention.push_back(a);
  }
  p.attention_source = "test rows";
  return p;
}

TEST(AttentionProfile, ForwardFlopsOfACausalShapeAreHalfOfFourBHs2d) {
  // 4 * 2 * 16 * 4096^2 * 128 / 2 = 2.199e12 FLOPs.
  EXPECT_DOUBLE_EQ(shape(2, 16, 4, 128, 4096).forward_flops(), 4.0 * 2 * 16 * 4096.0 * 4096 * 128 / 2);
}

TEST(AttentionProfile, ExactlyMeasuredShapeReturnsTheMeasuredTimes) {
  auto m = ComputeModel::with_profile(h200(), two_row_profile());
  ASSERT_TRUE(m.has_value()) << m.error().str();
  const AttentionShape a = shape(1, 32, 8, 64, 2048);
  const double f = fwd_flops(1, 32, 2048, 64);
  // Row 1: forward f / 100e12, backward 2.5 f / 50e12.
  const KernelCost fw = m->attention(a, false, Flops(f), Bytes(0));
  EXPECT_NEAR(fw.time.value, f / 100e12, 1e-15);
  EXPECT_EQ(fw.provenance, Provenance::measured);
  EXPECT_NEAR(m->attention(a, true, Flops(2.5 * f), Bytes(0)).time.value, 2.5 * f / 50e12, 1e-15);
}

TEST(AttentionProfile, ShapeBetweenTwoRowsUsesTheLogMeanOfTheirRates) {
  // s = 4096 is 1 away from both rows in log2 seq (the other coordinates equal): equal weights, so the
  // rate is exp(mean(log)) = sqrt(100 * 400) = 200 TFLOP/s forward and sqrt(50 * 200) = 100 backward.
  auto m = ComputeModel::with_profile(h200(), two_row_profile());
  ASSERT_TRUE(m.has_value());
  const AttentionShape a = shape(1, 32, 8, 64, 4096);
  const double f = fwd_flops(1, 32, 4096, 64);
  const KernelCost fw = m->attention(a, false, Flops(f), Bytes(0));
  EXPECT_NEAR(fw.time.value, f / 200e12, 1e-12 * f / 200e12 + 1e-15);
  EXPECT_EQ(fw.provenance, Provenance::fitted);
  EXPECT_NEAR(m->attention(a, true, Flops(2.5 * f), Bytes(0)).time.value, 2.5 * f / 100e12, 1e-12);
}

TEST(AttentionProfile, HalfTheHeadsWithTwiceTheBatchIsTheSamePoint) {
  // The coordinate is log2(b H): (b 2, H 16) = (b 1, H 32) = 32; kv heads differ, so it is not an exact
  // hit: the single nearest point (distance 0) carries the weight: 100 TFLOP/s forward.
  auto m = ComputeModel::with_profile(h200(), two_row_profile());
  ASSERT_TRUE(m.has_value());
  const double f = fwd_flops(2, 16, 2048, 64);
  const KernelCost fw = m->attention(shape(2, 16, 4, 64, 2048), false, Flops(f), Bytes(0));
  EXPECT_NEAR(fw.time.value, f / 100e12, 1e-9 * f / 100e12);
  EXPECT_EQ(fw.provenance, Provenance::fitted);
}

TEST(AttentionProfile, WithoutRowsTheAssumedEfficiencyIsUsed) {
  // No rows: F / (989.4e12 * 0.5 assumed).
  ComputeProfile p;
  p.source = "empty.json";
  auto m = ComputeModel::with_profile(h200(), p);
  ASSERT_TRUE(m.has_value());
  const KernelCost c = m->attention(shape(1, 32, 8, 64, 4096), false, Flops(1e12), Bytes(0));
  EXPECT_NEAR(c.time.value, 1e12 / (989.4e12 * 0.5), 1e-15);
  EXPECT_EQ(c.provenance, Provenance::assumed);
}

// two_row_profile() (flash, the default) plus the same two shapes timed with cuDNN at twice the flash rates.
ComputeProfile flash_and_cudnn_profile() {
  ComputeProfile p = two_row_profile();
  const std::size_t flash_rows = p.attention.size();
  for (std::size_t i = 0; i < flash_rows; ++i) {
    AttentionSample a = p.attention[i];
    a.shape.backend = AttentionBackend::cudnn;
    a.forward = Seconds(a.forward.value / 2.0);
    a.backward = Seconds(a.backward.value / 2.0);
    p.attention.push_back(a);
  }
  return p;
}

TEST(AttentionProfile, AShapeIsPricedFromTheRowsOfItsOwnKernel) {
  auto m = ComputeModel::with_profile(h200(), flash_and_cudnn_profile());
  ASSERT_TRUE(m.has_value()) << m.error().str();
  const double f = fwd_flops(1, 32, 4096, 64);
  AttentionShape flash = shape(1, 32, 8, 64, 4096), cudnn = flash;
  cudnn.backend = AttentionBackend::cudnn;
  // Between the two rows (equal weights): flash sqrt(100 * 400) = 200 TFLOP/s forward, cuDNN sqrt(200 * 800) = 400;
  // backward 100 and 200. Each from its own rows only (mixing them would give 283 for both).
  EXPECT_NEAR(m->attention(flash, false, Flops(f), Bytes(0)).time.value, f / 200e12, 1e-9 * f / 200e12);
  EXPECT_NEAR(m->attention(cudnn, false, Flops(f), Bytes(0)).time.value, f / 400e12, 1e-9 * f / 400e12);
  EXPECT_NEAR(m->attention(flash, true, Flops(2.5 * f), Bytes(0)).time.value, 2.5 * f / 100e12, 1e-9 * 2.5 * f / 100e12);
  EXPECT_NEAR(m->attention(cudnn, true, Flops(2.5 * f), Bytes(0)).time.value, 2.5 * f / 200e12, 1e-9 * 2.5 * f / 200e12);
  // An exact hit is one of the shape's own kernel: the cuDNN row at 2048 (200 TFLOP/s forward), not the flash one.
  AttentionShape hit = shape(1, 32, 8, 64, 2048);
  hit.backend = AttentionBackend::cudnn;
  const double f2 = fwd_flops(1, 32, 2048, 64);
  const KernelCost c = m->attention(hit, false, Flops(f2), Bytes(0));
  EXPECT_NEAR(c.time.value, f2 / 200e12, 1e-9 * f2 / 200e12);
  EXPECT_EQ(c.provenance, Provenance::measured);
}

// --attention cudnn (CostOptions::attention_backend): the stack rows that name no backend, the built-in stacks'
// attention, are priced from the profile's cuDNN rows; here those run at twice the flash rows' rates at every shape,
// so each attention row's GPU time halves. A row that names its backend (as an imported trace's cuDNN rows do) keeps
// it whatever the option says.
TEST(AttentionProfile, RowsThatNameNoBackendRunTheOneTheOptionsPick) {
  auto m = ComputeModel::with_profile(h200(), flash_and_cudnn_profile());
  ASSERT_TRUE(m.has_value()) << m.error().str();
  const ModelSpec spec = testing::catalog("llama3-8b");
  const Plan p = testing::plan("dp=1,mbs=1,gbs=1,precision=bf16");
  const auto attention_times = [&](const ComputeModel& cm, AttentionBackend b) {
    CostOptions o;
    o.attention_backend = b;
    std::vector<double> out;
    for (const KernelLine& k : layer_kernel_lines(spec, p, cm, o, LayerKind::transformer))
      if (k.kind == RowKind::attention) out.push_back(k.device.value);
    return out;
  };
  auto eager = load_stack("pytorch-eager");
  ASSERT_TRUE(eager.has_value()) << eager.error().str();
  m->set_stack(*eager);
  const std::vector<double> flash = attention_times(*m, AttentionBackend::flash);
  const std::vector<double> cudnn = attention_times(*m, AttentionBackend::cudnn);
  ASSERT_EQ(flash.size(), 2u);  // forward and backward
  ASSERT_EQ(cudnn.size(), 2u);
  for (std::size_t i = 0; i < flash.size(); ++i) EXPECT_NEAR(cudnn[i], flash[i] / 2.0, 1e-9 * flash[i]);

  Json doc = builtin_stack_document("pytorch-eager").value();
  for (auto& [phase, rows] : doc["phases"].items()) {
    for (Json& r : rows) {
      if (r.value("kind", "") == "attention") r["backend"] = "flash";
    }
  }
  auto named = stack_from_json(doc, "named.json");
  ASSERT_TRUE(named.has_value()) << named.error().str();
  m->set_stack(std::make_shared<const StackProfile>(*named));
  const std::vector<double> kept = attention_times(*m, AttentionBackend::cudnn);
  ASSERT_EQ(kept.size(), 2u);
  for (std::size_t i = 0; i < flash.size(); ++i) EXPECT_NEAR(kept[i], flash[i], 1e-9 * flash[i]);
}

TEST(AttentionProfile, AKernelWithoutRowsOfItsOwnIsPricedFromTheOthers) {
  // Every profile measured before session 16 holds flash rows only: a cuDNN shape is priced from them, as before.
  auto m = ComputeModel::with_profile(h200(), two_row_profile());
  ASSERT_TRUE(m.has_value());
  AttentionShape cudnn = shape(1, 32, 8, 64, 4096);
  cudnn.backend = AttentionBackend::cudnn;
  const double f = fwd_flops(1, 32, 4096, 64);
  EXPECT_NEAR(m->attention(cudnn, false, Flops(f), Bytes(0)).time.value, f / 200e12, 1e-9 * f / 200e12);
}

const char* kTwoBackends = R"({"schema": "scalescope.attention-measurement/1", "gpu": "NVIDIA H100 80GB HBM3",
  "torch": "2.11.0", "cuda": "13.0", "measured_utc": "2026-11-28T04:00:52Z", "method": "flash and cudnn",
  "rows": [{"model": "a", "batch": 1, "seq": 4096, "heads": 32, "kv_heads": 32, "head_dim": 128, "causal": true,
            "dtype": "bf16", "backend": "flash", "fwd_s": 0.000577, "bwd_s": 0.00155},
           {"model": "a", "batch": 1, "seq": 4096, "heads": 32, "kv_heads": 32, "head_dim": 128, "causal": true,
            "dtype": "bf16", "backend": "cudnn", "fwd_s": 0.000298, "bwd_s": 0.000902}]})";

TEST(AttentionProfile, EachImportedRowKeepsItsBackend) {
  auto meas = parse_json_text(kTwoBackends, "meas.json");
  ASSERT_TRUE(meas.has_value());
  auto section = make_attention_section(*meas, "meas.json", "");
  ASSERT_TRUE(section.has_value()) << section.error().str();
  auto updated = with_attention_section(Json{{"schema", "scalescope.calibration/1"}}, *section, "p.json");
  ASSERT_TRUE(updated.has_value()) << updated.error().str();
  auto p = compute_profile_from_json(*updated, "p.json");
  ASSERT_TRUE(p.has_value()) << p.error().str();
  ASSERT_EQ(p->attention.size(), 2u);
  EXPECT_EQ(p->attention[0].shape.backend, AttentionBackend::flash);
  EXPECT_EQ(p->attention[1].shape.backend, AttentionBackend::cudnn);
  // An unknown kernel name is refused with its path.
  Json bad = *updated;
  bad["attention"]["rows"][0]["backend"] = "triton";
  auto e = compute_profile_from_json(bad, "p.json");
  ASSERT_FALSE(e.has_value());
  EXPECT_NE(e.error().str().find("backend"), std::string::npos) << e.error().str();
}

const char* kMeasurement = R"({"schema": "scalescope.attention-measurement/1", "gpu": "NVIDIA H200",
  "torch": "2.11.0", "cuda": "13.0", "measured_utc": "2026-11-21T06:31:04Z", "method": "torch SDPA flash",
  "rows": [{"model": "llama-1b", "batch": 1, "seq": 4096, "heads": 32, "kv_heads": 8, "head_dim": 64,
            "causal": true, "dtype": "bf16", "fwd_s": 0.0003, "bwd_s": 0.0009, "fwd_bwd_s": 0.0012,
            "fwd_TFLOPS": 229.1, "bwd_TFLOPS": 190.9}]})";

TEST(AttentionProfile, ImportedSectionIsReadBackIntoTheProfile) {
  auto meas = parse_json_text(kMeasurement, "meas.json");
  ASSERT_TRUE(meas.has_value());
  auto section = make_attention_section(*meas, "meas.json", "one H200, torch SDPA flash");
  ASSERT_TRUE(section.has_value()) << section.error().str();
  Json profile = {{"schema", "scalescope.calibration/1"}};
  auto updated = with_attention_section(profile, *section, "p.json");
  ASSERT_TRUE(updated.has_value()) << updated.error().str();
  auto p = compute_profile_from_json(*updated, "p.json");
  ASSERT_TRUE(p.has_value()) << p.error().str();
  ASSERT_EQ(p->attention.size(), 1u);
  EXPECT_EQ(p->attention_source, "one H200, torch SDPA flash");
  EXPECT_EQ(p->attention[0].shape.heads, 32);
  EXPECT_EQ(p->attention[0].shape.kv_heads, 8);
  EXPECT_TRUE(p->attention[0].shape.causal);
  EXPECT_DOUBLE_EQ(p->attention[0].backward.value, 0.0009);
}

TEST(AttentionProfile, ProfileWithoutAttentionSectionStillLoads) {
  Json profile = {{"schema", "scalescope.calibration/1"}};
  auto p = compute_profile_from_json(profile, "old.json");
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->attention.empty());
}

TEST(AttentionProfile, UnknownKeyInAnAttentionRowNamesItsPath) {
  Json profile = {{"schema", "scalescope.calibration/1"},
                  {"attention",
                   {{"source", "x"},
                    {"rows", Json::array({{{"batch", 1}, {"heads", 32}, {"kv_heads", 8}, {"head_dim", 64},
                                           {"seq", 4096}, {"causal", true}, {"dtype", "bf16"}, {"fwd_s", 1e-3},
                                           {"bwd_s", 2e-3}, {"fwd_ms", 1}}})}}}};
  auto p = compute_profile_from_json(profile, "bad.json");
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().str().find("$.attention.rows[0]"), std::string::npos) << p.error().str();
  EXPECT_NE(p.error().str().find("fwd_ms"), std::string::npos) << p.error().str();
}

TEST(AttentionProfile, MeasurementWithAWrongSchemaIsRejected) {
  auto meas = parse_json_text(R"({"schema": "other/1", "rows": []})", "m.json");
  ASSERT_TRUE(meas.has_value());
  auto section = make_attention_section(*meas, "m.json", "");
  ASSERT_FALSE(section.has_value());
  EXPECT_NE(section.error().str().find("$.schema"), std::string::npos) << section.error().str();
}

TEST(AttentionProfile, PlansAttendingFarBeyondTheLongestRowAreNoted) {
  // The two rows stop at 8,192 tokens (varlen rows would not count: they are documents). A rank attending over
  // more than 2 x 8,192 tokens gets a note naming the command that measures its shapes; seq 32,768 with cp 2 attends
  // over 16,384 per rank: no note.
  auto m = ComputeModel::with_profile(h200(), two_row_profile());
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->longest_attention_seq(), 8192);
  auto cluster = load_cluster_by_name_or_path("dgx-h100-8");
  ASSERT_TRUE(cluster.has_value());
  testing::DatasheetRig rig(std::move(cluster).value());
  rig.compute = std::move(m).value();
  rig.compute.set_stack(load_stack("fused").value());
  ModelSpec spec;
  spec.name = "one-layer";
  spec.layers = 1;
  spec.hidden = 2048;
  spec.heads = 32;
  spec.kv_heads = 8;
  spec.ffn_hidden = 8192;
  spec.vocab = 32000;
  spec.seq_len = 32768;
  auto noted = [&](const std::string& plan_text) {
    auto pred = predict(spec, parse_plan(plan_text).value(), rig.cluster, rig.coll, rig.compute, {});
    EXPECT_TRUE(pred.has_value()) << (pred ? "" : pred.error().str());
    if (!pred) return std::string();
    const auto& n = pred->check.notes;
    auto it = std::find_if(n.begin(), n.end(), [](const std::string& s) { return s.find("tokens per rank") != s.npos; });
    return it == n.end() ? std::string() : *it;
  };
  const std::string note = noted("tp=1,pp=1,dp=1,cp=1,mbs=1,gbs=1");
  EXPECT_NE(note.find("attention over 32768 tokens per rank"), std::string::npos) << note;
  EXPECT_NE(note.find("at most 8192 tokens"), std::string::npos) << note;
  EXPECT_NE(note.find("--model one-layer --seq 32768 --tp 1 --cp 1 --mbs 1"), std::string::npos) << note;
  EXPECT_EQ(noted("tp=1,pp=1,dp=1,cp=2,mbs=1,gbs=1"), "");
}

}  // namespace
}  // namespace scalescope::models
