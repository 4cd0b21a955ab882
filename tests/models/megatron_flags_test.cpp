// Tests for reading Megatron-LM command lines into plans: the flags read, Megatron's defaults, the world
// size, ignored flags, files with line continuations, and contradictions rejected naming the flag.
#include "scalescope/models/megatron_flags.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace scalescope::models {
namespace {

ModelSpec llama70b() { return load_model_by_name_or_path("llama3-70b").value(); }

std::string error_of(std::string_view flags, const ModelSpec& m, int world = 0) {
  auto r = plan_from_megatron(flags, m, world);
  EXPECT_FALSE(r.has_value()) << flags;
  return r ? "" : r.error().str();
}

const char* kNemo70b =
    "torchrun --nnodes 8 --nproc-per-node 8 pretrain_gpt.py --tensor-model-parallel-size 4 "
    "--pipeline-model-parallel-size 4 --context-parallel-size 2 --virtual-pipeline-model-parallel-size 5 "
    "--sequence-parallel --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather --tp-comm-overlap "
    "--micro-batch-size 1 --global-batch-size 128 --bf16 --fp8-format hybrid --fp8-recipe tensorwise "
    "--num-layers 80 --hidden-size 8192 --num-attention-heads 64 --group-query-attention --num-query-groups 8 "
    "--ffn-hidden-size 28672 --seq-length 8192 --swiglu --normalization RMSNorm --untie-embeddings-and-output-weights "
    "--lr 3e-4 --data-path /data/x";

TEST(MegatronFlags, ReadsANemoLlama70bCommandLine) {
  auto r = plan_from_megatron(kNemo70b, llama70b(), 0);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  const Plan& p = r->plan;
  // World 8 x 8 = 64 GPUs, dp = 64 / (tp 4 x cp 2 x pp 4) = 2.
  EXPECT_EQ(r->world, 64);
  EXPECT_EQ(p.tp, 4);
  EXPECT_EQ(p.pp, 4);
  EXPECT_EQ(p.cp, 2);
  EXPECT_EQ(p.dp, 2);
  EXPECT_EQ(p.vpp, 5);
  EXPECT_EQ(p.schedule, Schedule::interleaved);
  EXPECT_EQ(p.gbs, 128);
  EXPECT_TRUE(p.sp && p.overlap && p.overlap_param_gather && p.tp_comm_overlap);
  EXPECT_EQ(p.zero, 1);
  EXPECT_EQ(p.precision, Precision::fp8);
  EXPECT_EQ(p.fp8_recipe, Fp8Recipe::tensorwise);
  EXPECT_TRUE(p.grad_reduce_in_fp32);  // Megatron-LM reduces bf16 gradients in fp32
  // Megatron-Core's default bucket with --overlap-grad-reduce: max(40M, 1M x dp x cp) = 40M elements of 4 B.
  EXPECT_DOUBLE_EQ(p.bucket_MB, 40e6 * 4.0 / (1024.0 * 1024.0));
  EXPECT_EQ(r->ignored, (std::vector<std::string>{"torchrun", "pretrain_gpt.py", "--lr 3e-4", "--data-path /data/x"}));
}

TEST(MegatronFlags, MegatronDefaultsAndTheCallersWorldSize) {
  // No overlap flags: Megatron-LM does not overlap, and without --overlap-grad-reduce one bucket.
  auto r = plan_from_megatron("--tensor-model-parallel-size 8 --bf16 --micro-batch-size 2", llama70b(), 32);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_FALSE(r->plan.overlap);
  EXPECT_EQ(r->plan.dp, 4);
  EXPECT_EQ(r->plan.gbs, 8);  // default gbs = mbs x dp
  EXPECT_GT(r->plan.bucket_MB, 1e6);
  EXPECT_EQ(r->plan.precision, Precision::mixed);
  EXPECT_EQ(error_of("--tensor-model-parallel-size 8 --bf16", llama70b()),
            "--plan-from-megatron: --nnodes: the world size is unknown: give --nnodes and --nproc-per-node, or --gpus");
}

TEST(MegatronFlags, ContradictionsAreRejectedNamingTheFlag) {
  const ModelSpec m = llama70b();
  EXPECT_EQ(error_of("--num-layers 32 --bf16", m, 8), "--plan-from-megatron: --num-layers: 32 contradicts the model's layers=80 (llama3-70b)");
  EXPECT_EQ(error_of("--bf16 --fp16", m, 8), "--plan-from-megatron: --fp16: --fp16 and --bf16 both given");
  EXPECT_EQ(error_of("--bf16 --num-layers 80", m, 8),
            "--plan-from-megatron: --swiglu: missing, but the model's ffn is swiglu (llama3-70b)");
  EXPECT_EQ(error_of("--bf16 --overlap-param-gather --overlap-grad-reduce", m, 8),
            "--plan-from-megatron: --overlap-param-gather: overlap_param_gather=true needs the distributed optimizer "
            "(zero >= 1), got zero=0");
  EXPECT_EQ(error_of("--bf16 --tensor-model-parallel-size 3", m, 12),
            "--plan-from-megatron: --tensor-model-parallel-size: tp=3 does not divide heads=64");
  EXPECT_EQ(error_of("--bf16 --tensor-model-parallel-size 8 --tensor-model-parallel-size 4", m, 8),
            "--plan-from-megatron: --tensor-model-parallel-size: given more than once");
  EXPECT_EQ(error_of("--bf16 --swiglu --num-layers 80", load_model_by_name_or_path("gpt3-175b").value(), 8),
            "--plan-from-megatron: --num-layers: 80 contradicts the model's layers=96 (gpt3-175b)");
}

TEST(MegatronFlags, DropoutFlagsMustAgreeWithTheModelAndTheirDefaultIsNoted) {
  // Megatron-LM's --attention-dropout and --hidden-dropout default to 0.1. Given, they must equal the model's keys;
  // absent where the flags describe the model (--num-layers), the default is noted when the model differs.
  const ModelSpec m = llama70b();  // no dropout
  const std::string model_flags = std::string(kNemo70b);
  auto quiet = plan_from_megatron(model_flags + " --attention-dropout 0.0 --hidden-dropout 0", m, 0);
  ASSERT_TRUE(quiet.has_value()) << quiet.error().str();
  for (const std::string& n : quiet->notes) EXPECT_EQ(n.find("dropout"), std::string::npos) << n;
  auto noted = plan_from_megatron(model_flags, m, 0);
  ASSERT_TRUE(noted.has_value()) << noted.error().str();
  int dropout_notes = 0;
  for (const std::string& n : noted->notes) dropout_notes += n.find("-dropout absent") != std::string::npos;
  EXPECT_EQ(dropout_notes, 2);
  EXPECT_EQ(error_of(model_flags + " --attention-dropout 0.1", m),
            "--plan-from-megatron: --attention-dropout: 0.1 contradicts the model's attention_dropout=0 (llama3-70b): "
            "set attention_dropout in the model");
  EXPECT_EQ(error_of(model_flags + " --hidden-dropout 1.5", m),
            "--plan-from-megatron: --hidden-dropout: expected a dropout probability in [0, 1), got '1.5'");
  ModelSpec gpt = m;
  gpt.attention_dropout = gpt.hidden_dropout = 0.1;
  auto agree = plan_from_megatron(model_flags, gpt, 0);  // Megatron's defaults are the model's
  ASSERT_TRUE(agree.has_value()) << agree.error().str();
  for (const std::string& n : agree->notes) EXPECT_EQ(n.find("dropout"), std::string::npos) << n;
}

TEST(MegatronFlags, UnevenStagesAndFilesWithContinuations) {
  const auto dir = std::filesystem::temp_directory_path() / "scalescope_megatron_flags_test";
  std::filesystem::create_directories(dir);
  const auto f = dir / "train.sh";
  std::ofstream(f) << "# a launcher script\n"
                      "torchrun --nnodes=3 --nproc-per-node=4 pretrain_gpt.py \\\n"
                      "  --pipeline-model-parallel-size 12 --decoder-first-pipeline-num-layers 5 \\\n"
                      "  --decoder-last-pipeline-num-layers 5  # BLOOM-style\n"
                      "  --bf16 --recompute-granularity full --recompute-method block --recompute-num-layers 2\n";
  ModelSpec m = llama70b();
  m.layers = 70;
  auto r = plan_from_megatron(f.string(), m, 0);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_EQ(r->plan.pp, 12);
  EXPECT_EQ(r->world, 12);
  EXPECT_EQ(error_of("--bf16 --nnodes 2 --nproc-per-node 8 --pipeline-model-parallel-size 12", llama70b()),
            "--plan-from-megatron: --nnodes: the world size 16 is not a multiple of tp*cp*pp=12");
  EXPECT_EQ(r->plan.first_stage_layers, 5);
  EXPECT_EQ(r->plan.last_stage_layers, 5);
  EXPECT_EQ(r->plan.recompute, Recompute::full);
  ASSERT_EQ(r->notes.size(), 1u);  // block recompute of 2 of the 5-6 layers of a chunk: noted
  EXPECT_NE(r->notes[0].find("--recompute-num-layers 2"), std::string::npos);
  EXPECT_EQ(error_of("--bf16 --pipeline-model-parallel-size 12 --decoder-first-pipeline-num-layers 5", m, 12).rfind(
                "--plan-from-megatron: --decoder-first-pipeline-num-layers: first_stage_layers=5,last_stage_layers=0 "
                "leaves 65 layers for 11 middle stage(s)",
                0),
            0u);
}

TEST(MegatronFlags, CrossEntropyFusionAndItsImplementation) {
  // Megatron-Core: unfused unless --cross-entropy-loss-fusion; then --cross-entropy-fusion-impl, default native.
  auto plan_of = [](const std::string& extra) {
    auto r = plan_from_megatron("--tensor-model-parallel-size 8 --bf16 " + extra, llama70b(), 8);
    EXPECT_TRUE(r.has_value()) << (r ? "" : r.error().str());
    return r ? r->plan.cross_entropy_fusion : CrossEntropyFusion::none;
  };
  EXPECT_EQ(plan_of(""), CrossEntropyFusion::none);
  EXPECT_EQ(plan_of("--cross-entropy-fusion-impl te"), CrossEntropyFusion::none);  // ignored without the fusion
  EXPECT_EQ(plan_of("--cross-entropy-loss-fusion"), CrossEntropyFusion::native);
  EXPECT_EQ(plan_of("--cross-entropy-loss-fusion --cross-entropy-fusion-impl te"), CrossEntropyFusion::te);
  EXPECT_EQ(error_of("--bf16 --cross-entropy-loss-fusion --cross-entropy-fusion-impl triton", llama70b(), 8),
            "--plan-from-megatron: --cross-entropy-fusion-impl: expected native or te, got 'triton'");
}

TEST(MegatronFlags, EveryPlanKeyHasItsFlag) {
  for (const auto& key : {"tp", "pp", "cp", "cp_comm", "vpp", "mbs", "gbs", "sp", "zero", "overlap_grad_reduce",
                          "overlap_param_gather", "tp_comm_overlap", "first_stage_layers", "pp_layout"}) {
    EXPECT_FALSE(megatron_flag_of(key).empty()) << key;
  }
  EXPECT_EQ(megatron_flag_of("pp"), "--pipeline-model-parallel-size");
}

}  // namespace
}  // namespace scalescope::models
