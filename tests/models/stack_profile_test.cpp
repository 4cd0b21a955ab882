// Stack profiles (stack_profile.hpp): the built-ins load, rows are priced by the compute model, measured rows
// scale from the trace's shape, memory anchors, selection by `applies` and by the nearest trace, predict()'s note
// for plans far from the traced shape (validation/session24), and loader errors.
#include "scalescope/models/stack_profile.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "datasheet_rig.hpp"
#include "gpu_fixtures.hpp"
#include "scalescope/models/layer_costs.hpp"
#include "scalescope/models/memory.hpp"
#include "scalescope/models/predict.hpp"

namespace scalescope::models {
namespace {

/// H100 datasheet roofline (gpu_fixtures.hpp), nothing measured.
ComputeModel testing_compute_model() { return ComputeModel::datasheet(testing::h100_spec()).value(); }

ModelSpec small() {
  ModelSpec m;
  m.name = "small";
  m.layers = 4;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 8;
  m.ffn_hidden = 4096;
  m.ffn = FfnKind::gelu;
  m.norm = NormKind::layernorm;
  m.vocab = 32000;
  m.seq_len = 1024;
  m.positional = Positional::none;
  return m;
}

Plan plan_mbs(int mbs) {
  Plan p;
  p.mbs = mbs;
  p.gbs = mbs;
  return p;
}

StackProfile parse(const std::string& text) {
  auto doc = parse_json_text(text, "t.json");
  EXPECT_TRUE(doc.has_value());
  auto s = stack_from_json(*doc, "t.json");
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().str());
  return s ? std::move(s).value() : StackProfile{};
}

std::string error_of(const std::string& text) {
  auto doc = parse_json_text(text, "t.json");
  if (!doc) return doc.error().str();
  auto s = stack_from_json(*doc, "t.json");
  EXPECT_FALSE(s.has_value());
  return s ? "" : s.error().str();
}

const char* kMinimalMemory = R"("memory": {"weights": "2*P", "grads": "4*P", "optimizer": "12*P",
                                           "activations_per_layer": "34*T*H"})";

TEST(StackProfile, BuiltinsLoadAndNameThemselves) {
  EXPECT_EQ(builtin_stack_names(), (std::vector<std::string>{"fused", "pytorch-eager"}));
  for (const char* name : {"fused", "megatron", "pytorch-eager", "pytorch-eager-autocast"}) {
    auto s = load_stack(name);
    ASSERT_TRUE(s.has_value()) << name << ": " << s.error().str();
    EXPECT_FALSE((*s)->phases[static_cast<int>(StackPhase::layer_forward)].empty());
  }
  auto bad = load_stack("tensorflow");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().str().find("expected a built-in stack (fused, pytorch-eager"), std::string::npos);
}

TEST(StackProfile, SymbolsBindTheModelAndPlan) {
  const StackProfile s = parse(std::string(R"J({"schema": "scalescope.stack/1", "name": "x", "phases": {}, )J") +
                               kMinimalMemory + "}");
  Plan p = plan_mbs(2);
  p.tp = 2;
  const auto v = s.bind(small(), p, true, false, 128);
  auto at = [&](const char* n) { return v[static_cast<std::size_t>(s.symbols().find(n))]; };
  EXPECT_EQ(at("T"), 2048.0);   // 2 x 1024
  EXPECT_EQ(at("Q"), 512.0);    // 1024 / tp 2
  EXPECT_EQ(at("F"), 2048.0);   // 4096 / 2
  EXPECT_EQ(at("Vp"), 32000.0);  // already a multiple of 128 x 2
  EXPECT_EQ(at("V"), 16000.0);
  // linear weights of a layer on one of 2 ranks: H(Q + 2K) + QH + 2FH = 1024 (512 + 1024) + 512 x 1024 + 2 x 2048 x 1024
  EXPECT_EQ(at("P_layer"), 1024.0 * 1536 + 512.0 * 1024 + 2.0 * 2048 * 1024);
}

