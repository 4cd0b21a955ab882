// Tests for plan parsing (text and JSON) and for each validation rule.
#include "scalescope/models/plan.hpp"
#include "scalescope/models/layer_costs.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace scalescope::models {
namespace {

Plan parse_ok(std::string_view text) {
  auto p = parse_plan(text);
  EXPECT_TRUE(p.has_value()) << p.error().str();
  return p.has_value() ? *p : Plan{};
}

std::string parse_err(std::string_view text) {
  auto p = parse_plan(text);
  EXPECT_FALSE(p.has_value()) << text;
  return p.has_value() ? "" : p.error().str();
}

ModelSpec catalog(const char* name) {
  auto m = load_model_by_name_or_path(name);
  EXPECT_TRUE(m.has_value()) << m.error().str();
  return m.has_value() ? *m : ModelSpec{};
}

std::string invalid(const Plan& p, const ModelSpec& m, int gpus) {
  auto r = validate(p, m, gpus);
  EXPECT_FALSE(r.has_value()) << to_string(p);
  return r.has_value() ? "" : r.error().str();
}

TEST(PlanParse, ReadsTheBriefExample) {
  const Plan p = parse_ok("tp=8,pp=4,dp=32,zero=1,mbs=1,gbs=1536,schedule=1f1b");
  EXPECT_EQ(p.tp, 8);
  EXPECT_EQ(p.pp, 4);
  EXPECT_EQ(p.dp, 32);
  EXPECT_EQ(p.zero, 1);
  EXPECT_EQ(p.gbs, 1536);
  EXPECT_EQ(p.schedule, Schedule::one_f_one_b);
  // Defaults of the keys not given.
  EXPECT_EQ(p.vpp, 1);
  EXPECT_EQ(p.recompute, Recompute::none);
  EXPECT_FALSE(p.sp);
  EXPECT_EQ(p.bucket_MB, 25.0);
  EXPECT_TRUE(p.overlap);
  // 1536 sequences / (mbs 1 * dp 32) = 48 micro-batches per pipeline.
  EXPECT_EQ(p.num_microbatches(), 48);
  EXPECT_EQ(p.gpus(), 1024);
}

TEST(PlanParse, ErrorsNameTheKey) {
  EXPECT_EQ(parse_err("tp=8,pp=x,gbs=8"), "--plan: key 'pp': expected a positive integer, got 'x'");
  EXPECT_EQ(parse_err("tp=0,gbs=8"), "--plan: key 'tp': expected a positive integer, got '0'");
  EXPECT_EQ(parse_err("zero=4,gbs=8"),
            "--plan: key 'zero': expected a ZeRO stage 0, 1, 2 or 3, got '4'");
  EXPECT_EQ(parse_err("schedule=zb,gbs=8"),
            "--plan: key 'schedule': expected one of gpipe | 1f1b | interleaved, got 'zb'");
  EXPECT_EQ(parse_err("sp=yes,gbs=8"), "--plan: key 'sp': expected true, false, 1 or 0, got 'yes'");
  EXPECT_EQ(parse_err("tp=8"), "--plan: missing required key 'gbs' (global batch size)");
  EXPECT_EQ(parse_err("tp=8,tp=4,gbs=8"), "--plan: key 'tp': given more than once");
  EXPECT_EQ(parse_err("tp8,gbs=8"), "--plan: expected key=value, got 'tp8'");
}

TEST(PlanParse, UnknownKeyListsTheKnownOnes) {
  const std::string e = parse_err("tp=8,ep=2,gbs=8");
  EXPECT_EQ(
      e.rfind(
          "--plan: key 'ep': unknown key (expected one of: tp, pp, dp, zero, mbs, gbs, schedule",
          0),
      0u)
      << e;
}

TEST(PlanParse, TextRoundTripAndJson) {
  const Plan p = parse_ok(
      " tp=2, pp=4 ,dp=8,zero=2,mbs=2,gbs=512,schedule=interleaved,vpp=3,recompute=selective,"
      "sp=1,precision=bf16,bucket_MB=12.5,overlap=false");
  EXPECT_EQ(to_string(p),
            "tp=2,pp=4,dp=8,zero=2,mbs=2,gbs=512,schedule=interleaved,vpp=3,recompute=selective,"
            "sp=true,precision=bf16,bucket_MB=12.5,overlap=false");
  EXPECT_EQ(parse_ok(to_string(p)), p);
  auto j = plan_from_json(to_json(p), "p.json");
  ASSERT_TRUE(j.has_value()) << j.error().str();
  EXPECT_EQ(*j, p);
}

TEST(PlanParse, Fp16PrecisionRoundTripsAndHasSixteenBitGradients) {
  const Plan p = parse_ok("tp=2,gbs=8,precision=fp16");
  EXPECT_EQ(p.precision, Precision::fp16);
  EXPECT_EQ(parse_ok(to_string(p)), p);
  auto j = plan_from_json(to_json(p), "p.json");
  ASSERT_TRUE(j.has_value()) << j.error().str();
  EXPECT_EQ(j->precision, Precision::fp16);
  // Gradients are reduced in 16 bits (2 bytes per element), mixed reduces fp32 (4).
  EXPECT_EQ(grad_bytes_per_element(Precision::fp16), 2.0);
  EXPECT_EQ(grad_bytes_per_element(Precision::mixed), 4.0);
  auto bad = parse_plan("gbs=8,precision=fp8");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("fp16"), std::string::npos) << bad.error().str();
}

