// predict()'s note when an imported stack is moved far from the shape it was traced at (validation/session24: two
// programs moved 2-8x from their traces were predicted 4-7% fast on an H200; traced at the plans' size, 2%).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "datasheet_rig.hpp"
#include "scalescope/models/predict.hpp"
#include "scalescope/models/stack_profile.hpp"

namespace scalescope::models {
namespace {

ModelSpec small() {
  ModelSpec m;
  m.name = "small";
  m.layers = 2;
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
  EXPECT_NE(far.find("traced at 2048 tokens per micro-batch and rank; this plan runs 8192 (4.0x)"), std::string::npos)
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
