// Tests for plan parsing (text and JSON) and for each validation rule.
#include "scalescope/models/plan.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/pipeline_layout.hpp"

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
  EXPECT_EQ(p.cp, 1);
  EXPECT_FALSE(p.overlap_param_gather);
  EXPECT_FALSE(p.tp_comm_overlap);
  EXPECT_TRUE(p.grad_reduce_in_fp32);
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
  const std::string e = parse_err("tp=8,xp=2,gbs=8");
  EXPECT_EQ(
      e.rfind(
          "--plan: key 'xp': unknown key (expected one of: tp, pp, dp, zero, mbs, gbs, schedule",
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
            "sp=true,precision=bf16,bucket_MB=12.5,overlap_grad_reduce=false,cp=1,cp_comm=p2p,"
            "fp8_recipe=delayed,fp8_params=false,grad_reduce_in_fp32=true,overlap_param_gather=false,"
            "tp_comm_overlap=false,first_stage_layers=0,last_stage_layers=0");
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
  auto bad = parse_plan("gbs=8,precision=fp4");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().str(), "--plan: key 'precision': expected one of mixed | bf16 | fp16 | fp8, got 'fp4'");
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

TEST(PlanValidate, PpMustDivideLayersAndTheErrorNamesTheNearestValidSettings) {
  const ModelSpec m = catalog("llama3-405b");  // 126 layers
  // Uneven pairs (F, L) with 2 middle stages need F + L even (126 - F - L split in 2); nearest to the
  // even share 31.5: (31, 31) and (32, 32) at distance 0.5, (31, 32) is odd. pp=3 and pp=6 divide 126.
  EXPECT_EQ(invalid(parse_ok("pp=4,gbs=8"), m, 0),
            "plan: pp: pp=4 does not divide layers=126; nearest valid settings: "
            "first_stage_layers=31,last_stage_layers=31 or first_stage_layers=32,last_stage_layers=32 or pp=3 or pp=6");
  EXPECT_TRUE(validate(parse_ok("pp=7,gbs=7"), m, 0).has_value());
  EXPECT_TRUE(validate(parse_ok("pp=4,first_stage_layers=31,last_stage_layers=31,gbs=8"), m, 0).has_value());
}

TEST(PlanValidate, Bloom70LayersOnTwelveStagesSuggestsFiveAndFive) {
  ModelSpec m = catalog("llama2-7b");
  m.layers = 70;  // BLOOM-176B: 70 layers, pp=12 (it ran 5 + 10 x 6 + 5 with the embedding counted)
  // 10 middle stages: F + L = 10, 20, ...; even share 70/12 = 5.83: (5, 5) is 0.83 away, then (4, 6)
  // and (6, 4) at 1.83 (F ascending first). No pp in 11 or 13 divides 70 before pp=10 and pp=14.
  EXPECT_EQ(invalid(parse_ok("pp=12,gbs=12"), m, 0),
            "plan: pp: pp=12 does not divide layers=70; nearest valid settings: "
            "first_stage_layers=5,last_stage_layers=5 or first_stage_layers=4,last_stage_layers=6 or pp=10 or pp=14");
  auto layout = plan_layout(m, parse_ok("pp=12,first_stage_layers=5,last_stage_layers=5,gbs=12"));
  ASSERT_TRUE(layout.has_value()) << layout.error().str();
  EXPECT_EQ(layout->layers_per_chunk, (std::vector<int>{5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5}));
}