// One GEMM row (m = H, n = T, k = H) measured at T = 1024 (mbs 1): at mbs 1 it costs exactly its measured 1 ms;
// at mbs 2 that time scaled by the compute model's ratio of the two shapes' GEMM times.
TEST(StackProfile, MeasuredRowsScaleFromTheTraceShape) {
  auto m = testing_compute_model();
  auto s = std::make_shared<StackProfile>(parse(std::string(R"J({"schema": "scalescope.stack/1", "name": "x",
      "properties": {"launch_floor": false, "kernel_gap_s": 0},
      "phases": {"layer_forward": [{"name": "g", "kind": "gemm", "m": "H", "n": "T", "k": "H", "time_s": 0.001}]},
      "trace": {"symbols": {"b": 1, "s": 1024, "T": 1024, "H": 1024}}, )J") + kMinimalMemory + "}"));
  m.set_stack(s);
  const double at1 = layer_cost(small(), plan_mbs(1), m).forward.time.value;
  const double at2 = layer_cost(small(), plan_mbs(2), m).forward.time.value;
  EXPECT_NEAR(at1, 0.001, 1e-12);
  const double ratio = m.gemm(1024, 2048, 1024).time.value / m.gemm(1024, 1024, 1024).time.value;
  EXPECT_NEAR(at2, 0.001 * ratio, 1e-12);
}

// Memory-bound rows split their bytes over their kernels; the gap rule adds kernel_gap_s per kernel.
TEST(StackProfile, MemoryRowsAndKernelGaps) {
  auto m = testing_compute_model();
  auto s = std::make_shared<StackProfile>(parse(std::string(R"J({"schema": "scalescope.stack/1", "name": "x",
      "properties": {"launch_floor": false, "kernel_gap_s": 2e-6},
      "phases": {"layer_forward": [{"name": "adds", "kind": "memory", "kernels": 4, "bytes": "6*T*H"}]}, )J") +
                                               kMinimalMemory + "}"));
  m.set_stack(s);
  const PhaseCost c = layer_cost(small(), plan_mbs(1), m).forward;
  const double each = m.memory_bound(Bytes(6.0 * 1024 * 1024 / 4)).time.value;
  EXPECT_EQ(c.kernels, 4);
  EXPECT_NEAR(c.time.value, 4 * (each + 2e-6), 1e-12);
  EXPECT_DOUBLE_EQ(c.bytes.value, 6.0 * 1024 * 1024);
}

// Anchored memory rows move with the shape by their `scaling`: "bytes" linearly in the bytes (an elementwise kernel of
// a trace, session 26), the default "sweep" by the elementwise sweep's time ratio. Sweep (the compute model's
// measured curve): 1,000 GB/s at 8 MiB and 4,000 GB/s at 1 GiB per kernel. Both rows move 8 T H bytes, measured 10 us
// at T = 1024 (8 MiB); at T = 4096 (32 MiB) the bytes row takes 4 x 10 us by hand, the sweep row 10 us times the
// sweep's time ratio, less since the sweep's bandwidth grows with the size.
TEST(StackProfile, AnchoredMemoryRowsMoveByTheirScaling) {
  ComputeProfile prof;
  prof.source = "test-profile.json";
  prof.elementwise_bandwidth = GBps(4000);
  prof.elementwise_curve = {{Bytes(8.0 * 1048576), GBps(1000)}, {Bytes(1073741824.0), GBps(4000)}};
  auto m = ComputeModel::with_profile(testing::h100_spec(), prof).value();
  const auto cost_of = [&](const char* scaling, int mbs) {
    auto s = std::make_shared<StackProfile>(parse(std::string(R"J({"schema": "scalescope.stack/1", "name": "x",
        "properties": {"launch_floor": false, "kernel_gap_s": 0},
        "phases": {"layer_forward": [{"name": "add", "kind": "memory", "bytes": "8*T*H", )J") + scaling +
        R"J("time_s": 1e-5}]}, "trace": {"symbols": {"b": 1, "s": 1024, "T": 1024, "H": 1024}}, )J" + kMinimalMemory +
        "}"));
    m.set_stack(s);
    return layer_cost(small(), plan_mbs(mbs), m).forward.time.value;
  };
  EXPECT_NEAR(cost_of(R"("scaling": "bytes", )", 1), 1e-5, 1e-15);
  EXPECT_NEAR(cost_of(R"("scaling": "bytes", )", 4), 4e-5, 1e-15);
  EXPECT_NEAR(cost_of("", 1), 1e-5, 1e-15);
  const double sweep_ratio =
      m.memory_bound(Bytes(32.0 * 1048576)).time.value / m.memory_bound(Bytes(8.0 * 1048576)).time.value;
  EXPECT_NEAR(cost_of("", 4), 1e-5 * sweep_ratio, 1e-15);
  EXPECT_LT(sweep_ratio, 3.5);  // the curve's bandwidth at 32 MiB is above its 8 MiB row's
  EXPECT_NE(error_of(std::string(R"J({"schema": "scalescope.stack/1", "name": "x", "phases": {"layer_forward":
      [{"name": "g", "kind": "memory", "bytes": "T", "scaling": "linear"}]}, )J") + kMinimalMemory + "}")
                .find("scaling"),
            std::string::npos);
}

// Memory: states anchored to 3 GB measured where the rule says 2 + 4 + 12 bytes x P; activations to 1 MB per layer
// where the rule says 34 T H; at the trace's own plan the anchors come back exactly.
TEST(StackProfile, MemoryAnchorsScaleTheRules) {
  const ModelSpec spec = small();
  const auto held = params_per_tp_rank(spec, even_layout(spec, 1, 1), 0, 1, 128);
  const double P = static_cast<double>(held.total());
  auto s = std::make_shared<StackProfile>(parse(R"J({"schema": "scalescope.stack/1", "name": "x", "phases": {},
      "memory": {"weights": "2*P", "grads": "4*P", "optimizer": "12*P", "activations_per_layer": "34*T*H",
                 "measured": {"states_bytes": 3e9, "activations_per_layer_bytes": 1e6}},
      "trace": {"symbols": {"b": 1, "s": 1024, "T": 1024, "H": 1024, "P": )J" + std::to_string(P) + "}}}"));
  MemoryOptions o;
  o.stack = s;
  const MemoryBreakdown b1 = memory_per_rank(spec, plan_mbs(1), 0, o);
  EXPECT_NEAR((b1.weights + b1.grads + b1.optimizer).value, 3e9, 1.0);
  EXPECT_NEAR(b1.activations.value, 4 * 1e6, 1e-6);  // 4 layers, 1 micro-batch in flight
  const MemoryBreakdown b2 = memory_per_rank(spec, plan_mbs(2), 0, o);
  EXPECT_NEAR(b2.activations.value, 4 * 2e6, 1e-6);  // twice the tokens
}

// Score-sized memory (an unfused attention's, torch_trace.cpp): of 1 MB per layer measured at b=1, s=1024, 0.25 MB
// scales with b*heads_r*s*s and the other 0.75 MB with the activations rule (34 T H); of the rest, 0.3 MB of score
// tensors at the backward's peak where the rest measured 0.2 MB: the 0.1 MB deficit scales with the rest's rule (T H),
// off the score part. At the trace: 4 layers x 1 MB, and 0.2 MB of rest. At b=1, s=2048 (2x the tokens, 4x the score
// elements): per layer 0.75 x 2 + 0.25 x 4 = 2.5 MB; the rest 0.3 x 4 - 0.1 x 2 = 1.0 MB, all of it in the
// workspace; a 0.1 MB score-sized buffer kept across steps grows to 0.4 MB there.
TEST(StackProfile, ScoreSizedMemoryScalesWithTheSequenceSquared) {
  const ModelSpec spec = small();
  auto s = std::make_shared<StackProfile>(parse(R"J({"schema": "scalescope.stack/1", "name": "x", "phases": {},
      "memory": {"weights": "0", "grads": "0", "optimizer": "0", "activations_per_layer": "34*T*H",
                 "embedding_logits": "T*H", "scores_per_layer": "recompute_none ? b*heads_r*s*s : 0",
                 "scores_transient": "b*heads_r*s*s", "scores_persistent": "b*heads_r*s*s",
                 "measured": {"activations_per_layer_bytes": 1e6, "score_activations_per_layer_bytes": 2.5e5,
                              "rest_bytes": 2e5, "score_rest_bytes": 3e5, "score_persistent_bytes": 1e5}},
      "trace": {"symbols": {"b": 1, "s": 1024, "T": 1024, "H": 1024, "heads_r": 8, "recompute_none": 1}}})J"));
  MemoryOptions o;
  o.stack = s;
  Plan p = plan_mbs(1);
  p.seq = 1024;
  const MemoryBreakdown at_trace = memory_per_rank(with_plan_seq(spec, p), p, 0, o);
  EXPECT_NEAR(at_trace.activations.value, 4e6, 1e-6);
  EXPECT_NEAR((at_trace.embedding_logits + at_trace.recompute_workspace).value, 2e5 + 1e5, 1e-6);
  p.seq = 2048;
  const MemoryBreakdown longer = memory_per_rank(with_plan_seq(spec, p), p, 0, o);
  EXPECT_NEAR(longer.activations.value, 4 * 2.5e6, 1e-6);
  EXPECT_NEAR(longer.embedding_logits.value, 0.0, 1e-9);
  EXPECT_NEAR(longer.recompute_workspace.value, 1e6 + 4e5, 1e-6);
  EXPECT_NE(error_of(R"J({"schema": "scalescope.stack/1", "name": "x", "phases": {},
      "memory": {"weights": "0", "grads": "0", "optimizer": "0", "activations_per_layer": "T",
                 "measured": {"activations_per_layer_bytes": 1, "score_activations_per_layer_bytes": 2}}})J")
                .find("$.memory.measured.score_activations_per_layer_bytes: expected at most activations_per_layer_bytes"),
            std::string::npos);
}

TEST(StackProfile, SelectionByApplies) {
  auto a = std::make_shared<const StackProfile>(parse(std::string(R"J({"schema": "scalescope.stack/1", "name": "a",
      "properties": {"applies": "zero >= 2"}, "phases": {}, )J") + kMinimalMemory + "}"));
  auto b = std::make_shared<const StackProfile>(parse(std::string(R"J({"schema": "scalescope.stack/1", "name": "b",
      "properties": {"applies": "zero <= 1"}, "phases": {}, )J") + kMinimalMemory + "}"));
  Plan z3 = plan_mbs(1);
  z3.zero = 3;
  auto pick = select_stack({b, a}, small(), z3);
  ASSERT_TRUE(pick.has_value());
  EXPECT_EQ((*pick)->name, "a");
  EXPECT_EQ((*select_stack({b, a}, small(), plan_mbs(1)))->name, "b");
  auto none = select_stack({b}, small(), z3);
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().str().find("none of the stacks"), std::string::npos);
}

TEST(StackProfile, LoaderErrorsNameTheFieldAndTheExpectation) {
  const std::string head = R"J({"schema": "scalescope.stack/1", "name": "x", )J";
  EXPECT_NE(error_of(head + R"("phases": {"layer_forward": [{"name": "g", "kind": "gemm", "m": "H", "n": "T"}]}, )" +
                     kMinimalMemory + "}").find("$.phases.layer_forward[0]: missing required key 'k'"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("phases": {"layer_forward": [{"name": "g", "kind": "memory", "bytes": "2*X"}]}, )" +
                     kMinimalMemory + "}").find("unknown name 'X'"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("phases": {"layer_forward": [{"name": "g", "kind": "memory", "bytes": "T", "time_s": 1}]}, )" +
                     kMinimalMemory + "}").find("no `trace` section"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("phases": {"layer_fwd": []}, )" + kMinimalMemory + "}").find("layer_fwd"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("vars": [["T", "1"]], "phases": {}, )" + kMinimalMemory + "}")
                .find("expected a new name"),
            std::string::npos);
  EXPECT_NE(error_of(R"J({"schema": "scalescope.stack/2", "name": "x"})J").find("scalescope.stack/1"), std::string::npos);
  // after_sync (issued after the host's synchronisation) is a layer forward row's; a share is in [0, 1].
  EXPECT_NE(error_of(head + R"("phases": {"layer_backward": [{"name": "g", "kind": "memory", "bytes": "T", "after_sync": true}]}, )" +
                     kMinimalMemory + "}").find("$.phases.layer_backward[0].after_sync: only layer_forward rows"),
            std::string::npos);
  EXPECT_NE(error_of(head + R"("phases": {}, "host": {"per_layer_microbatch_s": {"module": 0.001}, "forward_share": 1.5}, )" +
                     kMinimalMemory + "}").find("$.host.forward_share: expected a share in [0, 1]"),
            std::string::npos);
}

// predict()'s note when an imported stack is moved far from the shape it was traced at, and the choice among several
// traces of one program (validation/session24: moved 2-8x from their traces, two programs were predicted 4-7% fast on
// an H200; from the trace nearest each shape, 2.1% blind).
// One GEMM row traced at T = b s tokens (default 2 x 1024 = 2048).
std::shared_ptr<StackProfile> traced_stack(int b = 2, const std::string& name = "traced") {
  auto doc = parse_json_text(R"J({"schema": "scalescope.stack/1", "name": ")J" + name + R"J(",
      "phases": {"layer_forward": [{"name": "g", "kind": "gemm", "m": "H", "n": "T", "k": "H", "time_s": 0.001}]},
      "trace": {"symbols": {"b": )J" + std::to_string(b) + R"J(, "s": 1024, "T": )J" + std::to_string(b * 1024) +
                                 R"J(, "H": 1024}},
      "memory": {"weights": "2*P", "grads": "4*P", "optimizer": "12*P", "activations_per_layer": "34*T*H"}})J",
                             "t.json");
  EXPECT_TRUE(doc.has_value());
  auto s = stack_from_json(*doc, "t.json");
  EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().str());
  return std::make_shared<StackProfile>(std::move(s).value());
}