TEST(PlanParse, JsonFileErrorsNameFileAndPath) {
  const auto dir = std::filesystem::temp_directory_path() / "scalescope_plan_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "plan.json";
  std::ofstream(f) << R"({"tp": 8, "pp": "4", "gbs": 64})";
  auto p = parse_plan_or_file(f.string());
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().str(),
            f.string() + ": $.pp: expected a positive integer, got the string \"4\"");
  std::ofstream(f) << R"({"tp": 8, "gbs": 64, "zero": 5})";
  EXPECT_EQ(load_plan(f).error().str(),
            f.string() + ": $.zero: expected a ZeRO stage 0, 1, 2 or 3, got 5");
  std::ofstream(f) << R"({"tp": 8, "gbs": 64, "typo": 1})";
  EXPECT_NE(load_plan(f).error().str().find("$.typo: unknown key 'typo'"), std::string::npos);
  std::ofstream(f) << R"({"tp": 8, "pp": 2, "gbs": 64})";
  auto ok = parse_plan_or_file(f.string());
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  EXPECT_EQ(ok->pp, 2);
}

TEST(PlanValidate, AcceptsAValidPlanWithoutNotes) {
  // Llama-3-70B: 64 heads, 8 KV heads, 80 layers, ffn 28672 -> tp=8 divides all; 80 / 4 = 20 layers
  // per stage; 1536 / (1*32) = 48 micro-batches; 8*4*32 = 1024 GPUs exactly.
  auto r = validate(parse_ok("tp=8,pp=4,dp=32,zero=1,mbs=1,gbs=1536,sp=true"),
                    catalog("llama3-70b"), 1024);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_TRUE(r->notes.empty());
}

TEST(PlanValidate, TpMustDivideHeadsKvHeadsAndFfn) {
  const ModelSpec m = catalog("llama3-8b");  // 32 heads, 8 kv heads, ffn 14336
  EXPECT_EQ(invalid(parse_ok("tp=3,gbs=8"), m, 0), "plan: tp: tp=3 does not divide heads=32");
  EXPECT_EQ(invalid(parse_ok("tp=16,gbs=8"), m, 0), "plan: tp: tp=16 does not divide kv_heads=8");
  ModelSpec odd = m;
  odd.ffn_hidden = 14340;  // 14340 / 8 is not whole
  EXPECT_EQ(invalid(parse_ok("tp=8,gbs=8"), odd, 0),
            "plan: tp: tp=8 does not divide ffn_hidden=14340");
}

TEST(PlanValidate, PpMustDivideLayers) {
  const ModelSpec m = catalog("llama3-405b");  // 126 layers
  EXPECT_EQ(invalid(parse_ok("pp=4,gbs=8"), m, 0), "plan: pp: pp=4 does not divide layers=126");
  EXPECT_TRUE(validate(parse_ok("pp=7,gbs=7"), m, 0).has_value());
}

