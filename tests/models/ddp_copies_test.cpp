// PyTorch DDP's gradient copies (StackProfile::ddp_grad_copies, builder.cpp): with gradient_as_bucket_view=False,
// its default, the reducer copies each gradient (scaled by 1/world) into its bucket before the bucket's all-reduce
// and the reduced buckets back into the gradients after the last one (torch/csrc/distributed/c10d/reducer.cpp).
// Expected values are counted by hand from the model's parameters, not from the builder.
#include <gtest/gtest.h>

#include "model_fixtures.hpp"

#include "datasheet_rig.hpp"

#include <memory>
#include <string>

#include "scalescope/models/builder.hpp"
#include "scalescope/models/counts.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/simulator.hpp"

namespace scalescope::models {
namespace {

using testing::plan;

// 4 layers, h 1024, 8 heads, ffn 4096 gelu with biases and layernorm, vocabulary 32,000 untied, learned positions.
ModelSpec small() {
  ModelSpec s;
  s.name = "small";
  s.layers = 4;
  s.hidden = 1024;
  s.heads = 8;
  s.kv_heads = 8;
  s.ffn_hidden = 4096;
  s.bias = true;
  s.vocab = 32000;
  s.seq_len = 1024;
  s.positional = Positional::learned;
  return s;
}

// Parameters of small(), by hand: per layer 4h^2 + 4h (q, k, v, o with biases) + 2 h f + f + h (MLP with biases)
// + 4h (two layernorms) = 4,194,304 + 4,096 + 8,388,608 + 4,096 + 1,024 + 4,096 = 12,596,224; embedding
// 32,000 x 1,024 = 32,768,000, positions 1,024 x 1,024 = 1,048,576, final layernorm 2,048, untied head 32,768,000.
constexpr double kParams = 4 * 12596224.0 + 32768000.0 + 1048576.0 + 2048.0 + 32768000.0;

using Rig = testing::DatasheetRig;

/// An 8-GPU H100 node priced from the datasheet, with the built-in pytorch-eager stack, its DDP copies on or off.
std::unique_ptr<Rig> rig(bool copies) {
  auto c = load_cluster_by_name_or_path("dgx-h100-8");
  EXPECT_TRUE(c.has_value());
  auto r = std::make_unique<Rig>(std::move(c).value());
  auto eager = load_stack("pytorch-eager");
  EXPECT_TRUE(eager.has_value());
  auto s = std::make_shared<StackProfile>(**eager);
  s->ddp_grad_copies = Expr::constant(copies ? 1.0 : 0.0);
  r->compute.set_stack(s);
  return r;
}

struct Copies {
  double into = 0.0, from = 0.0;  ///< HBM bytes of rank 0's copy tasks
  int into_tasks = 0, from_tasks = 0, all_reduces = 0;
  double reduced = 0.0;  ///< bytes rank 0 all-reduces
};

Copies copies_of(const TaskGraph& g) {
  Copies c;
  for (const Task& t : g.tasks()) {
    if (t.rank != 0) continue;
    const std::string& n = g.name(t.name);
    if (n == "ddp copy grads into bucket") c.into += t.mem_bytes, ++c.into_tasks;
    if (n == "ddp copy grads from buckets") c.from += t.mem_bytes, ++c.from_tasks;
    if (t.kind == TaskKind::collective && t.category == TaskCategory::dp_comm) c.reduced += t.amount, ++c.all_reduces;
  }
  return c;
}

// bf16 gradients (2 bytes): every bucket is read and written once on its way in (2 x its bytes), and all of them
// once on the way out; one copy task per all-reduced bucket, one copy-back before the optimizer.
TEST(DdpCopies, EachBucketIsCopiedInAndAllOfThemBackOut) {
  const auto r = rig(true);
  auto g = build_task_graph(small(), plan("tp=1,pp=1,dp=2,mbs=1,gbs=2,precision=bf16,bucket_MB=25"), r->cluster,
                            r->compute);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  const Copies c = copies_of(*g);
  const double grads = 2.0 * kParams;
  EXPECT_NEAR(c.reduced, grads, 1.0);
  EXPECT_NEAR(c.into, 2.0 * grads, 1.0);
  EXPECT_NEAR(c.from, 2.0 * grads, 1.0);
  EXPECT_EQ(c.into_tasks, c.all_reduces);
  EXPECT_GE(c.all_reduces, 2);
  EXPECT_EQ(c.from_tasks, 1);
}

// No copies without the property, with one rank (nothing reduced), or with ZeRO-2/3 (FSDP2 keeps its own buffers).
TEST(DdpCopies, OnlyForDdpPlansOfStacksThatHaveThem) {
  for (const auto& [copies, text] : {std::pair{false, "tp=1,pp=1,dp=2,mbs=1,gbs=2,precision=bf16"},
                                     std::pair{true, "tp=1,pp=1,dp=1,mbs=1,gbs=1,precision=bf16"},
                                     std::pair{true, "tp=1,pp=1,dp=2,zero=2,mbs=1,gbs=2,precision=bf16"}}) {
    const auto r = rig(copies);
    auto g = build_task_graph(small(), plan(text), r->cluster, r->compute);
    ASSERT_TRUE(g.has_value()) << g.error().str();
    const Copies c = copies_of(*g);
    EXPECT_EQ(c.into_tasks + c.from_tasks, 0) << text;
  }
}

// Per-tensor kernels. The eager stack has T = 8 + swiglu + bias (6 + swiglu + 2 layernorm) = 16 parameter tensors
// per layer of small() (gelu, biases, layernorm): M = (T - 2 - 2) / 2 = 6 weight matrices (q, k, v, o, two MLP) and
// V = 10 vectors (6 biases, 2 norm weights, 2 norm biases) of h = 1,024 bf16 gradients (2,048 bytes). The copy back
// of the whole model (one stage) holds 4 layers x 10 + the final norm's 2 = 42 vectors, each moving 4,096 bytes;
// the rest, 2 x 2 x 116,971,520 - 42 x 4,096 = 467,714,048 bytes, moves as matrices of a layer's average,
// (12,596,224 x 2 - 10 x 2,048) / 6 = 4,195,328 bytes of gradient (8,390,656 moved): round(55.74) = 56 kernels.
// Each kernel costs the memory-bound rate for its size, at least the launch overhead.
TEST(DdpCopies, CopiesRunOneKernelPerParameterTensor) {
  const auto r = rig(true);
  auto g = build_task_graph(small(), plan("tp=1,pp=1,dp=2,mbs=1,gbs=2,precision=bf16"), r->cluster, r->compute);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  double back = 0.0;
  for (const Task& t : g->tasks())
    if (t.rank == 0 && g->name(t.name) == "ddp copy grads from buckets") back = t.amount;
  const ComputeModel& m = r->compute;
  const double vector = m.kernel_time(m.memory_bound(Bytes(4096.0)).time).value;
  const double matrix = m.kernel_time(m.memory_bound(Bytes(467714048.0 / 56.0)).time).value;
  EXPECT_NEAR(back, 42.0 * vector + 56.0 * matrix, 1e-12);
  EXPECT_GT(back, m.memory_bound(Bytes(2.0 * 2.0 * kParams)).time.value);  // slower than one big copy
}

// ZeRO-1 of a PyTorch stack is ZeroRedundancyOptimizer over DDP: the same reducer, the same copies; Megatron-Core's
// distributed optimizer (the fused stack) keeps its gradients in its own contiguous buffers, without them.
TEST(DdpCopies, ZeroRedundancyOptimizerRunsOverDdpButNotMegatronsDistributedOptimizer) {
  const Plan p = plan("tp=1,pp=1,dp=2,zero=1,mbs=1,gbs=2,precision=bf16");
  {
    const auto r = rig(true);
    auto g = build_task_graph(small(), p, r->cluster, r->compute);
    ASSERT_TRUE(g.has_value()) << g.error().str();
    EXPECT_NEAR(copies_of(*g).from, 2.0 * 2.0 * kParams, 1.0);
  }
  const auto r = rig(true);
  auto fused = load_stack("fused");
  ASSERT_TRUE(fused.has_value());
  auto s = std::make_shared<StackProfile>(**fused);
  s->ddp_grad_copies = Expr::constant(1.0);
  ASSERT_TRUE(s->distributed_optimizer);
  r->compute.set_stack(s);
  auto g = build_task_graph(small(), p, r->cluster, r->compute);
  ASSERT_TRUE(g.has_value()) << g.error().str();
  EXPECT_EQ(copies_of(*g).from_tasks, 0);
}

// The copy back waits for the last all-reduce and the optimizer waits for it: the step grows by at least the copy
// back's own time: 2 x 2 bytes x P read and written, at the compute model's memory-bound rate for that size.
TEST(DdpCopies, TheCopyBackIsOnTheCriticalPath) {
  const Plan p = plan("tp=1,pp=1,dp=2,mbs=1,gbs=2,precision=bf16");
  auto step = [&](bool copies) {
    const auto r = rig(copies);
    auto g = build_task_graph(small(), p, r->cluster, r->compute);
    EXPECT_TRUE(g.has_value());
    auto res = simulate(*g, r->cluster, r->coll);
    EXPECT_TRUE(res.has_value());
    return res->step_time.value;
  };
  const auto r = rig(true);
  const double back = r->compute.memory_bound(Bytes(2.0 * 2.0 * kParams)).time.value;
  EXPECT_GT(step(true) - step(false), back * (1.0 - 1e-9));
}

}  // namespace
}  // namespace scalescope::models
