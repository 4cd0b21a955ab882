// Tests for the dense-stack features against hand-derived numbers: FP8 GEMM rates and cast bytes, FP8 and
// context-parallel memory, context-parallel attention FLOPs and exchange bytes, and what the builder emits
// for cp, tp_comm_overlap, Megatron's overlapped distributed optimizer and uneven pipelines.
#include <gtest/gtest.h>

#include "model_fixtures.hpp"

#include "datasheet_rig.hpp"

#include <algorithm>
#include <set>
#include <string>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/memory.hpp"
#include "scalescope/models/plan_costs.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope::models {
namespace {

using testing::plan;

using Rig = testing::DatasheetRig;

Rig h100_node() { return Rig(load_cluster_by_name_or_path("dgx-h100-8").value()); }

// Llama-3-8B's shape with a short sequence (h 4096, 32 heads of 128, 8 KV heads, ffn 14336 SwiGLU).
ModelSpec llama8b(int layers = 32, int seq = 8192) {
  ModelSpec s = load_model_by_name_or_path("llama3-8b").value();
  s.layers = layers;
  s.seq_len = seq;
  return s;
}

struct Built {
  TaskGraph graph;
  SimResult sim;
};
Built run(const Rig& r, const ModelSpec& m, const Plan& p, BuildOptions o = {}) {
  auto g = build_task_graph(m, p, r.cluster, r.compute, o);
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().str());
  SimOptions so;
  so.record_task_times = true;
  auto s = simulate(*g, r.cluster, r.coll, so);
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().str());
  return {std::move(g).value(), std::move(s).value()};
}

TEST(Fp8, GemmsRunAtTheFp8Peak) {
  // Datasheet roofline: t = 2 m n k / (P_fp8 x 0.63) with P_fp8 = 1,978.9 TFLOP/s (H100 SXM dense) and the
  // assumed FP8 efficiency (ComputeAssumptions::fp8_gemm_efficiency; bf16 at 0.75 of 989.4); the
  // operand bytes (1 B each, 3 x 8192^2 = 201 MB at 0.85 x 3.35 TB/s = 71 us) are far below.
  const Rig r = h100_node();
  const double f = 2.0 * 8192.0 * 8192.0 * 8192.0;
  EXPECT_NEAR(r.compute.gemm(8192, 8192, 8192, "fp8").time.value, f / (1978.9e12 * 0.63), 1e-9);
  EXPECT_NEAR(r.compute.gemm(8192, 8192, 8192, "bf16").time.value, f / (989.4e12 * 0.75), 1e-9);
}

TEST(Fp8, FastAccumulationFromTheProfilesFastRowsElseTheH200Median) {
  // A profile with 4096^3 measured both ways, split 100 us and fast 80 us: the fast row prices fp8_fast exactly and
  // the split row fp8; 8192^3, with a split row only, takes the fast rows' rate.
  const GpuSpec g = load_cluster_by_name_or_path("dgx-h100-8").value().gpu_spec();
  ComputeProfile p;
  p.source = "fast.json";
  p.gemms.push_back({"fp8_e4m3", 4096, 4096, 4096, microseconds(100)});
  p.gemms.push_back({"fp8_e4m3_fast", 4096, 4096, 4096, microseconds(80)});
  p.gemms.push_back({"fp8_e4m3", 8192, 8192, 8192, microseconds(700)});
  const ComputeModel both = ComputeModel::with_profile(g, p).value();
  EXPECT_DOUBLE_EQ(both.gemm(4096, 4096, 4096, "fp8_fast").time.value, 80e-6);
  EXPECT_DOUBLE_EQ(both.gemm(4096, 4096, 4096, "fp8").time.value, 100e-6);
  // With fast rows the fast shapes interpolate among themselves (the one row's rate, 2 x 8192^3 / (8 x 80 us)).
  EXPECT_NEAR(both.gemm(8192, 8192, 8192, "fp8_fast").time.value, 8.0 * 80e-6, 1e-12);
  p.gemms.erase(p.gemms.begin() + 1);  // split rows only: the built-in 1.054 (validation/session32)
  const ComputeModel split = ComputeModel::with_profile(g, p).value();
  EXPECT_DOUBLE_EQ(split.gemm(8192, 8192, 8192, "fp8_fast").time.value, 700e-6 / 1.054);
  const auto in = split.inputs();
  EXPECT_TRUE(std::any_of(in.begin(), in.end(), [](const SourcedValue& v) {
    return v.name == "fp8_fast_accumulation_speedup" && v.value == 1.054;
  }));
}

