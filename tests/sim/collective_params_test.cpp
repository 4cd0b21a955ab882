// Tests of the collective-model parameters: datasheet values and provenance, JSON round trip,
// partial overrides and path-aware errors.
#include <gtest/gtest.h>

#include "collective_test_clusters.hpp"
#include "scalescope/sim/collective.hpp"
#include "scalescope/sim/collective_params.hpp"

namespace scalescope {
namespace {

TEST(CollectiveParams, DatasheetHasNcclTuningValuesAndSources) {
  const CollectiveParams p = datasheet_collective_params();
  // NCCL 2.19 tuning.cc: baseLat ring {6.6, 14.0, 8.4}, hwLat NET ring Simple 14.0.
  EXPECT_DOUBLE_EQ(p.base_latency(Algorithm::ring, Protocol::LL), 6.6);
  EXPECT_DOUBLE_EQ(p.base_latency(Algorithm::ring, Protocol::Simple), 8.4);
  EXPECT_DOUBLE_EQ(p.hop_latency(LinkClass::net, Algorithm::ring, Protocol::Simple), 14.0);
  EXPECT_DOUBLE_EQ(p.hop_latency(LinkClass::nvlink, Algorithm::tree, Protocol::Simple), 28.0);
  // NCCL topo.h: 20 GB/s credited per 25 GB/s NVLink.
  EXPECT_DOUBLE_EQ(p.link_eff(LinkClass::nvlink), 0.8);
  for (const std::string* s : {&p.base_latency_source, &p.hop_latency_source, &p.protocol_efficiency_source,
                               &p.link_efficiency_source, &p.bus_efficiency_source, &p.channels_source})
    EXPECT_FALSE(s->empty());
  EXPECT_NE(p.link_efficiency_source.find("datasheet"), std::string::npos);
}

TEST(CollectiveParams, JsonRoundTripKeepsEveryValue) {
  const CollectiveParams p = datasheet_collective_params();
  const Json j = to_json(p);
  auto back = collective_params_from_json(j, "rt.json");
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(to_json(*back), j);
}

TEST(CollectiveParams, PartialGroupKeepsDefaultsAndSaysSo) {
  const Json j = Json::parse(R"({"link_efficiency": {"source": "fitted from lab.json", "nvlink": 0.83}})");
  auto p = collective_params_from_json(j, "fit.json");
  ASSERT_TRUE(p.has_value()) << p.error().str();
  EXPECT_DOUBLE_EQ(p->link_eff(LinkClass::nvlink), 0.83);
  EXPECT_DOUBLE_EQ(p->link_eff(LinkClass::net), 0.92);
  EXPECT_EQ(p->link_efficiency_source.rfind("fitted from lab.json; other entries: datasheet", 0), 0u)
      << p->link_efficiency_source;
  // A complete group takes the given source alone; absent groups keep the datasheet source.
  const Json full = Json::parse(R"({"link_efficiency": {"source": "measured", "nvlink": 0.8, "pcie": 0.7, "net": 0.9}})");
  auto q = collective_params_from_json(full, "m.json");
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->link_efficiency_source, "measured");
  EXPECT_EQ(q->hop_latency_source, datasheet_collective_params().hop_latency_source);
}

TEST(CollectiveParams, ErrorsNameFilePathAndExpectation) {
  auto err = [](const char* text) {
    auto r = collective_params_from_json(Json::parse(text), "c.json");
    EXPECT_FALSE(r.has_value());
    return r.has_value() ? std::string() : r.error().str();
  };
  EXPECT_EQ(err(R"({"link_efficiency": {"source": "x", "nvlink": 1.5}})"),
            "c.json: $.link_efficiency.nvlink: expected a fraction in (0, 1], got 1.5");
  EXPECT_EQ(err(R"({"link_efficiency": {"nvlink": 0.5}})"), "c.json: $.link_efficiency: missing required key 'source'");
  EXPECT_EQ(err(R"({"bus_efficiency": {"source": "x", "all_gather": {"tree": {"net": 1}}}})"),
            "c.json: $.bus_efficiency.all_gather.tree: unknown key 'tree' (expected one of: ring)");
  EXPECT_EQ(err(R"({"channels": {"source": "x", "count": 0}})"),
            "c.json: $.channels.count: expected a positive integer, got 0");
  EXPECT_EQ(err(R"({"latency": 1})").find("c.json: $.latency: unknown key 'latency'"), 0u);
  EXPECT_EQ(err(R"({"protocol_efficiency": {"source": "x", "ring": {"Simple": 0}}})"),
            "c.json: $.protocol_efficiency: protocol_efficiency of ring/Simple must stay positive (Simple is always "
            "available)");
}


TEST(SizeCurve, PiecewiseLinearInLog2SizeAndConstantBeyondTheEnds) {
  CollectiveParams::SizeCurve c;
  c.log2_bytes = {10.0, 20.0};  // 1 KiB and 1 MiB
  c.factor = {0.5, 1.0};
  // 32 KiB = 2^15 lies halfway between the knots in log2: 0.5 + 0.5 x (1.0 - 0.5) = 0.75.
  EXPECT_DOUBLE_EQ(c.at(32.0 * 1024.0), 0.75);
  // Below the first knot and above the last the end values hold.
  EXPECT_DOUBLE_EQ(c.at(8.0), 0.5);
  EXPECT_DOUBLE_EQ(c.at(1024.0 * 1024.0 * 1024.0), 1.0);
  EXPECT_DOUBLE_EQ(c.at(1024.0), 0.5);
  // No knots: 1 everywhere (the datasheet has no curve).
  EXPECT_DOUBLE_EQ(CollectiveParams::SizeCurve{}.at(12345.0), 1.0);
}

TEST(SizeCurve, SendrecvOnThreeOrMoreRanksUsesTheDistinctPeersCurveWhenGiven) {
  CollectiveParams p = datasheet_collective_params();
  p.size_efficiency[idx(CollOp::sendrecv)] = {{10.0}, {0.9}};
  // Without a distinct-peers curve every group size uses the op's curve.
  EXPECT_DOUBLE_EQ(p.size_curve(CollOp::sendrecv, 4).at(1024.0), 0.9);
  p.sendrecv_distinct_peers = {{10.0}, {0.6}};
  EXPECT_DOUBLE_EQ(p.size_curve(CollOp::sendrecv, 2).at(1024.0), 0.9);
  EXPECT_DOUBLE_EQ(p.size_curve(CollOp::sendrecv, 3).at(1024.0), 0.6);
  // Other ops never use it.
  EXPECT_DOUBLE_EQ(p.size_curve(CollOp::all_reduce, 4).at(1024.0), 1.0);
}

TEST(SizeCurve, JsonRoundTripAndOldFilesWithoutCurvesStillLoad) {
  CollectiveParams p = datasheet_collective_params();
  p.size_efficiency[idx(CollOp::alltoall)] = {{3.0, 30.0}, {1.25, 0.8}};
  p.sendrecv_distinct_peers = {{20.0}, {0.5}};
  p.size_efficiency_source = "fitted from lab.json";
  const Json j = to_json(p);
  ASSERT_TRUE(j.contains("size_efficiency"));
  auto back = collective_params_from_json(j, "rt.json");
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(to_json(*back), j);
  EXPECT_DOUBLE_EQ(back->size_curve(CollOp::alltoall, 2).at(8.0), 1.25);
  EXPECT_EQ(back->size_efficiency_source, "fitted from lab.json");
  // A file written before the curves existed has no size_efficiency group: every curve is empty.
  Json old = to_json(datasheet_collective_params());
  EXPECT_FALSE(old.contains("size_efficiency"));
  auto q = collective_params_from_json(old, "old.json");
  ASSERT_TRUE(q.has_value()) << q.error().str();
  for (CollOp op : kAllCollOps) EXPECT_TRUE(q->size_curve(op, 4).empty());
}

TEST(SizeCurve, BadCurvesAreErrorsWithTheirPath) {
  auto err = [](const char* text) {
    auto r = collective_params_from_json(Json::parse(text), "c.json");
    EXPECT_FALSE(r.has_value());
    return r.has_value() ? std::string() : r.error().str();
  };
  EXPECT_EQ(err(R"({"size_efficiency": {"source": "x", "all_reduce": {"log2_bytes": [10, 10], "factor": [1, 1]}}})"),
            "c.json: $.size_efficiency.all_reduce.log2_bytes[1]: expected knots in strictly increasing order, got 10");
  EXPECT_EQ(err(R"({"size_efficiency": {"source": "x", "all_reduce": {"log2_bytes": [10], "factor": [1, 2]}}})"),
            "c.json: $.size_efficiency.all_reduce.factor: expected as many factors as log2_bytes knots (1), got 2");
  EXPECT_EQ(err(R"({"size_efficiency": {"source": "x", "all_reduce": {"log2_bytes": [10], "factor": [0]}}})"),
            "c.json: $.size_efficiency.all_reduce.factor[0]: expected a positive number, got 0");
  EXPECT_EQ(err(R"({"size_efficiency": {"all_reduce": {"log2_bytes": [], "factor": []}}})"),
            "c.json: $.size_efficiency: missing required key 'source'");
  EXPECT_EQ(err(R"({"size_efficiency": {"source": "x", "allreduce": {}}})").find(
                "c.json: $.size_efficiency.allreduce: unknown key 'allreduce'"),
            0u);
}


using testing::make_cluster;
using testing::nvswitch_node;

TEST(SizeCurve, DividesTheWholeTimeInBothFidelities) {
  const Cluster c = make_cluster("nvs4", nvswitch_node(4, 100.0));
  const std::vector<int> ranks{0, 1, 2, 3};
  const CollectiveParams plain = datasheet_collective_params();
  CollectiveParams curved = plain;
  // 0.5 at 1 MiB (2^20) and below, 1 at 1 GiB (2^30) and above: at 32 MiB (2^25) halfway, 0.75.
  curved.size_efficiency[idx(CollOp::all_gather)] = {{20.0, 30.0}, {0.5, 1.0}};
  const CollectiveModel a(c, plain), b(c, curved);
  for (double s : {1024.0, 32.0 * 1024 * 1024}) {
    const double e = s < 2e6 ? 0.5 : 0.75;
    const CollResult ra = a.analytical(CollOp::all_gather, ranks, Bytes(s));
    const CollResult rb = b.analytical(CollOp::all_gather, ranks, Bytes(s));
    // Every candidate's time is divided by the same e, so the choice stays and the time is t / e.
    EXPECT_EQ(rb.protocol, ra.protocol);
    EXPECT_NEAR(rb.time.value, ra.time.value / e, 1e-12 * ra.time.value / e);
    EXPECT_NEAR(rb.latency.value, ra.latency.value / e, 1e-15);
    // The flow run moves the same wire bytes after the same latency: it agrees up to the engine's
    // 1 ns clock: base latency (1 rounding) and 3 ring-step phases of latency + flow (2 each): 7 ns.
    EXPECT_NEAR(b.simulate_flow(CollOp::all_gather, ranks, Bytes(s)).time.value, rb.time.value, 7e-9);
    // Other ops keep their time.
    EXPECT_DOUBLE_EQ(b.analytical(CollOp::broadcast, ranks, Bytes(s)).time.value,
                     a.analytical(CollOp::broadcast, ranks, Bytes(s)).time.value);
  }
}

TEST(SizeCurve, ModelSharingAnotherModelsGroupsGivesTheSameTimes) {
  const Cluster c = make_cluster("nvs4", nvswitch_node(4, 100.0));
  const std::vector<int> ranks{0, 1, 2};
  CollectiveParams p = datasheet_collective_params();
  const CollectiveModel shape(c, p);
  (void)shape.analytical(CollOp::all_reduce, ranks, Bytes(1024.0));  // caches the group's patterns
  p.base_latency_us[idx(Algorithm::ring)][idx(Protocol::LL)] = 20.0;
  const CollectiveModel shared(shape, p), fresh(c, p);
  for (double s : {8.0, 65536.0, 1e9})
    EXPECT_DOUBLE_EQ(shared.analytical(CollOp::all_reduce, ranks, Bytes(s)).time.value,
                     fresh.analytical(CollOp::all_reduce, ranks, Bytes(s)).time.value);
}

}  // namespace
}  // namespace scalescope
