// GUI session files (scalescope_gui_core, no Qt): hostile inputs give input errors naming the field;
// saving goes through the atomic writer (a FIFO is refused and left alone); a saved session loads back.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "scalescope/gui/workbench.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace fs = std::filesystem;
using namespace scalescope;

namespace {

Json base_session() { return gui::session_to_json(gui::Session{}); }

std::string error_of(const Json& doc) {
  auto s = gui::session_from_json(doc, "s.json");
  EXPECT_FALSE(s.has_value());
  if (s) return {};
  EXPECT_EQ(s.error().kind, Error::Kind::input);
  return s.error().str();
}

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("scalescope-session-test-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(SessionHostile, NodeCountIsRangeCheckedBeforeNarrowing) {
  Json d = base_session();
  d["nodes"] = std::int64_t{1} << 40;  // would be 0 as an int
  EXPECT_NE(error_of(d).find("s.json: $.nodes: expected an integer from 0 to 1048576"), std::string::npos) << error_of(d);
  d["nodes"] = std::uint64_t{18446744073709551615ULL};  // would be -1 as an int64
  EXPECT_NE(error_of(d).find("$.nodes: expected an integer from 0 to"), std::string::npos) << error_of(d);
}

TEST(SessionHostile, WrongTypesNameTheField) {
  Json d = base_session();
  d["nodes"] = "8";
  EXPECT_NE(error_of(d).find("$.nodes: expected an integer from 0 to 1048576, got the string \"8\""), std::string::npos);
  d = base_session();
  d["plan"] = 3;
  EXPECT_NE(error_of(d).find("$.plan: expected an object, got 3"), std::string::npos) << error_of(d);
  d["plan"] = Json{{"tp", "eight"}, {"gbs", 8}};  // a field inside the plan is named from the session's root
  EXPECT_NE(error_of(d).find("$.plan.tp"), std::string::npos) << error_of(d);
  d = base_session();
  d["interference"] = "yes";
  EXPECT_NE(error_of(d).find("$.interference: expected true or false"), std::string::npos);
}

TEST(SessionHostile, WhatIfFactorsStayInTheirPlausibleRange) {
  Json d = base_session();
  d["nvlink_scale"] = 1e308;  // finite, but no slider reaches it: bandwidths of 1e308 GB/s
  EXPECT_NE(error_of(d).find("$.nvlink_scale: expected a number from 0.001 to 1000"), std::string::npos) << error_of(d);
  d["nvlink_scale"] = -1;
  EXPECT_NE(error_of(d).find("$.nvlink_scale"), std::string::npos);
}

TEST(SessionHostile, DeepNestingAndHugeNumbersAreReadErrors) {
  const fs::path dir = temp_dir();
  const fs::path deep = dir / "deep.json";
  std::ofstream(deep) << std::string(100000, '[') << std::string(100000, ']');
  auto s = gui::load_session(deep);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().str().find("nested deeper than 128 levels"), std::string::npos) << s.error().str();
  const fs::path huge = dir / "huge.json";
  std::ofstream(huge) << R"({"schema": "scalescope.gui_session/1", "nodes": 1e400})";
  s = gui::load_session(huge);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().str().find("numbers must fit a finite double"), std::string::npos) << s.error().str();
  fs::remove_all(dir);
}

TEST(SessionHostile, SaveRefusesAFifoAndRoundTrips) {
  const fs::path dir = temp_dir();
  const fs::path fifo = dir / "fifo.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  gui::Session session;
  session.nodes = 2;
  session.nvlink_scale = 0.5;
  auto w = gui::save_session(session, fifo);
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().str().find("is a FIFO"), std::string::npos) << w.error().str();
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));  // not replaced by a regular file
  const fs::path file = dir / "s.json";
  ASSERT_TRUE(gui::save_session(session, file).has_value());
  auto back = gui::load_session(file);
  ASSERT_TRUE(back.has_value()) << back.error().str();
  EXPECT_EQ(back->nodes, 2);
  EXPECT_EQ(back->nvlink_scale, 0.5);
  fs::remove_all(dir);
}