std::string note_for(const std::string& plan_text) {
  auto cluster = load_cluster_by_name_or_path("dgx-h100-8");
  EXPECT_TRUE(cluster.has_value());
  testing::DatasheetRig rig(std::move(cluster).value());
  rig.compute.set_stack(traced_stack());
  auto pred = predict(small(), parse_plan(plan_text).value(), rig.cluster, rig.coll, rig.compute, {});
  EXPECT_TRUE(pred.has_value()) << (pred ? "" : pred.error().str());
  if (!pred) return "";
  const auto& n = pred->check.notes;
  auto it = std::find_if(n.begin(), n.end(), [](const std::string& s) { return s.find("was traced at") != s.npos; });
  return it == n.end() ? "" : *it;
}

TEST(TraceDistanceNote, PlansMoreThanTwiceOrUnderHalfTheTracedTokensAreNoted) {
  // mbs 8 x seq 1024 = 8192 tokens: 4.0x the traced 2048.
  const std::string far = note_for("tp=1,pp=1,dp=1,mbs=8,gbs=8");
  EXPECT_NE(far.find("traced at 2048 tokens per micro-batch; this plan runs 8192 (4.0x)"), std::string::npos)
      << far;
  EXPECT_NE(far.find("validation/session24"), std::string::npos) << far;
  // 1 x 1024 = 1024: half, 4 x 1024 = 4096: twice: within the range, no note; 1 x 512 = 512: a quarter.
  EXPECT_EQ(note_for("tp=1,pp=1,dp=1,mbs=1,gbs=1"), "");
  EXPECT_EQ(note_for("tp=1,pp=1,dp=1,mbs=4,gbs=4"), "");
  EXPECT_NE(note_for("tp=1,pp=1,dp=1,mbs=1,gbs=1,seq=512").find("(0.2x)"), std::string::npos);
}