TEST(PlanValidate, InterleavedRules) {
  const ModelSpec m = catalog("llama2-7b");  // 32 layers
  EXPECT_EQ(invalid(parse_ok("pp=4,vpp=2,gbs=8"), m, 0),
            "plan: vpp: vpp=2 needs schedule=interleaved, got schedule=1f1b");
  EXPECT_EQ(invalid(parse_ok("pp=4,schedule=interleaved,gbs=8"), m, 0),
            "plan: vpp: schedule=interleaved needs vpp > 1, got vpp=1");
  EXPECT_EQ(invalid(parse_ok("pp=1,vpp=2,schedule=interleaved,gbs=8"), m, 0),
            "plan: schedule: schedule=interleaved needs pp > 1, got pp=1");
  // 4 * 3 = 12 does not divide 32 layers.
  EXPECT_EQ(invalid(parse_ok("pp=4,vpp=3,schedule=interleaved,gbs=8"), m, 0),
            "plan: vpp: pp*vpp=12 does not divide layers=32");
  // 6 micro-batches is not a multiple of pp=4 (Megatron asserts it for the interleaved schedule).
  EXPECT_EQ(invalid(parse_ok("pp=4,vpp=2,schedule=interleaved,gbs=6"), m, 0),
            "plan: gbs: schedule=interleaved needs the number of micro-batches (6) to be a "
            "multiple of pp=4 "
            "(Megatron-LM rule)");
  EXPECT_TRUE(validate(parse_ok("pp=4,vpp=2,schedule=interleaved,gbs=8"), m, 0).has_value());
}

TEST(PlanValidate, GbsMustBeDivisibleByMbsTimesDp) {
  EXPECT_EQ(invalid(parse_ok("dp=4,mbs=2,gbs=12"), catalog("llama2-7b"), 0),
            "plan: gbs: gbs=12 is not divisible by mbs*dp=8");
}

TEST(PlanValidate, SequenceParallelNeedsTp) {
  const ModelSpec m = catalog("llama2-7b");
  EXPECT_EQ(invalid(parse_ok("sp=true,gbs=8"), m, 0), "plan: sp: sp=true needs tp > 1, got tp=1");
  ModelSpec odd = m;
  odd.seq_len = 4098;
  EXPECT_EQ(invalid(parse_ok("tp=4,sp=true,gbs=8"), odd, 0),
            "plan: sp: sp=true needs tp to divide seq_len: tp=4, seq_len=4098");
}

TEST(PlanValidate, GpuCountAndNotes) {
  const ModelSpec m = catalog("llama2-7b");
  EXPECT_EQ(invalid(parse_ok("tp=8,dp=4,gbs=8"), m, 16),
            "plan: dp: tp*pp*dp=32 exceeds the 16 GPUs available");
  auto fewer = validate(parse_ok("tp=8,dp=1,gbs=8"), m, 16);
  ASSERT_TRUE(fewer.has_value());
  ASSERT_EQ(fewer->notes.size(), 1u);
  EXPECT_EQ(fewer->notes[0], "uses 8 of the 16 GPUs available");
  auto zero_no_dp = validate(parse_ok("zero=1,gbs=8"), m, 0);
  ASSERT_TRUE(zero_no_dp.has_value());
  ASSERT_EQ(zero_no_dp->notes.size(), 1u);
  EXPECT_EQ(zero_no_dp->notes[0], "zero=1 with dp=1 shards nothing: memory is as with zero=0");
}

TEST(PlanValidate, CodeBuiltPlansAreCheckedToo) {
  Plan p;
  p.zero = 7;
  EXPECT_EQ(invalid(p, catalog("llama2-7b"), 0),
            "plan: zero: expected a ZeRO stage 0, 1, 2 or 3, got 7");
  p = Plan{};
  p.mbs = 0;
  EXPECT_EQ(invalid(p, catalog("llama2-7b"), 0), "plan: mbs: expected a positive integer, got 0");
}

}  // namespace
}  // namespace scalescope::models
