// Tests of the collective-model parameters: datasheet values and provenance, JSON round trip,
// partial overrides and path-aware errors.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace scalescope