TEST(TraceDistanceNote, StacksWithoutATraceAreNotNoted) {
  auto cluster = load_cluster_by_name_or_path("dgx-h100-8");
  ASSERT_TRUE(cluster.has_value());
  testing::DatasheetRig rig(std::move(cluster).value());
  rig.compute.set_stack(load_stack("fused").value());
  auto pred = predict(small(), parse_plan("tp=1,pp=1,dp=1,mbs=16,gbs=16").value(), rig.cluster, rig.coll,
                      rig.compute, {});
  ASSERT_TRUE(pred.has_value()) << pred.error().str();
  for (const auto& n : pred->check.notes) EXPECT_EQ(n.find("was traced at"), std::string::npos) << n;
}

// predict()'s note on FP8 plans whose casts are priced as Transformer Engine's for a stack that may not run them
// (validation/session36: an eager PyTorch FP8 program ran 20-35% slower than that pricing on an H200): the built-in
// eager stack and a stack traced from a bf16 program are noted; the built-in fused (Megatron + TE) stack and bf16
// plans are not.
bool fp8_cast_note(std::shared_ptr<const StackProfile> stack, const std::string& plan_text) {
  auto cluster = load_cluster_by_name_or_path("dgx-h100-8");
  EXPECT_TRUE(cluster.has_value());
  testing::DatasheetRig rig(std::move(cluster).value());
  rig.compute.set_stack(stack);
  auto pred = predict(small(), parse_plan(plan_text).value(), rig.cluster, rig.coll, rig.compute, {});
  EXPECT_TRUE(pred.has_value()) << (pred ? "" : pred.error().str());
  if (!pred) return false;
  const auto& n = pred->check.notes;
  return std::any_of(n.begin(), n.end(), [](const std::string& s) {
    return s.find("fused cast-transpose kernels") != s.npos && s.find("validation/session36") != s.npos;
  });
}