TEST(Fp8, FusedStackRunsTheForwardGemmsWithFastAccumulation) {
  // Transformer Engine's delayed and current-scaling recipes: fprop fast, dgrad and wgrad split. On the datasheet
  // the forward GEMMs are 1.054x faster, the backward the same; blockwise scaling and a stack without
  // fp8_fast_fprop keep split accumulation everywhere.
  const Rig r = h100_node();
  const ModelSpec m = llama8b(2, 2048);
  Json doc = builtin_stack_document("fused").value();
  doc["properties"]["fp8_fast_fprop"] = false;
  ComputeModel eager = r.compute;
  eager.set_stack(std::make_shared<const StackProfile>(stack_from_json(doc, "fused-split.json").value()));
  auto gemm_time = [&](const ComputeModel& c, const std::string& text, bool backward) {
    const PlanPieceCosts k = plan_piece_costs(m, plan(text), c, CostOptions{});
    return (backward ? k.layer.backward : k.layer.forward).by_kind[0].value;  // GEMM kernels only
  };
  // (by_kind[0] also holds delayed scaling's amax-update kernel, a launch without FLOPs: compare tensorwise.)
  const std::string cs = "precision=fp8,fp8_recipe=tensorwise,gbs=4";
  EXPECT_NEAR(gemm_time(eager, cs, false) / gemm_time(r.compute, cs, false), 1.054, 1e-9);
  EXPECT_DOUBLE_EQ(gemm_time(r.compute, cs, true), gemm_time(eager, cs, true));
  const std::string delayed = "precision=fp8,gbs=4";
  EXPECT_NEAR(gemm_time(eager, delayed, false) - gemm_time(r.compute, delayed, false),
              gemm_time(eager, cs, false) - gemm_time(r.compute, cs, false), 1e-15);
  EXPECT_DOUBLE_EQ(gemm_time(r.compute, delayed, true), gemm_time(eager, delayed, true));
  const std::string blockwise = "precision=fp8,fp8_recipe=blockwise,gbs=4";
  EXPECT_DOUBLE_EQ(gemm_time(r.compute, blockwise, false), gemm_time(eager, blockwise, false));
}

TEST(Fp8, DelayedScalingCastBytesOfOneLayer) {
  // t = 8192 tokens, h = q = 4096, k = 1024, f = 14336 (F1 = 2f, SwiGLU), tp = 1, m = 4 micro-batches.
  // Linear weights W = h (q + 2k) + q h + h 2f + f h = 4096 x 53,248 = 218,103,808.
  // Forward: qkv and fc1 inputs 2 B/elem (norm-fused cast: transposes only), out-proj and fc2 inputs
  //   4 B/elem, weights 4 B/param / m: 2 th + 4 tq + 2 th + 4 tf + W = 8 x 33,554,432 + 469,762,048
  //   + 218,103,808 = 956,301,312 B.
  // Backward: 4 B/elem of each output gradient: 4 th (fc2) + 4 t 2f (fc1) + 4 th (out-proj) + 4 t (q + 2k)
  //   = 134,217,728 + 939,524,096 + 134,217,728 + 201,326,592 = 1,409,286,144 B.
  const Rig r = h100_node();
  const LayerCost c = fp8_layer_cost(llama8b(), plan("precision=fp8,gbs=4"), r.compute, 4);
  EXPECT_DOUBLE_EQ(c.forward.bytes.value, 956301312.0);
  EXPECT_DOUBLE_EQ(c.backward.bytes.value, 1409286144.0);
  // fp8_params: no weight cast (-W); tensorwise: +2 B/elem amax pass on every cast and no norm fusion.
  EXPECT_DOUBLE_EQ(fp8_layer_cost(llama8b(), plan("precision=fp8,fp8_params=1,gbs=4"), r.compute, 4).forward.bytes.value,
                   956301312.0 - 218103808.0);
  // tensorwise forward: 6 B/elem x (th + tq + th + tf) + 6 B/param W / 4 = 6 x 218,103,808 + 327,155,712.
  EXPECT_DOUBLE_EQ(fp8_layer_cost(llama8b(), plan("precision=fp8,fp8_recipe=tensorwise,gbs=4"), r.compute, 4)
                       .forward.bytes.value,
                   6.0 * 218103808.0 + 327155712.0);
  EXPECT_EQ(fp8_layer_cost(llama8b(), plan("gbs=4"), r.compute, 4).forward.kernels, 0);
}

