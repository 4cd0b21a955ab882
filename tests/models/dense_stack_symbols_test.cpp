// The dense plan keys (issue 20) as inputs of the stack profiles (issue 19): the symbols cp, fp8, mixed and g,
// the `distributed_optimizer` property, GEMM rows in the plan's (FP8) or the attention's data type, the
// plan key `seq` and Megatron's --seq-length.
#include <gtest/gtest.h>

#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/megatron_flags.hpp"
#include "scalescope/models/stack_profile.hpp"
#include "scalescope/sim/cluster.hpp"

namespace scalescope::models {
namespace {

ModelSpec llama70b() { return load_model_by_name_or_path("llama3-70b").value(); }

Plan plan(const std::string& text) {
  auto p = parse_plan(text);
  EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().str());
  return p ? *p : Plan{};
}

/// The fused stack's symbol `name` for `text`.
double symbol(const std::string& name, const std::string& text) {
  const StackProfile& st = *default_stack();
  const std::vector<double> v = st.bind(llama70b(), plan(text), true, false, 128);
  const int slot = st.symbols().find(name);
  EXPECT_GE(slot, 0) << name;
  return slot >= 0 ? v[static_cast<std::size_t>(slot)] : -1.0;
}

TEST(DenseStackSymbols, PrecisionAndContextParallelSymbols) {
  // fp8 is mixed precision with FP8 linear GEMMs (plan.hpp): mixed = 1, and its own flag fp8 = 1.
  EXPECT_EQ(symbol("mixed", "gbs=8"), 1.0);
  EXPECT_EQ(symbol("fp8", "gbs=8"), 0.0);
  EXPECT_EQ(symbol("mixed", "gbs=8,precision=fp8"), 1.0);
  EXPECT_EQ(symbol("fp8", "gbs=8,precision=fp8"), 1.0);
  EXPECT_EQ(symbol("mixed", "gbs=8,precision=bf16"), 0.0);
  // g: fp32 main gradients (4 B) for mixed and fp8; 2 B for bf16, fp16 and with grad_reduce_in_fp32=false.
  EXPECT_EQ(symbol("g", "gbs=8"), 4.0);
  EXPECT_EQ(symbol("g", "gbs=8,precision=fp8"), 4.0);
  EXPECT_EQ(symbol("g", "gbs=8,precision=fp8,grad_reduce_in_fp32=0"), 2.0);
  EXPECT_EQ(symbol("g", "gbs=8,precision=fp16"), 2.0);
  EXPECT_EQ(symbol("cp", "gbs=8"), 1.0);
  EXPECT_EQ(symbol("cp", "gbs=8,cp=4"), 4.0);
}

TEST(DenseStackSymbols, OnlyTheFusedStackIsMegatronsDistributedOptimizer) {
  EXPECT_TRUE(load_stack("fused").value()->distributed_optimizer);
  EXPECT_FALSE(load_stack("pytorch-eager").value()->distributed_optimizer);
  auto doc = parse_json_text(R"({"schema": "scalescope.stack/1", "name": "x", "phases": {},
      "memory": {"weights": "2*P", "grads": "4*P", "optimizer": "12*P", "activations_per_layer": "34*T*H"}})",
                             "x.json");
  ASSERT_TRUE(doc.has_value());
  EXPECT_FALSE(stack_from_json(*doc, "x.json").value().distributed_optimizer);  // default: PyTorch's ZeRO-1
}

TEST(DenseStackSymbols, GemmRowsInThePlansOrTheAttentionsDataType) {
  // Three rows of one 8192^3 GEMM: "compute" takes CostOptions::dtype (fp8 in an FP8 plan's layers),
  // "attention" the attention's data type (bf16 there), "bf16" is fixed. Datasheet roofline of DGX H100's GPU
  // (fp8 dense peak 1,979 TFLOP/s, bf16 989).
  auto doc = parse_json_text(R"({"schema": "scalescope.stack/1", "name": "x",
      "phases": {"layer_forward": [{"name": "c", "kind": "gemm", "m": "8192", "n": "8192", "k": "8192"}],
                 "layer_backward": [{"name": "a", "kind": "gemm", "m": "8192", "n": "8192", "k": "8192",
                                     "dtype": "attention"},
                                    {"name": "b", "kind": "gemm", "m": "8192", "n": "8192", "k": "8192",
                                     "dtype": "bf16"}]},
      "memory": {"weights": "2*P", "grads": "4*P", "optimizer": "12*P", "activations_per_layer": "34*T*H"}})",
                             "x.json");
  ASSERT_TRUE(doc.has_value());
  auto m = ComputeModel::datasheet(load_cluster_by_name_or_path("dgx-h100-8").value().gpu_spec()).value();
  m.set_stack(std::make_shared<StackProfile>(stack_from_json(*doc, "x.json").value()));
  CostOptions o;
  o.dtype = "fp8";
  o.attention_dtype = "bf16";
  const LayerCost c = layer_cost(llama70b(), plan("gbs=1,precision=fp8"), m, o);
  const double fp8 = m.gemm(8192, 8192, 8192, "fp8").time.value, bf16 = m.gemm(8192, 8192, 8192, "bf16").time.value;
  EXPECT_LT(fp8, bf16);
  EXPECT_DOUBLE_EQ(c.forward.time.value, fp8);
  EXPECT_DOUBLE_EQ(c.backward.time.value, 2.0 * bf16);
  // Without an attention data type the attention rows follow dtype.
  o.attention_dtype.clear();
  EXPECT_DOUBLE_EQ(layer_cost(llama70b(), plan("gbs=1,precision=fp8"), m, o).backward.time.value, fp8 + bf16);
}

TEST(DenseStackSymbols, SeqKeyRoundTripsAndIsTheSequenceTheRulesRead) {
  const Plan p = plan("tp=2,gbs=8,cp=2,seq=4096");
  EXPECT_EQ(p.seq, 4096);
  EXPECT_EQ(to_string(p).substr(to_string(p).size() - 9), ",seq=4096");  // last, and only when set
  EXPECT_EQ(to_string(plan("gbs=8")).find("seq"), std::string::npos);
  EXPECT_EQ(parse_plan(to_string(p)).value(), p);
  EXPECT_EQ(plan_from_json(to_json(p), "p.json").value(), p);
  // validate() reads the plan's sequence: 2*cp = 16 divides the model's 8192 but not seq 4088 (= 16 x 255.5).
  const auto bad = validate(plan("gbs=8,cp=8,seq=4088"), llama70b(), 0);
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().str(), "plan: cp: cp=8 needs 2*cp to divide seq_len=4088 (load-balanced causal split)");
}

TEST(DenseStackSymbols, MegatronSeqLengthSetsThePlansSeq) {
  // llama3-70b's seq_len is 8192: --seq-length 4096 becomes seq=4096, 8192 leaves the model's.
  const char* flags = "--tensor-model-parallel-size 8 --bf16 --seq-length ";
  auto r = plan_from_megatron(std::string(flags) + "4096", llama70b(), 8);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_EQ(r->plan.seq, 4096);
  EXPECT_EQ(plan_from_megatron(std::string(flags) + "8192", llama70b(), 8).value().plan.seq, 0);
  EXPECT_EQ(megatron_flag_of("seq"), "--seq-length");
}

}  // namespace
}  // namespace scalescope::models