TEST(Fp8CastNote, StacksThatMayNotRunTransformerEngineCastsAreNoted) {
  const std::string fp8 = "tp=1,pp=1,dp=1,mbs=2,gbs=2,precision=fp8,fp8_recipe=tensorwise";
  EXPECT_TRUE(fp8_cast_note(load_stack("pytorch-eager").value(), fp8));
  EXPECT_TRUE(fp8_cast_note(traced_stack(), fp8));  // traced from a program without FP8 GEMMs
  EXPECT_FALSE(fp8_cast_note(load_stack("fused").value(), fp8));
  EXPECT_FALSE(fp8_cast_note(load_stack("pytorch-eager").value(), "tp=1,pp=1,dp=1,mbs=2,gbs=2,precision=bf16"));
}

TEST(TraceDistanceNote, SeveralTracesOfAProgramEachPriceThePlansNearThem) {
  // Traced at 2 x 1024 = 2048 and 16 x 1024 = 16384 tokens per micro-batch. mbs 4 (4096 tokens): |ln 2| against
  // |ln 4|, the first; mbs 8 (8192): |ln 4| against |ln 2|, the second; in either order of the list.
  auto m = ComputeModel::datasheet(load_cluster_by_name_or_path("dgx-h100-8").value().gpu_spec()).value();
  const auto short_trace = traced_stack(2, "short"), long_trace = traced_stack(16, "long");
  auto name_for = [&](int mbs) { return m.stack_for(small(), parse_plan("mbs=" + std::to_string(mbs) + ",gbs=" + std::to_string(mbs)).value()).name; };
  m.set_stacks({short_trace, long_trace});
  EXPECT_EQ(name_for(4), "short");
  EXPECT_EQ(name_for(8), "long");
  m.set_stacks({long_trace, short_trace});
  EXPECT_EQ(name_for(4), "short");
  EXPECT_EQ(name_for(8), "long");
  // The first stack that applies is not imported (the built-in fused): it prices every plan, as before.
  m.set_stacks({load_stack("fused").value(), long_trace, short_trace});
  EXPECT_EQ(name_for(8), "fused");
}

}  // namespace
}  // namespace scalescope::models