TEST(Fp8, RoutedExpertCastsAreOneKernelPerLocalExpert) {
  // Qwen3-30B-A3B's MoE layer (128 experts, no shared expert), current scaling, m = 4 micro-batches. Transformer
  // Engine's grouped linear quantizes each local expert apart (split_quantize; 102 amax kernels a layer with 16
  // local experts in validation/session40's trace), each part an amax kernel then a cast kernel:
  //   backward: attention's out-proj and qkv output gradients, one kernel each (2), and the routed fc2 and fc1
  //     output gradients, E_r parts x 2 kernels each (4 E_r): ep 8 -> E_r 16 -> 66; ep 128 -> E_r 1 -> one kernel
  //     per tensor as a dense linear: 2 + 2 = 4.
  //   forward: 2 (qkv and out-proj inputs) + 4 E_r (fc1 and fc2 inputs) + 1 (the attention weights, amortized) +
  //     2 E_r x 2 kernels of the experts' weights, once per step: 4 E_r / m -> 2 + 64 + 1 + 16 = 83 at ep 8.
  // The split changes the kernels, not the bytes: the token copies x = T top_k do not depend on ep.
  const Rig r = h100_node();
  ModelSpec m = load_model_by_name_or_path("qwen3-30b-a3b").value();
  m.seq_len = 4096;
  const Plan ep8 = plan("precision=fp8,fp8_recipe=tensorwise,ep=8,gbs=4");
  const Plan ep128 = plan("precision=fp8,fp8_recipe=tensorwise,ep=128,gbs=4");
  const LayerCost split = fp8_layer_cost(m, ep8, r.compute, 4, true);
  const LayerCost whole = fp8_layer_cost(m, ep128, r.compute, 4, true);
  EXPECT_EQ(split.backward.kernels, 66);
  EXPECT_EQ(whole.backward.kernels, 4);
  EXPECT_EQ(split.forward.kernels, 83);
  EXPECT_DOUBLE_EQ(split.backward.bytes.value, whole.backward.bytes.value);
  EXPECT_GT(split.backward.time.value, whole.backward.time.value);
}

TEST(Fp8, MemoryAddsWeightCopiesAndSavesLinearInputs) {
  // One stage of 32 layers, tp = 1: FP8 copy + transpose = 2 B per linear weight: 2 x 32 x 218,103,808.
  // Activations (flash, no recompute, no sp), per layer and micro-batch: the qkv and fc1 inputs shrink by
  // 2sbh, the out-proj input by sbq and the fc2 input by sbf: 8192 x (2 x 4096 + 4096 + 14336) B.
  const ModelSpec m = llama8b();
  MemoryOptions o;
  o.flash_attention = true;
  o.dropout = false;
  const MemoryBreakdown bf16 = peak_memory(m, plan("gbs=1"), o);
  const MemoryBreakdown fp8 = peak_memory(m, plan("precision=fp8,gbs=1"), o);
  EXPECT_DOUBLE_EQ(fp8.weights.value - bf16.weights.value, 2.0 * 32.0 * 218103808.0);
  EXPECT_DOUBLE_EQ(bf16.activations.value - fp8.activations.value, 32.0 * 8192.0 * (2.0 * 4096 + 4096 + 14336));
  // fp8_params: the FP8 weight and its transpose replace the bf16 weight (2 B either way).
  EXPECT_DOUBLE_EQ(peak_memory(m, plan("precision=fp8,fp8_params=1,gbs=1"), o).weights.value, bf16.weights.value);
}

