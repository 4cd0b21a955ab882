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

TEST(JsonReader, NumberNoDoubleHoldsIsAnInputErrorNotAnAbort) {
  // nlohmann throws out_of_range (406) for 1e400; it used to escape the reader and abort.
  auto r = parse_json_text(R"({"layers": 1e400})", "m.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().exit_code(), 2);
  EXPECT_NE(r.error().str().find("m.json: malformed JSON: number overflow parsing '1e400'"), std::string::npos)
      << r.error().str();
}

TEST(JsonReader, NestingDeeperThanTheLimitIsRefusedBeforeParsing) {
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(parse_json_text(ok, "ok.json").has_value());
  // One level more, on line 2: refused with the line. Brackets inside strings do not count.
  const std::string deep = "\n" + std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  EXPECT_EQ(parse_json_text(deep, "d.json").error().str(), "d.json: malformed JSON: nested deeper than 128 levels at line 2");
  EXPECT_TRUE(parse_json_text("[\"" + std::string(1000, '[') + "\"]", "s.json").has_value());
}

TEST(JsonReader, IntegersAreCheckedAtFullWidth) {
  // 2^64 - 1 is stored unsigned by nlohmann; get<int64_t>() would make it -1.
  const Json j = Json::parse(R"({"a": 18446744073709551615, "b": 4294967297, "c": -3})");
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.at("a").as_int(); }).message,
            "expected an integer in [-2^63, 2^63-1], got 18446744073709551615");
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.at("a").as_positive_int(); }).message,
            "expected a positive integer, got 18446744073709551615");
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.at("b").as_int_in(0, 65536); }).message,
            "expected an integer from 0 to 65536, got 4294967297");
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.at("c").as_number_in(0.001, 1e6); }).message,
            "expected a number from 0.001 to 1e+06 (plausible range), got -3");
}

TEST(JsonReader, DropoutProbabilityIsBelowOne) {
  // 1 would drop every element; the boundary 0 (no dropout) is accepted.
  const Json j = Json::parse(R"({"zero": 0, "p": 0.1, "one": 1, "neg": -0.5, "s": "0.1"})");
  EXPECT_EQ(JsonCursor(j, "x.json").at("zero").as_dropout_probability(), 0.0);
  EXPECT_EQ(JsonCursor(j, "x.json").at("p").as_dropout_probability(), 0.1);
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.at("one").as_dropout_probability(); }).str(),
            "x.json: $.one: expected a dropout probability in [0, 1), got 1");
  EXPECT_EQ(error_of(j, [](const JsonCursor& c) { c.at("neg").as_dropout_probability(); }).message,
            "expected a dropout probability in [0, 1), got -0.5");
  EXPECT_NE(error_of(j, [](const JsonCursor& c) { c.at("s").as_dropout_probability(); }).message.find("number"),
            std::string::npos);
}

TEST(JsonReader, OutputReplacesBytesThatAreNotUtf8) {
  // \xff is never valid; \xc3\x28 is a lead byte without its continuation; \xe2\x82\xac is the euro sign.
  EXPECT_EQ(to_valid_utf8("a\xff" "b\xc3\x28" "\xe2\x82\xac"), "a\xef\xbf\xbd" "b\xef\xbf\xbd(" "\xe2\x82\xac");
  EXPECT_EQ(to_valid_utf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a UTF-16 surrogate
  const Json j = {{"host", std::string("node\xfe")}};
  EXPECT_EQ(dump_json(j, -1), "{\"host\":\"node\xef\xbf\xbd\"}");
}

}  // namespace
}  // namespace scalescope