TEST(PlanValidate, UnevenStagesFollowMegatronRules) {
  const ModelSpec m = catalog("llama2-7b");  // 32 layers
  // first 5, last 9: 18 layers for 2 middle stages -> 9 each.
  auto l = plan_layout(m, parse_ok("pp=4,first_stage_layers=5,last_stage_layers=9,gbs=8"));
  ASSERT_TRUE(l.has_value()) << l.error().str();
  EXPECT_EQ(l->layers_per_chunk, (std::vector<int>{5, 9, 9, 9}));
  // Only the first set on pp=2: the last stage takes the other 30.
  l = plan_layout(m, parse_ok("pp=2,first_stage_layers=2,gbs=8"));
  ASSERT_TRUE(l.has_value()) << l.error().str();
  EXPECT_EQ(l->layers_per_chunk, (std::vector<int>{2, 30}));
  // Interleaved: stage layers split evenly over the vpp chunks; chunk c runs on stage c % pp. First 4,
  // last 4: 24 for 2 middle stages = 12 each, 6 per chunk.
  l = plan_layout(m, parse_ok("pp=4,vpp=2,schedule=interleaved,first_stage_layers=4,last_stage_layers=4,gbs=8"));
  ASSERT_TRUE(l.has_value()) << l.error().str();
  EXPECT_EQ(l->layers_per_chunk, (std::vector<int>{2, 6, 6, 2, 2, 6, 6, 2}));
  EXPECT_EQ(invalid(parse_ok("pp=4,vpp=2,schedule=interleaved,first_stage_layers=3,gbs=8"), m, 0),
            "plan: first_stage_layers: first_stage_layers=3 is not divisible by vpp=2 (Megatron-Core rule)");
  // 32 - 5 - 8 = 19 layers do not split over 2 middle stages.
  const std::string e = invalid(parse_ok("pp=4,first_stage_layers=5,last_stage_layers=8,gbs=8"), m, 0);
  EXPECT_EQ(e.rfind("plan: first_stage_layers: first_stage_layers=5,last_stage_layers=8 leaves 19 layers for 2 middle "
                    "stage(s) of vpp=1 chunk(s) (layers=32, pp=4); nearest valid settings: ", 0), 0u) << e;
  EXPECT_EQ(invalid(parse_ok("first_stage_layers=5,gbs=8"), m, 0),
            "plan: first_stage_layers: first_stage_layers / last_stage_layers need pp > 1");
}

TEST(PlanLayout, ParsesMegatronLayoutStrings) {
  // NeMo's Llama-3-70B FP8 H100 recipe: E + 2 layers, 34 x 2, then 3, 3 x 2, then 1 layer + loss.
  auto l = parse_pp_layout("Et*2|(t*2|)*34,t*3|(t*2|)*3,tL");
  ASSERT_TRUE(l.has_value()) << l.error().str();
  std::vector<int> expected(40, 2);
  expected[35] = 3;
  expected[39] = 1;
  EXPECT_EQ(*l, expected);
  int total = 0;
  for (int v : *l) total += v;
  EXPECT_EQ(total, 80);  // 2 + 68 + 3 + 6 + 1
  l = parse_pp_layout("E|t*4|tttt|ttL");  // an embedding-only first entry
  ASSERT_TRUE(l.has_value()) << l.error().str();
  EXPECT_EQ(*l, (std::vector<int>{0, 4, 4, 2}));
  EXPECT_EQ(parse_pp_layout("tEt|tL").error().str(), "plan: pp_layout: 'E' (embedding) must open the first entry");
  EXPECT_EQ(parse_pp_layout("tL|tt").error().str(), "plan: pp_layout: 'L' (loss) must close the last entry");
  EXPECT_EQ(parse_pp_layout("tx|t").error().str(),
            "plan: pp_layout: unknown layer character 'x' (expected t, E, L, '|', '*n', '(...)*n')");
  const ModelSpec m = catalog("llama2-7b");  // 32 layers
  EXPECT_EQ(invalid(parse_ok("pp=2,pp_layout=t*16|t*15,gbs=8"), m, 0),
            "plan: pp_layout: pp_layout places 31 layers, the model has layers=32");
  EXPECT_EQ(invalid(parse_ok("pp=4,pp_layout=t*16|t*16,gbs=8"), m, 0),
            "plan: pp_layout: pp_layout has 2 entries, expected pp*vpp=4 (pp=4, vpp=1)");
  auto ok = plan_layout(m, parse_ok("pp=2,pp_layout=Et*15|t*17L,gbs=8"));
  ASSERT_TRUE(ok.has_value()) << ok.error().str();
  EXPECT_EQ(ok->layers_per_chunk, (std::vector<int>{15, 17}));
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
            "plan: sp: sp=true needs tp to divide the sequence of a CP rank: tp=4, seq_len/cp=4098");
}