// The fused stack's cross entropy per logit, counted from Megatron-Core 0.16.1 and Transformer Engine 2.20.2's code:
// none (vocab_parallel_cross_entropy): forward fp32 cast 2+4, max 4, subtract 4+4, exp 4+4, sum 4, divide 4+4 = 38
// bytes in 6 kernels, backward scale 4+4 and bf16 cast 4+2 = 14 in 2; native (torch.compile'd): cast+max 6,
// subtract+exp+sum 8, divide 8 = 22 in 3, backward 4+2 = 6 in 1; te: read 2, gradient written over the logits 2 = 4
// each way, one kernel each. Kept for the backward: fp32 logits (4 bytes), te the bf16 logits (2).
TEST(Fp8, CrossEntropyFusionBytesPerLogit) {
  const ModelSpec m = llama8b(2, 1024);
  const auto stack = load_stack("fused").value();
  auto row = [&](StackPhase ph, const std::string& name) -> const StackRow& {
    for (const StackRow& r : stack->phases[static_cast<std::size_t>(ph)])
      if (r.name == name) return r;
    ADD_FAILURE() << name;
    return stack->phases[static_cast<std::size_t>(ph)].front();
  };
  const StackRow& fwd = row(StackPhase::head_forward, "vocab-parallel cross entropy");
  const StackRow& bwd = row(StackPhase::head_backward, "cross entropy backward");
  const double logits = 1024.0 * 128256;  // T x V: 128256 is a multiple of 128, so unpadded
  struct Want {
    CrossEntropyFusion c;
    double fwd_bytes, bwd_bytes, fwd_kernels, bwd_kernels, kept_bytes;
  };
  for (const Want& w : {Want{CrossEntropyFusion::none, 38, 14, 6, 2, 4}, Want{CrossEntropyFusion::native, 22, 6, 3, 1, 4},
                        Want{CrossEntropyFusion::te, 4, 4, 1, 1, 2}}) {
    Plan p = plan("mbs=1,gbs=1");
    p.cross_entropy_fusion = w.c;
    const std::vector<double> v = stack->bind(m, p, true, false, 128);
    SCOPED_TRACE(std::string(to_string(w.c)));
    EXPECT_DOUBLE_EQ(fwd.bytes.eval(v), w.fwd_bytes * logits);
    EXPECT_DOUBLE_EQ(bwd.bytes.eval(v), w.bwd_bytes * logits);
    EXPECT_DOUBLE_EQ(fwd.kernels.eval(v), w.fwd_kernels);
    EXPECT_DOUBLE_EQ(bwd.kernels.eval(v), w.bwd_kernels);
    // The last stage's logits buffer for one micro-batch in flight: 4 T H (the final norm's output) + kept logits.
    StackProfile::StageValues st;
    st.last = true;
    st.inflight = 1;
    const std::vector<double> mv = stack->bind_memory(v, st);
    EXPECT_DOUBLE_EQ(stack->memory.embedding_logits.eval(mv), 4.0 * 1024 * 4096 + w.kept_bytes * logits);
  }
}

