// Tests for the NeMo / Megatron-Bridge H100 validation: the CSV reader's errors, every published dense row
// expressible as a valid plan, NeMo's plans of chosen rows, and the long-sequence TFLOP/s -> tokens/s
// conversion (hand-computed).
#include "scalescope/validate/nemo.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "scalescope/models/pipeline_layout.hpp"
#include "scalescope/validate/csv.hpp"

namespace scalescope::validate {
namespace {

const std::filesystem::path kData = std::filesystem::path(SCALESCOPE_TEST_DATA) / ".." / ".." / "validation" / "nemo";

const NemoRow& find(const std::vector<NemoRow>& rows, const std::string& source, const std::string& model) {
  for (const auto& r : rows) {
    if (r.source == source && r.model == model && r.dense()) return r;
  }
  ADD_FAILURE() << source << " " << model;
  return rows.front();
}

TEST(Csv, ErrorsNameFileLineAndColumn) {
  const auto dir = std::filesystem::temp_directory_path() / "scalescope_csv_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "t.csv";
  std::ofstream(f) << "a,b\n1,2\n3\n";
  EXPECT_EQ(read_csv(f).error().str(), f.string() + ": line 3: expected 2 cells, got 1");
  std::ofstream(f) << "a,b\n1,x\n";
  auto t = read_csv(f);
  ASSERT_TRUE(t.has_value());
  auto bad = catch_errors([&] { return CsvRow(*t, 0).positive_int("b"); });
  EXPECT_EQ(bad.error().str(), f.string() + ": line 2, column 'b': expected a non-negative integer, got 'x'");
}

TEST(Nemo, EveryPublishedDenseRowIsAValidPlan) {
  auto rows = load_nemo_rows(kData / "h100_published.csv");
  ASSERT_TRUE(rows.has_value()) << rows.error().str();
  int dense = 0;
  for (const NemoRow& r : *rows) {
    if (!r.dense()) continue;
    ++dense;
    auto spec = nemo_model(r, kData);
    ASSERT_TRUE(spec.has_value()) << r.model << ": " << spec.error().str();
    const models::Plan p = nemo_plan(r, *spec);
    EXPECT_EQ(p.gpus(), r.gpus) << r.source << " " << r.model;
    auto ok = models::validate(p, *spec, r.gpus);
    EXPECT_TRUE(ok.has_value()) << r.source << " " << r.model << ": " << (ok ? "" : ok.error().str());
  }
  // Pre-training: 12 NeMo 24.07 + 9 long-sequence + 13 Megatron-Bridge rows; fine-tuning: 6 NeMo 24.07 (SFT and
  // LoRA of Llama 2 7B, 13B, 70B) + 2 Megatron-Bridge 26.06 (Llama 3 70B) (h100_published.csv).
  EXPECT_EQ(dense, 42);
}

TEST(Nemo, FineTuningRowsAsNemoRanThem) {
  auto rows = load_nemo_rows(kData / "h100_published.csv").value();
  int sft = 0, lora = 0;
  for (const NemoRow& r : rows) {
    if (r.task != "sft" && r.task != "lora") continue;
    const models::Plan p = nemo_plan(r, nemo_model(r, kData).value());
    EXPECT_EQ(p.packed_doc_tokens, kSquadDocTokens) << r.source << " " << r.model;
    if (r.task == "sft") {
      ++sft;
      EXPECT_EQ(p.lora_rank, 0);
      continue;
    }
    ++lora;
    EXPECT_EQ(p.lora_rank, 32);
    // NeMo 1.0's LoRA adapts the fused qkv only; Megatron-Bridge's every linear module of a layer.
    EXPECT_EQ(p.lora_modules, r.source == "nemo-24.07" ? models::kLoraQkv : 0xF) << r.source;
  }
  EXPECT_EQ(sft, 4);
  EXPECT_EQ(lora, 4);
}

TEST(Nemo, PlansAsNemoRanThem) {
  auto rows = load_nemo_rows(kData / "h100_published.csv").value();
  // Megatron-Bridge 26.02 Llama 3.1 405B: 1,024 GPUs, tp 8, pp 8, cp 2, vp 8 -> dp 8; 126 layers on 64 virtual
  // stages with the embedding and the loss counted as layers: Et | 62 x tt | tL; bf16 gradients: buckets
  // of max(40M, 1M x 8 x 2) = 40M elements x 2 B.
  const NemoRow& big = find(rows, "bridge-26.02", "LLAMA3.1_405B");
  const models::ModelSpec spec = nemo_model(big, kData).value();
  const models::Plan p = nemo_plan(big, spec);
  EXPECT_EQ(p.dp, 8);
  EXPECT_EQ(p.pp_layout, "Et|(tt|)*62tL");
  EXPECT_EQ(models::plan_layout(spec, p).value().layers_per_chunk.front(), 1);
  EXPECT_EQ(p.fp8_recipe, models::Fp8Recipe::tensorwise);
  EXPECT_FALSE(p.grad_reduce_in_fp32);
  EXPECT_DOUBLE_EQ(p.bucket_MB, 40e6 * 2.0 / (1024.0 * 1024.0));
  EXPECT_TRUE(p.sp && p.tp_comm_overlap && p.overlap_param_gather);
  // NeMo 24.07 Llama 2 70B: delayed scaling, fp32 gradient reduction, interleaved with vp 20.
  const NemoRow& l70 = find(rows, "nemo-24.07", "LLAMA2-70B");
  const models::Plan q = nemo_plan(l70, nemo_model(l70, kData).value());
  EXPECT_EQ(q.fp8_recipe, models::Fp8Recipe::delayed);
  EXPECT_TRUE(q.grad_reduce_in_fp32);
  EXPECT_EQ(q.schedule, models::Schedule::interleaved);
  EXPECT_EQ(q.vpp, 20);
  // Megatron-FSDP rows run as ZeRO-3.
  EXPECT_EQ(nemo_plan(find(rows, "bridge-25.11", "LLAMA3_8B"), spec).zero, 3);
  // The cross entropy each row's configuration ran: Megatron-Bridge's recipes set TE's kernel; NeMo-Framework-
  // Launcher 24.07's llama3_70b.yaml sets cross_entropy_loss_fusion (native, Megatron-Core 0.8's only one) and its
  // llama2_70b.yaml leaves it out (Megatron-Core's default: off); the 24.03 long-sequence rows predate it.
  EXPECT_EQ(p.cross_entropy_fusion, models::CrossEntropyFusion::te);
  EXPECT_EQ(q.cross_entropy_fusion, models::CrossEntropyFusion::none);
  EXPECT_EQ(nemo_cross_entropy_fusion(find(rows, "nemo-24.07", "LLAMA3-70B")), models::CrossEntropyFusion::native);
  EXPECT_EQ(nemo_cross_entropy_fusion(find(rows, "nemo-longseq-24.03", "LLAMA2-7B")), models::CrossEntropyFusion::none);
}

TEST(Nemo, EveryPublishedMoeRowIsAValidPlan) {
  auto rows = load_nemo_rows(kData / "h100_published.csv").value();
  int moe = 0;
  for (const NemoRow& r : rows) {
    if (!r.moe()) continue;
    ++moe;
    auto spec = nemo_model(r, kData);
    ASSERT_TRUE(spec.has_value()) << r.model << ": " << spec.error().str();
    const models::Plan p = nemo_plan(r, *spec);
    EXPECT_EQ(p.ep, r.ep);
    EXPECT_EQ(p.gpus(), r.gpus);
    auto ok = models::validate(p, *spec, r.gpus);
    EXPECT_TRUE(ok.has_value()) << r.source << " " << r.model << ": " << (ok ? "" : ok.error().str());
  }
  // DeepSeek-V3 (1 row), Qwen3-30B-A3B (7), Qwen3-235B-A22B (6), GPT OSS 120B (5, since session 22) and
  // Nemotron 3 Nano (4, a hybrid Mamba-2 / attention / MoE model since session 33) in h100_published.csv.
  EXPECT_EQ(moe, 23);
  // DeepSeek-V3 on 1,024 GPUs: tp 2, pp 8, vp 4, ep 64 -> dp 64, edp = 2 x 64 / 64 = 2; 61 layers on 32 virtual
  // stages with the embedding and the loss counted as layers: Et | 30 x tt | L (the recipe's MTP layer dropped).
  for (const NemoRow& r : rows) {
    if (r.model != "DeepSeekV3") continue;
    const models::Plan p = nemo_plan(r, nemo_model(r, kData).value());
    EXPECT_EQ(p.pp_layout, "Et|(tt|)*30L");
    EXPECT_EQ(p.edp(), 2);
    EXPECT_EQ(p.fp8_recipe, models::Fp8Recipe::blockwise);
  }
  // Qwen3-235B-A22B: 94 layers on pp 8 x vp 4 = 32 virtual stages only with the embedding and the loss counted
  // as layers: (94 + 2) / 32 = 3 per stage -> E + 2 | 30 x 3 | 2 + L.
  for (const NemoRow& r : rows) {
    if (r.model != "Qwen3_235B_a22B") continue;
    EXPECT_EQ(nemo_plan(r, nemo_model(r, kData).value()).pp_layout, "Ett|(t*3|)*30ttL");
  }
}

TEST(Nemo, DeepSeekV3ReportRunIsAValidPlan) {
  // 2,048 GPUs = pp 16 x dp 128; ep 64 inside the 128 data-parallel ranks (edp 2); 15,360 / 128 = 120
  // micro-batches; 61 layers + embedding + loss on 16 stages: 3 + 14 x 4 + 2.
  const models::Plan p = deepseek_v3_report_plan();
  const models::ModelSpec m = models::load_model_by_name_or_path("deepseek-v3").value();
  auto ok = models::validate(p, m, 2048);
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  EXPECT_EQ(p.gpus(), 2048);
  EXPECT_EQ(p.edp(), 2);
  EXPECT_EQ(p.num_microbatches(), 120);
  const auto layout = models::plan_layout(m, p).value();
  EXPECT_EQ(layout.layers_per_chunk.front(), 3);
  EXPECT_EQ(layout.layers_per_chunk.back(), 2);
  // 10^12 tokens / (180,000 h x 3,600 s/h) per GPU.
  EXPECT_NEAR(DeepSeekV3Check::kPublishedTokensPerGpu, 1543.2, 0.05);
}

TEST(Nemo, LongSequenceRowsConvertTflopsWithNemo10sFormula) {
  // Llama 2 7B at 4096: 32 x 4096^2 x (12 + 12 + 18 x 11008/4096 + 12 + 6 x 32000/(32 x 4096))
  // = 536,870,912 x 85.83984375 = 46,084,915,200 FLOPs per token; 768 TFLOP/s -> 16,665 tokens/s.
  auto rows = load_nemo_rows(kData / "h100_published.csv").value();
  const NemoRow& r = find(rows, "nemo-longseq-24.03", "LLAMA2-7B");
  ASSERT_EQ(r.seq, 4096);
  EXPECT_NEAR(measured_tokens_per_s(r, nemo_model(r, kData).value()), 768e12 / 46084915200.0, 1e-6);
  // The 24.07 row of the same model publishes both: 780 TFLOP/s at 16,934 tokens/s, 46.06 GFLOP per token,
  // within 0.1% of the formula (SOURCES.md).
  const NemoRow& both = find(rows, "nemo-24.07", "LLAMA2-7B");
  EXPECT_NEAR(both.tflops * 1e12 / *both.tokens_per_s / 46084915200.0, 1.0, 1e-3);
}

}  // namespace
TEST(Nemo, TheReportNamesWhatPricedTheRows) {
  // Session 16: without --calibration the rows are priced with the cluster's default profile (h100-gpu since
  // issue 26), and the summary said "datasheet". The label follows the compute source the validation reports.
  NemoValidation v;
  NemoOptions o;
  v.compute_source = "profile calibrate/profiles/h100-gpu.json";
  std::string md = nemo_report_markdown(v, o);
  EXPECT_NE(md.find("| dense rows, default profile calibrate/profiles/h100-gpu.json |"), std::string::npos) << md;
  EXPECT_EQ(md.find("dense rows, datasheet"), std::string::npos);
  EXPECT_EQ(md.find("(H100 SXM datasheet"), std::string::npos);
  o.calibration = "h200x4";
  EXPECT_NE(nemo_report_markdown(v, o).find("| dense rows, profile h200x4 |"), std::string::npos);
  o.calibration.clear();
  v.compute_source = "datasheet (H100 SXM5 80GB)";
  md = nemo_report_markdown(v, o);
  EXPECT_NE(md.find("| dense rows, datasheet |"), std::string::npos) << md;
  EXPECT_NE(md.find("(H100 SXM datasheet"), std::string::npos);
}

TEST(Nemo, AMeasuredHostTimeOnlySlowsTheRowsAndBoundsAHostBoundOne) {
  // validate nemo --moe-host-cost: Megatron-Core's measured host time per MoE layer and micro-batch, 11.5167 ms
  // (validation/nemo/megatron-core-host/moe.json, session 28). Qwen3-30B-A3B on 16 H100 (bridge-26.04: pp 1, ep 16,
  // mbs 1, 4,096 tokens) runs all 48 layers on every GPU, each in ~7 ms of GPU time and exposed all-to-all
  // (12,181 tokens/s predicted without a host: 4096 / 12181 / 48 = 7.0 ms), so the host sets the pace: at most
  // 4096 / (48 x 0.0115167 s) = 7,410 tokens/s per GPU, less the embedding, head and waits for the token counts.
  NemoOptions o;
  o.moe_host_cost = (kData / "megatron-core-host" / "moe.json").string();
  o.deepseek_v3_calibration.clear();
  auto v = run_nemo_validation(kData, o);
  ASSERT_TRUE(v.has_value()) << v.error().str();
  int with_host = 0;
  for (const NemoPoint& p : v->points) {
    if (!p.skipped.empty()) continue;
    EXPECT_EQ(p.with_host > 0, p.row.moe()) << p.row.model;  // only the MoE rows have a host cost here
    if (p.with_host > 0) {
      ++with_host;
      EXPECT_LE(p.with_host, p.predicted * (1 + 1e-9)) << p.row.source << " " << p.row.model;
    }
    if (p.row.source == "bridge-26.04" && p.row.model == "Qwen3_30B_a3B") {
      EXPECT_LE(p.with_host, 4096.0 / (48 * 0.0115167));
      EXPECT_GT(p.with_host, 0.85 * 4096.0 / (48 * 0.0115167));
    }
  }
  EXPECT_EQ(with_host, v->moe_points);
  const std::string md = nemo_report_markdown(*v, o);
  EXPECT_NE(md.find("| MoE rows, the same with the measured host time of " + o.moe_host_cost + " | 23 |"),
            std::string::npos) << md.substr(0, 2000);
  EXPECT_NE(md.find("megatron-core 0.16.1 (local layer spec"), std::string::npos);  // what was measured, and where
  EXPECT_NE(md.find("not a DGX H100's Xeon"), std::string::npos);
  o.moe_host_cost = "nope.json";  // a missing file: the error names it
  auto missing = run_nemo_validation(kData, o);
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().str().find("nope.json"), std::string::npos) << missing.error().str();
}

}  // namespace scalescope::validate
