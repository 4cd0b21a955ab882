// Tests for the path-aware JSON reader: every error names the file, the JSON path and the
// expectation; atomic writes leave either the old or the new file, never a partial one.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "scalescope/sim/json_reader.hpp"

namespace scalescope {
namespace {

Error error_of(const Json& j, auto&& read) {
  auto r = catch_errors([&] {
    JsonCursor c(j, "x.json");
    read(c);
    return 0;
  });
  EXPECT_FALSE(r.has_value());
  return r.has_value() ? Error{} : r.error();
}

TEST(JsonReader, NegativeIntegerNamesFilePathAndExpectation) {
  const Json j = Json::parse(R"({"nodes":[{"gpus":8},{"gpus":8},{"gpus":-1}]})");
  const Error e = error_of(j, [](const JsonCursor& c) { c.at("nodes").at(2).get_positive_int("gpus"); });
  EXPECT_EQ(e.str(), "x.json: $.nodes[2].gpus: expected a positive integer, got -1");
  EXPECT_EQ(e.exit_code(), 2);
}

TEST(JsonReader, MissingKeyAndUnknownKeyAreReported) {
  const Json j = Json::parse(R"({"bandwidth_GBps": 0, "typo": 1})");
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.get_positive("latency_us"); }).str(),
            "x.json: $: missing required key 'latency_us'");
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.get_positive("bandwidth_GBps"); }).str(),
            "x.json: $.bandwidth_GBps: expected a positive number, got 0");
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.expect_keys({"bandwidth_GBps"}); }).str(),
            "x.json: $.typo: unknown key 'typo' (expected one of: bandwidth_GBps)");
}

TEST(JsonReader, EnumListsTheAcceptedValues) {
  const Json j = Json::parse(R"({"kind":"carrier-pigeon"})");
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.at("kind").as_enum({"nvlink", "pcie"}); }).str(),
            "x.json: $.kind: expected one of nvlink | pcie, got the string \"carrier-pigeon\"");
}

TEST(JsonReader, MissingAndMalformedFilesAreInputErrors) {
  auto missing = read_json_file("/nonexistent/dir/cluster.json");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().str(), "/nonexistent/dir/cluster.json: file does not exist");

  const auto dir = std::filesystem::temp_directory_path() / "scalescope_json_reader_test";
  std::filesystem::create_directories(dir);
  const auto bad = dir / "bad.json";
  std::ofstream(bad) << "{\"a\": [1, 2,, 3]}";
  auto r = read_json_file(bad);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().str().find("malformed JSON"), std::string::npos);
  EXPECT_NE(r.error().str().find("line 1"), std::string::npos);
  EXPECT_EQ(r.error().exit_code(), 2);
}

TEST(JsonReader, AtomicWriteReplacesWholeFileAndLeavesNoTemporary) {
  const auto dir = std::filesystem::temp_directory_path() / "scalescope_atomic_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const auto f = dir / "out.json";
  ASSERT_TRUE(write_file_atomic(f, "old").has_value());
  ASSERT_TRUE(write_file_atomic(f, "new content").has_value());
  std::ifstream in(f);
  std::string s((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(s, "new content");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  EXPECT_FALSE(write_file_atomic(dir / "no_such_dir" / "x.json", "x").has_value());
}

}  // namespace
}  // namespace scalescope