TEST(ContextParallel, RankAttentionIsTheCausalAttentionOfTheSequenceOverCp) {
  // b = 1, H = 32 heads, d = 128, s = 8192, cp = 4: step 0 is the causal attention of s/cp = 2048 tokens,
  // 4 b H d 2048^2 / 2 = 34,359,738,368 FLOPs; steps 1..3 each 4 b H d s^2 / (2 cp^2) = 34,359,738,368;
  // together 137,438,953,472 = (4 b H d s^2 / 2) / cp.
  const Rig r = h100_node();
  const ModelSpec m = llama8b();
  const Plan p = plan("cp=4,gbs=1");
  const PlanPieceCosts pc = plan_piece_costs(m, p, r.compute);
  EXPECT_DOUBLE_EQ(pc.cp.blocks.forward.flops, 3.0 * 34359738368.0);
  EXPECT_DOUBLE_EQ(pc.cp.blocks.backward.flops, 2.5 * 3.0 * 34359738368.0);
  const double full_causal = 4.0 * 32 * 128 * 8192.0 * 8192.0 / 2.0;
  const ModelSpec local = cp_rank_spec(m, p);
  EXPECT_EQ(local.seq_len, 2048);
  AttentionShape own{1, 32, 8, 128, 2048, true};
  EXPECT_DOUBLE_EQ(own.forward_flops() + pc.cp.blocks.forward.flops, full_causal / 4.0);
  // p2p: K and V of the rank (t = 2048 tokens, k = 1024, 2 B) per step; priced as an all-gather of cp of
  // them: 4 x 2 x 2048 x 1024 x 2 = 33,554,432 B; backward K/V and dK/dV: twice.
  EXPECT_EQ(pc.cp.exchange.forward_op, CollOp::all_gather);
  EXPECT_DOUBLE_EQ(pc.cp.exchange.forward_bytes.value, 33554432.0);
  EXPECT_DOUBLE_EQ(pc.cp.exchange.backward_bytes.value, 67108864.0);
  EXPECT_TRUE(pc.cp.exchange.overlapped);
  // allgather: the same all-gather exposed, dK/dV reduce-scattered. a2a: per-rank buffers t (2q + 2k) e =
  // 2048 x (8192 + 2048) x 2 = 41,943,040 B each way, exposed.
  const CpExchange ag = plan_piece_costs(m, plan("cp=4,cp_comm=allgather,gbs=1"), r.compute).cp.exchange;
  EXPECT_FALSE(ag.overlapped);
  EXPECT_EQ(ag.backward_op, CollOp::reduce_scatter);
  EXPECT_DOUBLE_EQ(ag.backward_bytes.value, 33554432.0);
  const CpExchange a2a = plan_piece_costs(m, plan("cp=4,cp_comm=a2a,gbs=1"), r.compute).cp.exchange;
  EXPECT_EQ(a2a.forward_op, CollOp::alltoall);
  EXPECT_DOUBLE_EQ(a2a.forward_bytes.value, 41943040.0);
}

TEST(ContextParallel, MemoryIsThatOfTheRankTokensAndStatesShardOverDpTimesCp) {
  // Flash attention, no recompute: every activation term is linear in s, so cp = 2 halves them; the
  // distributed optimizer shards its 12 B/param over dp x cp = 2 ranks.
  const ModelSpec m = llama8b();
  MemoryOptions o;
  o.flash_attention = true;
  o.dropout = false;
  const MemoryBreakdown one = peak_memory(m, plan("zero=1,gbs=1"), o);
  const MemoryBreakdown two = peak_memory(m, plan("cp=2,zero=1,gbs=1"), o);
  EXPECT_DOUBLE_EQ(two.activations.value, one.activations.value / 2.0);
  EXPECT_DOUBLE_EQ(two.optimizer.value, one.optimizer.value / 2.0);
  EXPECT_DOUBLE_EQ(two.weights.value, one.weights.value);
}