TEST(PlanValidate, GpuCountAndNotes) {
  const ModelSpec m = catalog("llama2-7b");
  EXPECT_EQ(invalid(parse_ok("tp=8,dp=4,gbs=8"), m, 16),
            "plan: dp: tp*cp*pp*dp=32 exceeds the 16 GPUs available");
  auto fewer = validate(parse_ok("tp=8,dp=1,gbs=8"), m, 16);
  ASSERT_TRUE(fewer.has_value());
  ASSERT_EQ(fewer->notes.size(), 1u);
  EXPECT_EQ(fewer->notes[0], "uses 8 of the 16 GPUs available");
  auto zero_no_dp = validate(parse_ok("zero=1,gbs=8"), m, 0);
  ASSERT_TRUE(zero_no_dp.has_value());
  ASSERT_EQ(zero_no_dp->notes.size(), 1u);
  EXPECT_EQ(zero_no_dp->notes[0], "zero=1 with dp=1 (and cp=1) shards nothing: memory is as with zero=0");
}

TEST(PlanParse, DenseStackKeysRoundTrip) {
  const Plan p = parse_ok(
      "tp=4,cp=2,cp_comm=a2a,pp=2,gbs=8,sp=1,zero=1,precision=fp8,fp8_recipe=tensorwise,fp8_params=1,"
      "grad_reduce_in_fp32=0,overlap_grad_reduce=1,overlap_param_gather=1,tp_comm_overlap=1,"
      "first_stage_layers=3,last_stage_layers=5,pp_layout=Et|tL");
  EXPECT_EQ(p.cp, 2);
  EXPECT_EQ(p.cp_comm, CpComm::a2a);
  EXPECT_EQ(p.precision, Precision::fp8);
  EXPECT_EQ(p.fp8_recipe, Fp8Recipe::tensorwise);
  EXPECT_TRUE(p.fp8_params && p.overlap && p.overlap_param_gather && p.tp_comm_overlap);
  EXPECT_FALSE(p.grad_reduce_in_fp32);
  EXPECT_EQ(p.first_stage_layers, 3);
  EXPECT_EQ(p.last_stage_layers, 5);
  EXPECT_EQ(p.pp_layout, "Et|tL");
  EXPECT_EQ(p.gpus(), 16);  // tp * cp * pp * dp = 4 * 2 * 2 * 1
  EXPECT_EQ(parse_ok(to_string(p)), p);
  auto j = plan_from_json(to_json(p), "p.json");
  ASSERT_TRUE(j.has_value()) << j.error().str();
  EXPECT_EQ(*j, p);
  // 16-bit main grads.
  EXPECT_EQ(grad_bytes_per_element(p), 2.0);
  EXPECT_EQ(grad_bytes_per_element(parse_ok("precision=fp8,gbs=8")), 4.0);
}

// optimizer_impl: torch.optim.AdamW's implementation. Default fused (and then absent from the text and JSON forms, so
// that plans written before it read and write as they did); foreach round-trips; anything else is refused by name.
TEST(PlanParse, OptimizerImplDefaultsToFusedAndRoundTripsForeach) {
  EXPECT_EQ(parse_ok("gbs=8").optimizer_impl, OptimizerImpl::fused);
  EXPECT_EQ(to_string(parse_ok("gbs=8")).find("optimizer_impl"), std::string::npos);
  const Plan p = parse_ok("gbs=8,optimizer_impl=foreach");
  EXPECT_EQ(p.optimizer_impl, OptimizerImpl::foreach);
  EXPECT_NE(to_string(p).find(",optimizer_impl=foreach"), std::string::npos) << to_string(p);
  EXPECT_EQ(parse_ok(to_string(p)), p);
  auto j = plan_from_json(to_json(p), "p.json");
  ASSERT_TRUE(j.has_value()) << j.error().str();
  EXPECT_EQ(*j, p);
  EXPECT_EQ(parse_err("gbs=8,optimizer_impl=sgd"),
            "--plan: key 'optimizer_impl': expected one of fused | foreach, got 'sgd'");
}

// cross_entropy_fusion: Megatron-Core's --cross-entropy-loss-fusion / --cross-entropy-fusion-impl. Default none
// (Megatron-Core's default, absent from the text and JSON forms); native and te round-trip; anything else is refused.
TEST(PlanParse, CrossEntropyFusionDefaultsToNoneAndRoundTrips) {
  EXPECT_EQ(parse_ok("gbs=8").cross_entropy_fusion, CrossEntropyFusion::none);
  EXPECT_EQ(to_string(parse_ok("gbs=8")).find("cross_entropy_fusion"), std::string::npos);
  for (const char* v : {"native", "te"}) {
    const Plan p = parse_ok(std::string("gbs=8,cross_entropy_fusion=") + v);
    EXPECT_EQ(to_string(p.cross_entropy_fusion), v);
    EXPECT_NE(to_string(p).find(std::string(",cross_entropy_fusion=") + v), std::string::npos) << to_string(p);
    EXPECT_EQ(parse_ok(to_string(p)), p);
    auto j = plan_from_json(to_json(p), "p.json");
    ASSERT_TRUE(j.has_value()) << j.error().str();
    EXPECT_EQ(*j, p);
  }
  EXPECT_EQ(parse_err("gbs=8,cross_entropy_fusion=fused"),
            "--plan: key 'cross_entropy_fusion': expected one of none | native | te, got 'fused'");
}

