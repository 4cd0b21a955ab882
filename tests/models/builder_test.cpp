// Tests for the plan -> task-graph builder against hand-derived step times and traffic: DP-only with
// an exposed last bucket, GPipe and 1F1B bubbles, TP collectives per layer, ZeRO-3 vs DDP traffic,
// the pipeline schedules' orders, and the eager (PyTorch) TP byte widths and FSDP2 structure.
#include <gtest/gtest.h>

#include "model_fixtures.hpp"

#include "scalescope/models/stack_profile.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/counts.hpp"
#include "scalescope/models/memory.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope::models {
namespace {

using testing::plan;

struct Rig {
  Cluster cluster;
  CollectiveModel coll;
  ComputeModel compute;
  Rig(Cluster c, const ComputeAssumptions& a)
      : cluster(std::move(c)), coll(cluster, datasheet_collective_params()),
        compute(ComputeModel::datasheet(cluster.gpu_spec(), a).value()) {}
};

Rig one_node(const ComputeAssumptions& a = {}) {
  auto c = load_cluster_by_name_or_path("dgx-h100-8");
  EXPECT_TRUE(c.has_value());
  return Rig(std::move(c).value(), a);
}

ComputeAssumptions no_launch_overhead() {
  ComputeAssumptions a;
  a.launch_overhead = Seconds(0);
  return a;
}

// GPT-like: h = 2048, 16 heads, f = 4h, learned positions, vocabulary `vocab` (untied).
ModelSpec gpt(int layers, int vocab) {
  ModelSpec s;
  s.name = "test-gpt";
  s.layers = layers;
  s.hidden = 2048;
  s.heads = 16;
  s.kv_heads = 16;
  s.ffn_hidden = 8192;
  s.bias = true;
  s.vocab = vocab;
  s.seq_len = 2048;
  s.positional = Positional::learned;
  return s;
}

SimResult simulate_plan(const Rig& r, const ModelSpec& m, const Plan& p, BuildOptions o = {}) {
  auto g = build_task_graph(m, p, r.cluster, r.compute, o);
  EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().str());
  auto res = simulate(*g, r.cluster, r.coll);
  EXPECT_TRUE(res.has_value()) << (res ? "" : res.error().str());
  return std::move(res).value();
}