TEST(Builder, ContextParallelExchangeRunsOverTheCpGroupBesideTheBlocks) {
  // 4 layers, cp = 2 on ranks {0, 1} (tp = 1: CP ranks are adjacent). Gradients reduce over dp x cp = 2
  // ranks, so the last (only) micro-batch's backward is split per layer: one exchange for the merged
  // forward unit and one per layer backward, all on stream 7, all on the CP group.
  const Rig r = h100_node();
  const Built b = run(r, llama8b(4), plan("cp=2,gbs=1"));
  int exchanges = 0;
  for (TaskId i = 0; i < b.graph.size(); ++i) {
    const Task& t = b.graph.task(i);
    if (t.category != TaskCategory::cp_comm) continue;
    ++exchanges;
    EXPECT_EQ(t.stream, kStreamCp);
    const auto g = b.graph.group(t.a);
    EXPECT_EQ(std::vector<int>(g.begin(), g.end()), (std::vector<int>{0, 1}));
  }
  EXPECT_EQ(exchanges, 1 + 4);
  bool dp_over_cp = false;
  for (const Task& t : b.graph.tasks()) {
    if (t.category == TaskCategory::dp_comm) {
      const auto g = b.graph.group(t.a);
      dp_over_cp = std::vector<int>(g.begin(), g.end()) == std::vector<int>{0, 1};
    }
  }
  EXPECT_TRUE(dp_over_cp) << "gradients are all-reduced over the dp x cp ranks";
  // The exchange hides under the attention blocks at least partly: the exposed CP time is below the
  // exchanges' total time.
  double exchange_busy = 0;
  for (const auto& rs : b.sim.ranks) exchange_busy = std::max(exchange_busy, rs.busy[static_cast<int>(TaskCategory::cp_comm)].value);
  EXPECT_LT(b.sim.breakdown[BreakdownPart::cp_comm].value, exchange_busy);
}

TEST(Builder, TpCommOverlapLeavesOnlyTheLastReduceScatterChunkExposed) {
  // tp = 2 with sp: per layer and pass 2 all-gathers and 2 reduce-scatters of S. With overlap they run on
  // stream 8 beside the compute and one reduce-scatter of (2 S) / tp waits on the compute stream per unit.
  const Rig r = h100_node();
  const ModelSpec m = llama8b(4, 4096);
  const Built plain = run(r, m, plan("tp=2,sp=1,gbs=1"));
  const Built over = run(r, m, plan("tp=2,sp=1,tp_comm_overlap=1,gbs=1"));
  double beside = 0;
  int beside_tasks = 0;
  for (const Task& t : over.graph.tasks()) {
    if (t.stream == kStreamTpOverlap) {
      beside += t.bytes().value;
      ++beside_tasks;
    }
  }
  // S = 1 x 4096 x 4096 x 2 = 33,554,432 B; forward and backward units each carry 4 layers x 4 S.
  EXPECT_DOUBLE_EQ(beside, 2.0 * 4 * 4 * 33554432.0);
  EXPECT_EQ(beside_tasks, 4);  // an all-gather and a reduce-scatter per unit, 2 units
  EXPECT_LT(over.sim.breakdown[BreakdownPart::sp_comm].value, 0.5 * plain.sim.breakdown[BreakdownPart::sp_comm].value);
  EXPECT_LT(over.sim.step_time.value, plain.sim.step_time.value);
}