TEST(PlanParse, OverlapIsTheOlderNameOfOverlapGradReduce) {
  EXPECT_FALSE(parse_ok("overlap=false,gbs=8").overlap);
  EXPECT_FALSE(parse_ok("overlap_grad_reduce=0,gbs=8").overlap);
  EXPECT_EQ(parse_err("overlap=1,overlap_grad_reduce=0,gbs=8"), "--plan: key 'overlap_grad_reduce': given more than once");
  EXPECT_EQ(parse_err("cp_comm=ring,gbs=8"), "--plan: key 'cp_comm': expected one of p2p | a2a | allgather, got 'ring'");
  EXPECT_EQ(parse_err("first_stage_layers=-1,gbs=8"),
            "--plan: key 'first_stage_layers': expected a non-negative integer, got '-1'");
}

TEST(PlanValidate, ContextParallelRules) {
  const ModelSpec m = catalog("llama3-8b");  // 32 heads, 8 kv heads, seq 8192
  EXPECT_EQ(invalid(parse_ok("cp=3,gbs=8"), m, 0),
            "plan: cp: cp=3 needs 2*cp to divide seq_len=8192 (load-balanced causal split)");
  EXPECT_EQ(invalid(parse_ok("tp=8,cp=8,cp_comm=a2a,gbs=8"), m, 0),
            "plan: cp_comm: cp_comm=a2a needs tp*cp to divide heads: tp=8, cp=8, heads=32");
  EXPECT_TRUE(validate(parse_ok("tp=8,cp=4,cp_comm=a2a,gbs=8"), m, 0).has_value());
  // 8192 / cp 4 = 2048 tokens per CP rank, divisible by tp=8 for sp.
  EXPECT_TRUE(validate(parse_ok("tp=8,cp=4,sp=1,gbs=8"), m, 32).has_value());
  EXPECT_EQ(invalid(parse_ok("tp=8,cp=4,dp=2,gbs=8"), m, 32), "plan: dp: tp*cp*pp*dp=64 exceeds the 32 GPUs available");
}

TEST(PlanValidate, PrecisionAndOverlapFlagsFollowMegatronArgumentChecks) {
  const ModelSpec m = catalog("llama3-8b");
  EXPECT_EQ(invalid(parse_ok("fp8_params=1,gbs=8"), m, 0), "plan: fp8_params: fp8_params=true needs precision=fp8");
  EXPECT_EQ(invalid(parse_ok("fp8_recipe=blockwise,gbs=8"), m, 0),
            "plan: fp8_recipe: fp8_recipe=blockwise needs precision=fp8");
  EXPECT_EQ(invalid(parse_ok("dp=2,overlap_param_gather=1,gbs=8"), m, 0),
            "plan: overlap_param_gather: overlap_param_gather=true needs the distributed optimizer (zero >= 1), got zero=0");
  EXPECT_EQ(invalid(parse_ok("dp=2,zero=1,overlap_param_gather=1,overlap_grad_reduce=0,gbs=8"), m, 0),
            "plan: overlap_param_gather: overlap_param_gather=true needs overlap_grad_reduce=true (Megatron-LM rule)");
  EXPECT_EQ(invalid(parse_ok("tp=2,tp_comm_overlap=1,gbs=8"), m, 0),
            "plan: tp_comm_overlap: tp_comm_overlap=true needs sp=true (Megatron-LM rule: TP overlap runs on the "
            "sequence-parallel all-gathers and reduce-scatters)");
  EXPECT_TRUE(validate(parse_ok("tp=2,sp=1,tp_comm_overlap=1,dp=2,zero=1,overlap_param_gather=1,precision=fp8,"
                                "fp8_recipe=tensorwise,fp8_params=1,gbs=8"),
                       m, 0)
                  .has_value());
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