std::vector<int> ranks(int n) {
  std::vector<int> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

TEST(Builder, DataParallelStepIsComputePlusTheExposedLastBucket) {
  // 3 layers, dp = 8, mbs = 8 (m = 1), fp32 grads (precision mixed), bucket cap 300 MiB.
  // Grad sizes (count_params, x 4 bytes): layer 12h^2 + 13h = 50,358,272 params = 192.1 MiB;
  // head (LM head V h + final norm 2h) = 2,101,248 = 8.0 MiB; embedding (V + s) h = 6,291,456 = 24 MiB.
  // Backward order head, L2, L1, L0, embedding; a bucket closes once it holds >= 300 MiB:
  //   [head + L2 + L1] = 392.2 MiB launched after L1's backward, then [L0 + embedding] = 216.1 MiB
  //   launched after the embedding's backward, the last compute task.
  // If the first all-reduce ends before that (checked below), the step is
  //   forward + backward + all_reduce([L0 + embedding]) + optimizer step.
  const Rig r = one_node();
  const ModelSpec m = gpt(3, 1024);
  const Plan p = plan("dp=8,mbs=8,gbs=64,bucket_MB=300");
  const LayerCost lc = layer_cost(m, p, r.compute);
  const EdgeCost ec = edge_cost(m, p, r.compute);
  const ParamCounts pc = count_params(m);
  const double layer_bytes = 4.0 * static_cast<double>(pc.layer.total());
  const double head_bytes = 4.0 * static_cast<double>(pc.lm_head + pc.final_norm);
  const double emb_bytes = 4.0 * static_cast<double>(pc.embedding + pc.positions);
  const Seconds ar1 = r.coll.analytical(CollOp::all_reduce, ranks(8), Bytes(head_bytes + 2 * layer_bytes)).time;
  const Seconds ar2 = r.coll.analytical(CollOp::all_reduce, ranks(8), Bytes(layer_bytes + emb_bytes)).time;
  ASSERT_LT(ar1.value, (lc.backward.time + ec.embedding_backward.time).value);  // first bucket hidden

  const double fwd = 3 * lc.forward.time.value + ec.embedding_forward.time.value + ec.head_forward.time.value;
  const double bwd = 3 * lc.backward.time.value + ec.embedding_backward.time.value + ec.head_backward.time.value;
  const double opt = optimizer_cost(static_cast<double>(pc.total()), m, p, r.compute).time.value;
  const SimResult res = simulate_plan(r, m, p);
  EXPECT_NEAR(res.step_time.value, fwd + bwd + ar2.value + opt, 20e-9);  // whole-ns rounding per task
  EXPECT_NEAR(res.breakdown[BreakdownPart::dp_comm].value, ar2.value, 20e-9);
}

TEST(Builder, DataParallelWithOneBucketExposesTheWholeAllReduce) {
  // Same job with a bucket cap above all gradients: one all-reduce of 4 * total params bytes after the
  // backward, nothing overlapped.
  const Rig r = one_node();
  const ModelSpec m = gpt(3, 1024);
  const Plan p = plan("dp=8,mbs=8,gbs=64,bucket_MB=100000");
  const LayerCost lc = layer_cost(m, p, r.compute);
  const EdgeCost ec = edge_cost(m, p, r.compute);
  const double total = static_cast<double>(count_params(m).total());
  const double compute = 3 * (lc.forward.time + lc.backward.time).value + ec.embedding_forward.time.value +
                         ec.head_forward.time.value + ec.embedding_backward.time.value + ec.head_backward.time.value;
  const double ar = r.coll.analytical(CollOp::all_reduce, ranks(8), Bytes(4.0 * total)).time.value;
  const double opt = optimizer_cost(total, m, p, r.compute).time.value;
  EXPECT_NEAR(simulate_plan(r, m, p).step_time.value, compute + ar + opt, 20e-9);
}

// Pipeline of 4 stages x 2 layers, 8 micro-batches, vocabulary 128, no launch overhead. Stage times:
// forward f_s = 2 layers (+ embedding on stage 0, + LM head and loss on stage 3), backward b_s alike;
// c = one activation transfer (mbs * seq * h * 2 bytes) between neighbouring GPUs.
struct PipeCase {
  Rig r = one_node(no_launch_overhead());
  ModelSpec m = gpt(8, 128);
  std::vector<double> f, b;
  double c = 0, opt0 = 0;
  explicit PipeCase(const Plan& p) {
    const LayerCost lc = layer_cost(m, p, r.compute);
    const EdgeCost ec = edge_cost(m, p, r.compute);
    f.assign(4, 2 * lc.forward.time.value);
    b.assign(4, 2 * lc.backward.time.value);
    f[0] += ec.embedding_forward.time.value;
    b[0] += ec.embedding_backward.time.value;
    f[3] += ec.head_forward.time.value;
    b[3] += ec.head_backward.time.value;
    c = r.coll.analytical(CollOp::sendrecv, std::vector<int>{0, 1}, Bytes(1.0 * 2048 * 2048 * 2)).time.value;
    opt0 = optimizer_cost(static_cast<double>(params_per_stage(m, even_layout(m, 4), 0).total()), m, p, r.compute)
               .time.value;
  }
  static double sum(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); }
  static double max(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
  // m identical jobs through p stages in order (a flow shop; transfers are stages of their own, shorter
  // than any compute stage): the last one leaves after sum_s t_s + (p-1) c + (m-1) max_s t_s.
  double gpipe_step(int mb) const {
    const double tf = sum(f) + 3 * c + (mb - 1) * max(f);  // last stage ends its last forward
    const double tb = sum(b) + 3 * c + (mb - 1) * max(b);  // then the backwards drain to stage 0
    return tf + tb + opt0;                                   // stage 0 ends last and steps
  }
};

TEST(Builder, GpipeStepIsTheFlowShopOfForwardsThenBackwards) {
  // GPipe: every forward, then every backward. With equal stages this is
  //   (m + p - 1)(t_f + t_b) + 2 (p - 1) c + optimizer,
  // a bubble of (p - 1)/(m + p - 1) = 3/11 of the pipeline time; here the edge stages are ~2% longer,
  // so the flow-shop form with the slowest stage is used.
  const Plan p = plan("pp=4,mbs=1,gbs=8,schedule=gpipe");
  const PipeCase k(p);
  const SimResult res = simulate_plan(k.r, k.m, p);
  EXPECT_NEAR(res.step_time.value, k.gpipe_step(8), 50e-9);  // whole-ns rounding of ~40 tasks
  const double pipeline = res.step_time.value - k.opt0 - 2 * 3 * k.c;
  const double work = 8 * (PipeCase::max(k.f) + PipeCase::max(k.b));
  EXPECT_NEAR(1.0 - work / pipeline, 3.0 / 11.0, 0.01);
}

TEST(Builder, OneFOneBHasTheGpipeBubbleWithFewerMicrobatchesInFlight) {
  // 1F1B only reorders work inside the stages: the same fill and drain, so the same step time up to
  // the ~2% stage imbalance (Narayanan et al. 2021, section 2.2.1), while stage 0 keeps at most
  // p = 4 micro-batches' activations instead of m = 8.
  const Plan gp = plan("pp=4,mbs=1,gbs=8,schedule=gpipe");
  const Plan fb = plan("pp=4,mbs=1,gbs=8,schedule=1f1b");
  const PipeCase k(fb);
  const double f = simulate_plan(k.r, k.m, fb).step_time.value;
  EXPECT_NEAR(f / k.gpipe_step(8), 1.0, 0.01);
  EXPECT_LT(peak_memory(k.m, fb).total().value, peak_memory(k.m, gp).total().value);
}

int max_in_flight(const std::vector<ScheduleStep>& order) {
  int live = 0, peak = 0;
  for (const auto& s : order) {
    live += s.forward ? 1 : -1;
    peak = std::max(peak, live);
  }
  return peak;
}

// PyTorch's program for interleaved 1F1B, pp = 2, vpp = 2, m = 4, as torch 2.11 builds it
// (torch.distributed.pipelining.schedules: _get_1f1b_rank_ops, then _prepare_schedule_with_comms:
// _add_unshard_reshard, _add_reduce_grad, _add_send_recv), printed by torch in its own notation
// "<global stage><action><micro-batch>" (global stage = local chunk * pp + rank); FSDP and grad-reduce
// actions left out.
std::string torch_notation(const std::vector<TorchPipelineAction>& program, int pp, int rank) {
  std::string out;
  for (const TorchPipelineAction& a : program) {
    const bool f = a.step.forward;
    const char* kind = a.kind == TorchPipelineAction::Kind::compute ? (f ? "F" : "B")
                       : a.kind == TorchPipelineAction::Kind::send ? (f ? "SEND_F" : "SEND_B")
                                                                   : (f ? "RECV_F" : "RECV_B");
    out += (out.empty() ? "" : " ") + std::to_string(a.step.chunk * pp + rank) + kind + std::to_string(a.step.microbatch);
  }
  return out;
}

TEST(Builder, TorchInterleavedProgramIsTorchs) {
  const auto program = torch_interleaved_program(2, 2, 4);
  ASSERT_EQ(program.size(), 2u);
  EXPECT_EQ(torch_notation(program[0], 2, 0),
            "0F0 0SEND_F0 2RECV_F0 0F1 0SEND_F1 2RECV_F1 2F0 2SEND_F0 2F1 2SEND_F1 2RECV_B0 0F2 0SEND_F2 2B0 2SEND_B0 "
            "2RECV_B1 0F3 0SEND_F3 2RECV_F2 2B1 2SEND_B1 0RECV_B0 2F2 2SEND_F2 2RECV_F3 0B0 0RECV_B1 2F3 2SEND_F3 0B1 "
            "2RECV_B2 2B2 2SEND_B2 2RECV_B3 2B3 2SEND_B3 0RECV_B2 0B2 0RECV_B3 0B3");
  EXPECT_EQ(torch_notation(program[1], 2, 1),
            "1RECV_F0 1F0 1SEND_F0 1RECV_F1 1F1 1SEND_F1 3RECV_F0 3F0 3RECV_F1 3B0 3SEND_B0 1RECV_F2 3F1 1RECV_B0 3B1 "
            "3SEND_B1 1RECV_F3 1F2 1SEND_F2 1RECV_B1 1B0 1SEND_B0 3RECV_F2 1F3 1SEND_F3 1B1 1SEND_B1 3RECV_F3 3F2 3B2 "
            "3SEND_B2 1RECV_B2 3F3 3B3 3SEND_B3 1RECV_B3 1B2 1SEND_B2 1B3 1SEND_B3");
  // pp 4, vpp 2, m 8, rank 0 as the measured run posted it (torch.profiler annotations of rank 0,
  // validation/h200x4-interleaved/profile/): the receive for chunk 4 right after each send of chunk 0.
  EXPECT_EQ(torch_notation(torch_interleaved_program(4, 2, 8)[0], 4, 0).substr(0, 69),
            "0F0 0SEND_F0 4RECV_F0 0F1 0SEND_F1 4RECV_F1 0F2 0SEND_F2 4RECV_F2 0F3");
  // Every compute unit of every rank appears once, in an order with the same units as Megatron's.
  for (int pp : {2, 4}) {
    const auto prog = torch_interleaved_program(pp, 2, 8);
    for (int r = 0; r < pp; ++r) {
      std::vector<ScheduleStep> units;
      for (const auto& a : prog[static_cast<std::size_t>(r)]) {
        if (a.kind == TorchPipelineAction::Kind::compute) units.push_back(a.step);
      }
      auto megatron = pipeline_order(Schedule::interleaved, pp, 2, r, 8);
      ASSERT_EQ(units.size(), megatron.size());
      auto less = [](const ScheduleStep& a, const ScheduleStep& b) {
        return std::tuple(a.forward, a.chunk, a.microbatch) < std::tuple(b.forward, b.chunk, b.microbatch);
      };
      std::sort(units.begin(), units.end(), less);
      std::sort(megatron.begin(), megatron.end(), less);
      EXPECT_EQ(units, megatron);
    }
  }
}

// With eager-PyTorch kernels, the interleaved schedule is PyTorch's program: all PP transfers of a rank
// on one stream (the NCCL communicator's), in program order. With fused (Megatron) kernels, four streams.
TEST(Builder, EagerInterleavedPutsEveryTransferOnOneStream) {
  Rig r = one_node(no_launch_overhead());
  const Plan p = plan("pp=2,vpp=2,schedule=interleaved,mbs=1,gbs=4");
  auto streams_of_pp = [&](const ComputeModel& compute) {
    auto g = build_task_graph(gpt(4, 32000), p, r.cluster, compute);
    EXPECT_TRUE(g.has_value());
    std::vector<int> streams;
    for (const Task& t : g->tasks()) {
      if ((t.kind == TaskKind::send || t.kind == TaskKind::recv) && t.rank == 1) streams.push_back(t.stream);
    }
    std::sort(streams.begin(), streams.end());
    streams.erase(std::unique(streams.begin(), streams.end()), streams.end());
    return streams;
  };
  EXPECT_EQ(streams_of_pp(r.compute).size(), 4u);
  ComputeModel eager = r.compute;
  eager.set_stack(load_stack("pytorch-eager").value());
  EXPECT_EQ(streams_of_pp(eager), std::vector<int>{kStreamSendFwd});
  // ... and the transfers match: the step simulates to the end.
  auto g = build_task_graph(gpt(4, 32000), p, r.cluster, eager);
  ASSERT_TRUE(g.has_value());
  auto res = simulate(*g, r.cluster, r.coll);
  ASSERT_TRUE(res.has_value()) << res.error().str();
  EXPECT_GT(res->step_time.value, 0.0);
}

TEST(Builder, ScheduleOrdersFollowMegatron) {
  using S = ScheduleStep;
  // 1F1B, p = 4, m = 6, stage 0: 3 warm-up forwards, 3 (F, B) pairs, 3 cool-down backwards.
  const std::vector<S> s0{{true, 0, 0},  {true, 0, 1},  {true, 0, 2},  {true, 0, 3},  {false, 0, 0}, {true, 0, 4},
                          {false, 0, 1}, {true, 0, 5},  {false, 0, 2}, {false, 0, 3}, {false, 0, 4}, {false, 0, 5}};
  EXPECT_EQ(pipeline_order(Schedule::one_f_one_b, 4, 1, 0, 6), s0);
  // Last stage: no warm-up, F and B alternate.
  const auto s3 = pipeline_order(Schedule::one_f_one_b, 4, 1, 3, 6);
  for (std::size_t i = 0; i < s3.size(); ++i) EXPECT_EQ(s3[i].forward, i % 2 == 0);
  // Interleaved p = 2, vpp = 2, m = 4, stage 0: warm-up (2-0-1)*2 + (2-1)*2 = 4 of 8 virtual steps;
  // forward step k -> chunk (k mod 4) / 2, micro-batch (k / 4) * 2 + k mod 2; backward chunk reversed.
  const std::vector<S> i0{{true, 0, 0},  {true, 0, 1},  {true, 1, 0},  {true, 1, 1},  {true, 0, 2},  {false, 1, 0},
                          {true, 0, 3},  {false, 1, 1}, {true, 1, 2},  {false, 0, 0}, {true, 1, 3},  {false, 0, 1},
                          {false, 1, 2}, {false, 1, 3}, {false, 0, 2}, {false, 0, 3}};
  EXPECT_EQ(pipeline_order(Schedule::interleaved, 2, 2, 0, 4), i0);
  // Activations in flight on stage 0: GPipe m, 1F1B p.
  EXPECT_EQ(max_in_flight(pipeline_order(Schedule::gpipe, 4, 1, 0, 8)), 8);
  EXPECT_EQ(max_in_flight(pipeline_order(Schedule::one_f_one_b, 4, 1, 0, 8)), 4);
}

TEST(Builder, TensorParallelismAddsFourAllReducesPerLayerAndMicrobatch) {
  // Megatron TP: 2 all-reduces forward (after attention and after the MLP) and 2 backward per layer,
  // each of mbs * seq * hidden * 2 bytes = 2 * 2048 * 2048 * 2 = 16 MiB; 3 layers x 2 micro-batches.
  const Rig r = one_node();
  const ModelSpec m = gpt(3, 1024);
  BuildOptions o;
  o.per_layer_tasks = true;
  auto g = build_task_graph(m, plan("tp=2,mbs=2,gbs=4"), r.cluster, r.compute, o);
  ASSERT_TRUE(g.has_value());
  int count = 0;
  for (const Task& t : g->tasks()) {
    if (t.kind != TaskKind::collective || t.category != TaskCategory::tp_comm || t.labels.layer < 0) continue;
    ++count;
    EXPECT_EQ(t.op, CollOp::all_reduce);
    EXPECT_EQ(t.bytes().value, 2.0 * 2048 * 2048 * 2);
  }
  EXPECT_EQ(count, 4 * 3 * 2);
  // Merged tasks carry the same bytes: per micro-batch 4 * 3 layer all-reduces + the embedding's
  // forward one + the LM head input's backward one = 14 x 16 MiB.
  auto merged = build_task_graph(m, plan("tp=2,mbs=2,gbs=4"), r.cluster, r.compute);
  double bytes = 0;
  for (const Task& t : merged->tasks()) bytes += t.category == TaskCategory::tp_comm ? t.bytes().value : 0.0;
  EXPECT_EQ(bytes, 2 * 14 * (2.0 * 2048 * 2048 * 2));
}

// Eager PyTorch under autocast (validation/harness/parallel.py) keeps the norms and the residual stream in
// fp32, so the TP collectives of the column-parallel inputs (backward: their input gradients) and of the
// vocab-parallel embedding output carry 4 bytes per element; the row-parallel outputs (forward) are bf16
// matmul outputs. Measured on H200 (validation/h200-session8/x4/trace): TP=2 llama-1b, mbs 4, per step 128
// bf16 all-reduces of 64 MiB (243 us each) and 149 f32 ones (128 MiB, 466 us; 136 of them are these).
TEST(Builder, EagerAutocastTensorParallelismReducesTheResidualSideInFp32) {
  Rig r = one_node();
  r.compute.set_stack(load_stack("pytorch-eager").value());
  BuildOptions o;
  o.per_layer_tasks = true;
  const double S = 2.0 * 2048 * 2048 * 2;  // mbs * seq * hidden * 2 bytes
  // Bytes of rank 0's TP collectives of one micro-batch by (layer piece?, forward?, op).
  auto collectives = [&](const std::string& text) {
    auto g = build_task_graph(gpt(3, 1024), plan(text), r.cluster, r.compute, o);
    EXPECT_TRUE(g.has_value()) << (g ? "" : g.error().str());
    std::map<std::tuple<bool, bool, CollOp>, std::vector<double>> out;
    bool forward = true;  // a piece's TP collectives are added right after its compute task
    for (const Task& t : g->tasks()) {
      if (t.rank != 0 || t.labels.microbatch != 0) continue;
      if (t.kind == TaskKind::compute) forward = t.category == TaskCategory::forward;
      if (t.kind != TaskKind::collective) continue;
      if (t.category != TaskCategory::tp_comm && t.category != TaskCategory::sp_comm) continue;
      out[{t.labels.layer >= 0, forward, t.op}].push_back(t.bytes().value);
    }
    return out;
  };
  using K = std::tuple<bool, bool, CollOp>;
  using V = std::vector<double>;
  auto plain = collectives("tp=2,mbs=2,gbs=2");
  EXPECT_EQ(plain[K(true, true, CollOp::all_reduce)], V(6, S));        // 3 layers x 2, bf16
  EXPECT_EQ(plain[K(true, false, CollOp::all_reduce)], V(6, 2 * S));   // fp32 input gradients
  EXPECT_EQ(plain[K(false, true, CollOp::all_reduce)], V(1, 2 * S));   // fp32 embedding output
  EXPECT_EQ(plain[K(false, false, CollOp::all_reduce)], V(1, 2 * S));  // the LM head input's gradient
  auto sp = collectives("tp=2,mbs=2,gbs=2,sp=true");
  EXPECT_EQ(sp[K(true, true, CollOp::all_gather)], V(6, 2 * S));        // fp32 norm outputs in
  EXPECT_EQ(sp[K(true, true, CollOp::reduce_scatter)], V(6, S));        // bf16 matmul outputs out
  EXPECT_EQ(sp[K(true, false, CollOp::all_gather)], V(6, S));           // their gradients, bf16
  EXPECT_EQ(sp[K(true, false, CollOp::reduce_scatter)], V(6, 2 * S));   // fp32 input gradients
  // Megatron's fused kernels keep the residual stream in the compute dtype: every one is S.
  r.compute.set_stack(load_stack("fused").value());
  for (const auto& [k, v] : collectives("tp=2,mbs=2,gbs=2")) EXPECT_EQ(v, V(v.size(), S));
}

TEST(Builder, DeclaresTheStagesLockstepGroupsAsConcurrentSiblings) {
  // tp=2, dp=2, pp=2 on 8 GPUs (Megatron order: rank = tp_rank + 2 dp_rank + 4 stage). The symmetric
  // graph holds only ranks 0 and 4, but declares for stage 0's TP group {0,1} the other replica's
  // {2,3}, and for its DP group {0,2} the other TP rank's {1,3}; likewise {4,5}/{6,7} and {4,6}/{5,7}.
  const Rig r = one_node();
  auto g = build_task_graph(gpt(4, 1024), plan("tp=2,pp=2,dp=2,mbs=1,gbs=4"), r.cluster, r.compute);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  auto siblings_of = [&](std::vector<int> ranks) {
    std::vector<std::vector<int>> out;
    for (GroupId gid = 0; gid < g->num_groups(); ++gid) {
      const auto grp = g->group(gid);
      if (std::vector<int>(grp.begin(), grp.end()) != ranks) continue;
      for (GroupId s : g->concurrent(gid)) out.emplace_back(g->group(s).begin(), g->group(s).end());
    }
    return out;
  };
  using V = std::vector<std::vector<int>>;
  EXPECT_EQ(siblings_of({0, 1}), (V{{2, 3}}));
  EXPECT_EQ(siblings_of({0, 2}), (V{{1, 3}}));
  EXPECT_EQ(siblings_of({4, 5}), (V{{6, 7}}));
  EXPECT_EQ(siblings_of({4, 6}), (V{{5, 7}}));
  // Without tensor or data parallelism there is nothing to declare.
  auto lone = build_task_graph(gpt(4, 1024), plan("pp=2,mbs=1,gbs=4"), r.cluster, r.compute);
  ASSERT_TRUE(lone.has_value());
  for (GroupId gid = 0; gid < lone->num_groups(); ++gid) EXPECT_TRUE(lone->concurrent(gid).empty());
}

TEST(Builder, SequenceParallelismReplacesEachAllReduceByAllGatherAndReduceScatter) {
  const Rig r = one_node();
  BuildOptions o;
  o.per_layer_tasks = true;
  auto g = build_task_graph(gpt(3, 1024), plan("tp=2,mbs=1,gbs=1,sp=true"), r.cluster, r.compute, o);
  ASSERT_TRUE(g.has_value());
  int ag = 0, rs = 0, ar = 0;
  for (const Task& t : g->tasks()) {
    if (t.kind != TaskKind::collective || t.labels.layer < 0) continue;
    ag += t.op == CollOp::all_gather;
    rs += t.op == CollOp::reduce_scatter;
    ar += t.op == CollOp::all_reduce;
  }
  EXPECT_EQ(ag, 4 * 3);
  EXPECT_EQ(rs, 4 * 3);
  EXPECT_EQ(ar, 0);
}

double dp_traffic(const TaskGraph& g, int n) {
  // Bytes each rank sends (Rajbhandari et al. 2020, section 7): all-reduce 2(n-1)/n of the buffer,
  // all-gather and reduce-scatter (n-1)/n.
  double sent = 0;
  for (const Task& t : g.tasks()) {
    if (t.rank != 0 || t.kind != TaskKind::collective) continue;
    if (t.category != TaskCategory::dp_comm && t.category != TaskCategory::zero_comm) continue;
    sent += t.bytes().value * (t.op == CollOp::all_reduce ? 2.0 : 1.0) * (n - 1) / n;
  }
  return sent;
}

TEST(Builder, ZeroThreeMovesOneAndAHalfTimesTheTrafficOfDdp) {
  // Psi parameters in bf16 (2 bytes), dp = 8, one micro-batch: DDP all-reduces the gradients,
  // 2 Psi (n-1)/n elements per rank; ZeRO-3 gathers the parameters for the forward and again for the
  // backward and reduce-scatters the gradients: 3 Psi (n-1)/n (Rajbhandari et al. 2020, section 7.2.2).
  const Rig r = one_node();
  const ModelSpec m = gpt(3, 1024);
  const double psi = static_cast<double>(count_params(m).total());
  auto ddp = build_task_graph(m, plan("dp=8,mbs=1,gbs=8,precision=bf16"), r.cluster, r.compute);
  auto z3 = build_task_graph(m, plan("dp=8,mbs=1,gbs=8,precision=bf16,zero=3"), r.cluster, r.compute);
  ASSERT_TRUE(ddp.has_value() && z3.has_value());
  EXPECT_DOUBLE_EQ(dp_traffic(*ddp, 8), 2 * psi * 2 * 7 / 8);
  EXPECT_DOUBLE_EQ(dp_traffic(*z3, 8), 3 * psi * 2 * 7 / 8);
}

// ZeRO-2/3 with eager PyTorch is FSDP2 (validation/harness/parallel.py: fully_shard per layer, then the
// root holding embedding, final norm and head). What torch.profiler showed on H200
// (validation/h200-session8/x2-fsdp, llama-1b, 2 GPUs, 4 micro-batches): every micro-batch gathers every
// unit in its forward (ZeRO-2 too: reshard_after_forward=False still reshards after the backward), the
// root whole before the embedding and never in the backward; each layer reduce-scatters its gradients
// after its backward and the root once at the end; and the next micro-batch's first gather starts only
// after that last reduce-scatter (~2 ms of idle GPU per micro-batch).
TEST(Builder, EagerZeroTwoAndThreeAreFsdp2) {
  Rig r = one_node();
  r.compute.set_stack(load_stack("pytorch-eager").value());
  const ModelSpec m = gpt(3, 32000);
  const double embed = 32000.0 * 2048 + 2048.0 * 2048;  // token + learned position embeddings
  const double head = 32000.0 * 2048 + 2 * 2048;         // untied head + final LayerNorm (weight, bias)
  const double layer = 12.0 * 2048 * 2048 + 13 * 2048;   // 4h^2 + 8h^2 weights, biases and 2 LayerNorms
  for (int zero : {2, 3}) {
    auto g = build_task_graph(m, plan("dp=2,mbs=1,gbs=4,zero=" + std::to_string(zero)), r.cluster, r.compute);
    ASSERT_TRUE(g.has_value()) << g.error().str();
    const auto& tasks = g->tasks();
    std::vector<double> gathers, scatters;
    constexpr TaskId none = ~TaskId{0};
    std::vector<TaskId> first_gather_of_mb(2, none), last_scatter_of_mb(2, none);
    for (TaskId id = 0; id < tasks.size(); ++id) {
      const Task& t = tasks[id];
      if (t.rank != 0 || t.kind != TaskKind::collective || (t.labels.microbatch != 0 && t.labels.microbatch != 1)) continue;
      const auto mb = static_cast<std::size_t>(t.labels.microbatch);
      if (t.op == CollOp::all_gather) {
        if (mb == 0) gathers.push_back(t.bytes().value);
        if (first_gather_of_mb[mb] == none) first_gather_of_mb[mb] = id;
      }
      if (t.op == CollOp::reduce_scatter) {
        if (mb == 0) scatters.push_back(t.bytes().value);
        last_scatter_of_mb[mb] = id;
      }
    }
    // bf16 parameters gathered: the root, then the layers; ZeRO-3 the layers again in the backward.
    std::vector<double> want{2 * (embed + head), 2 * layer, 2 * layer, 2 * layer};
    if (zero == 3) want.insert(want.end(), {2 * layer, 2 * layer, 2 * layer});
    EXPECT_EQ(gathers, want) << "zero=" << zero;
    // fp32 gradients: each layer after its backward, the root last.
    EXPECT_EQ(scatters, (std::vector<double>{4 * layer, 4 * layer, 4 * layer, 4 * (embed + head)})) << "zero=" << zero;
    // Micro-batch 1's first gather waits for micro-batch 0's last reduce-scatter.
    const auto edges = g->edges();
    EXPECT_TRUE(std::any_of(edges.begin(), edges.end(), [&](const TaskGraph::Edge& e) {
      return e.from == last_scatter_of_mb[0] && e.to == first_gather_of_mb[1];
    })) << "zero=" << zero;
    // No parameter gather after the optimizer step (classic ZeRO-2 has one).
    for (const Task& t : tasks) {
      EXPECT_FALSE(t.kind == TaskKind::collective && t.op == CollOp::all_gather && t.labels.microbatch < 0) << "zero=" << zero;
    }
  }
}

}  // namespace
}  // namespace scalescope::models