TEST(Builder, DistributedOptimizerOverlapsReduceScatterAndParameterGather) {
  // zero = 1, dp = 2, 4 micro-batches. Without overlap_grad_reduce the reduce-scatters start after the
  // last backward; with it, the first starts before (the bucket of the last layers closes early).
  const Rig r = h100_node();
  const ModelSpec m = llama8b(8, 4096);
  auto first_rs_before_last_backward = [&](const Built& b) {
    double first_rs = 1e300, last_bwd = 0;
    for (TaskId i = 0; i < b.graph.size(); ++i) {
      const Task& t = b.graph.task(i);
      const auto& tt = b.sim.task_times[i];
      if (t.kind == TaskKind::collective && t.op == CollOp::reduce_scatter && t.category == TaskCategory::zero_comm)
        first_rs = std::min(first_rs, static_cast<double>(tt.start));
      if (t.category == TaskCategory::backward) last_bwd = std::max(last_bwd, static_cast<double>(tt.end));
    }
    return first_rs < last_bwd;
  };
  const Built after = run(r, m, plan("dp=2,zero=1,mbs=1,gbs=8,overlap_grad_reduce=0,bucket_MB=100"));
  const Built during = run(r, m, plan("dp=2,zero=1,mbs=1,gbs=8,bucket_MB=100"));
  EXPECT_FALSE(first_rs_before_last_backward(after));
  EXPECT_TRUE(first_rs_before_last_backward(during));
  EXPECT_LE(during.sim.breakdown[BreakdownPart::zero_comm].value, after.sim.breakdown[BreakdownPart::zero_comm].value);
  // overlap_param_gather: the parameter all-gathers run on stream 6 from the start of the first forward,
  // one per bucket (bf16: the buckets' gradient bytes / 2), none after the optimizer step.
  const Built ahead = run(r, m, plan("dp=2,zero=1,mbs=1,gbs=8,bucket_MB=100,overlap_param_gather=1"));
  int gathers_on_6 = 0, gathers_elsewhere = 0;
  for (const Task& t : ahead.graph.tasks()) {
    if (t.kind != TaskKind::collective || t.op != CollOp::all_gather) continue;
    (t.stream == kStreamZeroGather ? gathers_on_6 : gathers_elsewhere)++;
  }
  int reduce_scatters = 0;
  for (const Task& t : during.graph.tasks()) reduce_scatters += t.kind == TaskKind::collective && t.op == CollOp::reduce_scatter;
  EXPECT_EQ(gathers_on_6, reduce_scatters);
  EXPECT_EQ(gathers_elsewhere, 0);
  EXPECT_LT(ahead.sim.step_time.value, during.sim.step_time.value);
}

TEST(Builder, UnevenPipelinePutsTheGivenLayersOnEachStage) {
  // 32 layers on pp = 4 with 5 first and 9 last: 9 per middle stage. Layer labels of the forward tasks
  // per stage (per-layer tasks): stage 0 layers 0..4, stage 1 5..13, stage 2 14..22, stage 3 23..31.
  const Rig r = h100_node();
  BuildOptions o;
  o.per_layer_tasks = true;
  const Built b = run(r, llama8b(32, 2048), plan("pp=4,first_stage_layers=5,last_stage_layers=9,gbs=4"), o);
  std::vector<std::set<int>> layers(4);
  for (const Task& t : b.graph.tasks()) {
    if (t.category == TaskCategory::forward && t.labels.layer >= 0) layers[static_cast<std::size_t>(t.labels.stage)].insert(t.labels.layer);
  }
  EXPECT_EQ(layers[0].size(), 5u);
  EXPECT_EQ(*layers[0].rbegin(), 4);
  EXPECT_EQ(layers[1].size(), 9u);
  EXPECT_EQ(*layers[1].begin(), 5);
  EXPECT_EQ(layers[3].size(), 9u);
  EXPECT_EQ(*layers[3].begin(), 23);
}

TEST(Builder, RanksFollowMegatronOrderTpCpDpPp) {
  // tp = 2, cp = 2, dp = 2, pp = 2: rank = tp_rank + 2 (cp_rank + 2 (dp_rank + 2 stage)).
  const Plan p = plan("tp=2,cp=2,dp=2,pp=2,gbs=2");
  EXPECT_EQ(plan_rank(p, 0, 0, 1, 0), 1);
  EXPECT_EQ(plan_rank(p, 0, 0, 0, 1), 2);
  EXPECT_EQ(plan_rank(p, 0, 1, 0, 0), 4);
  EXPECT_EQ(plan_rank(p, 1, 0, 0, 0), 8);
  EXPECT_EQ(plan_rank(p, 1, 1, 1, 1), 15);
}

}  // namespace
}  // namespace scalescope::models
