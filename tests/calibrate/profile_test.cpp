// Tests of calibration-profile loading, validation errors, writing back and merging.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "scalescope/calibrate/profile.hpp"

namespace scalescope::calib {
namespace {

const std::string kMini = std::string(SCALESCOPE_TEST_DATA) + "/profiles/mini.json";

Json mini_json() {
  auto doc = read_json_file(kMini);
  EXPECT_TRUE(doc.has_value());
  return *doc;
}

/// The error message of loading `doc` (empty if it loads).
std::string load_error(const Json& doc) {
  auto p = profile_from_json(doc, "x.json");
  return p ? std::string() : p.error().str();
}

TEST(ProfileLoad, ReadsCollectivesGemmAndMemory) {
  auto p = load_profile(kMini);
  ASSERT_TRUE(p) << p.error().str();
  // mini.json (hand-written): two collectives entries, two GEMM rows, memory numbers.
  ASSERT_EQ(p->collectives.size(), 2u);
  EXPECT_EQ(p->collectives[0].op, "all_reduce");
  EXPECT_EQ(p->collectives[0].coll_op(), CollOp::all_reduce);
  EXPECT_FALSE(p->collectives[1].coll_op().has_value());  // sendrecv_pair has no model op
  EXPECT_EQ(p->collectives[1].src, 0);
  ASSERT_EQ(p->collectives[0].rows.size(), 2u);
  EXPECT_DOUBLE_EQ(p->collectives[0].rows[1].bytes, 1048576.0);
  EXPECT_DOUBLE_EQ(p->collectives[0].rows[1].time_us, 20.0);
  EXPECT_EQ(p->collectives[0].rows[1].reps, 5);
  ASSERT_EQ(p->gemm.size(), 2u);
  EXPECT_EQ(p->gemm[1].error, "no algorithm");
  EXPECT_FALSE(p->gemm[1].time_us.has_value());
  EXPECT_EQ(p->gpu_name(), "NVIDIA H200");
  EXPECT_EQ(p->memory_number("d2d_copy_GBps"), 4100.5);
  EXPECT_FALSE(p->memory_number("h2d_GBps").has_value());
  EXPECT_EQ(p->name(), "mini");
}

TEST(ProfileLoad, RejectsUnknownTopLevelKeyWithPath) {
  Json doc = mini_json();
  doc["colectives"] = Json::array();
  EXPECT_NE(load_error(doc).find("x.json: $.colectives: unknown key"), std::string::npos) << load_error(doc);
}

TEST(ProfileLoad, RejectsWrongSchema) {
  Json doc = mini_json();
  doc["schema"] = "scalescope.calibration/9";
  EXPECT_NE(load_error(doc).find("$.schema: expected \"scalescope.calibration/1\""), std::string::npos);
}

TEST(ProfileLoad, RejectsUnknownOpNamingItsPath) {
  Json doc = mini_json();
  doc["collectives"][0]["op"] = "allreduce";
  EXPECT_NE(load_error(doc).find("$.collectives[0].op: expected one of all_reduce"), std::string::npos) << load_error(doc);
}

TEST(ProfileLoad, RejectsRanksThatDisagreeWithNranks) {
  Json doc = mini_json();
  doc["collectives"][0]["nranks"] = 3;
  EXPECT_NE(load_error(doc).find("$.collectives[0].ranks: expected 3 ranks (nranks), got 2"), std::string::npos)
      << load_error(doc);
}

TEST(ProfileLoad, RejectsRowWithoutTimeAndNegativeBandwidth) {
  Json doc = mini_json();
  doc["collectives"][0]["rows"][1].erase("time_us");
  EXPECT_NE(load_error(doc).find("$.collectives[0].rows[1]: missing required key 'time_us'"), std::string::npos)
      << load_error(doc);
  doc = mini_json();
  doc["collectives"][0]["rows"][0]["busbw_GBps"] = -1;
  EXPECT_NE(load_error(doc).find("$.collectives[0].rows[0].busbw_GBps"), std::string::npos) << load_error(doc);
}

TEST(ProfileLoad, RejectsGemmRowWithoutTimeOrError) {
  Json doc = mini_json();
  doc["gemm"][1].erase("error");
  EXPECT_NE(load_error(doc).find("$.gemm[1]: a GEMM row needs time_us"), std::string::npos) << load_error(doc);
}

TEST(ProfileLoad, MissingFileNamesIt) {
  auto p = load_profile("/nonexistent/h.json");
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().str(), "/nonexistent/h.json: file does not exist");
}

TEST(ProfileLoad, UnknownNameListsWhatExists) {
  auto p = load_profile_by_name_or_path("no-such-profile-name");
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("no built-in profile of that name (available:"), std::string::npos);
}

TEST(ProfileWrite, RoundTripKeepsEveryValue) {
  auto p = load_profile(kMini);
  ASSERT_TRUE(p);
  const Json once = to_json(*p);
  auto again = profile_from_json(once, "again.json");
  ASSERT_TRUE(again) << again.error().str();
  EXPECT_EQ(to_json(*again), once);
  // The sections kept as JSON come back unchanged.
  EXPECT_EQ(once["host"], mini_json()["host"]);
  EXPECT_EQ(once["collectives"][0]["rows"], mini_json()["collectives"][0]["rows"]);
}

TEST(ProfileWrite, WritesAtomicallyAndReadsBack) {
  auto p = load_profile(kMini);
  ASSERT_TRUE(p);
  const auto dir = std::filesystem::temp_directory_path() / ("scalescope_profile_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "out.json";
  ASSERT_TRUE(write_profile(*p, file));
  auto back = load_profile(file);
  ASSERT_TRUE(back) << back.error().str();
  EXPECT_EQ(back->collectives.size(), 2u);
  std::filesystem::remove_all(dir);
}

TEST(ProfileMerge, UnitesRowsBySizeAndExtraWins) {
  auto base = load_profile(kMini);
  ASSERT_TRUE(base);
  Profile extra;
  extra.provenance = "imported from nccl-tests a.log";
  CollEntry e = base->collectives[0];
  e.rows = {e.rows[1]};
  e.rows[0].time_us = 25.0;  // same size as base's second row: replaces it
  CollRow bigger = e.rows[0];
  bigger.bytes = 2097152;
  e.rows.push_back(bigger);  // a new size: added
  e.source = "nccl-tests a.log";
  extra.collectives.push_back(e);
  CollEntry other = e;
  other.op = "all_gather";
  extra.collectives.push_back(other);  // a new entry: appended
  const int replaced = merge_into(*base, extra);
  // Base rows {1024, 1 MiB} + extra {1 MiB (replaces), 2 MiB} -> {1024, 1 MiB, 2 MiB}, one replaced.
  EXPECT_EQ(replaced, 1);
  ASSERT_EQ(base->collectives.size(), 3u);
  ASSERT_EQ(base->collectives[0].rows.size(), 3u);
  EXPECT_DOUBLE_EQ(base->collectives[0].rows[1].time_us, 25.0);
  EXPECT_DOUBLE_EQ(base->collectives[0].rows[2].bytes, 2097152.0);
  EXPECT_EQ(base->collectives[2].op, "all_gather");
  EXPECT_EQ(base->provenance, "measured; merged with imported from nccl-tests a.log");
}

}  // namespace
}  // namespace scalescope::calib
