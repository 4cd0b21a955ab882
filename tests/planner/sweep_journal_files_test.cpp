// The sweep journal (OUT.partial) as a file a hostile user controls: a planted symbolic link is refused and its
// target left alone, a FIFO is refused without blocking, an oversized journal is refused before it is read, and
// lines that are not journal lines (too deep, an array header) are input errors naming the line.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scalescope/planner/sweep.hpp"
#include "scalescope/planner/sweep_output.hpp"

namespace scalescope::planner {
namespace {

namespace fs = std::filesystem;

SweepSpec spec() {
  auto s = parse_sweep_spec(Json::parse(R"({"format": "scalescope.sweep/1", "mode": "simulate", "models": ["llama3-8b"],
      "clusters": ["dgx-h100-8"], "gpus": [8], "global_batches": [32], "plans": ["tp=2"]})"), "s.json");
  EXPECT_TRUE(s) << (s ? "" : s.error().str());
  return std::move(s).value();
}

struct Dir {
  fs::path path = fs::temp_directory_path() / ("scalescope_journal_files_" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
};

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(SweepJournalFiles, APlantedSymbolicLinkIsRefusedAndItsTargetKept) {
  Dir d;
  const fs::path victim = d.path / "victim.txt";
  std::ofstream(victim) << "precious\n";
  fs::create_symlink(victim, d.path / "r.csv.partial");
  auto j = SweepJournal::open(d.path / "r.csv", spec(), false);
  ASSERT_FALSE(j);
  EXPECT_EQ(j.error().kind, Error::Kind::input);
  EXPECT_NE(j.error().message.find("is a symbolic link"), std::string::npos) << j.error().str();
  EXPECT_EQ(read(victim), "precious\n");
  EXPECT_FALSE(SweepJournal::open(d.path / "r.csv", spec(), true));  // --restart does not follow it either
  EXPECT_EQ(read(victim), "precious\n");
}

TEST(SweepJournalFiles, AFifoIsRefusedWithoutBlocking) {
  Dir d;
  ASSERT_EQ(::mkfifo((d.path / "r.csv.partial").c_str(), 0644), 0);
  auto j = SweepJournal::open(d.path / "r.csv", spec(), false);  // would block in read() if it were opened as a file
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().message.find("not a regular file"), std::string::npos) << j.error().str();
}

TEST(SweepJournalFiles, AnOversizedJournalIsRefusedBeforeItIsRead) {
  Dir d;
  { std::ofstream create(d.path / "r.csv.partial"); }
  fs::resize_file(d.path / "r.csv.partial", kMaxInputFileBytes + 1);  // sparse: nothing is written
  auto j = SweepJournal::open(d.path / "r.csv", spec(), false);
  ASSERT_FALSE(j);
  EXPECT_NE(j.error().message.find("larger than 256 MiB is refused"), std::string::npos) << j.error().str();
}

TEST(SweepJournalFiles, LinesThatAreNotJournalLinesAreErrorsNamingTheLine) {
  Dir d;
  const fs::path journal = d.path / "r.csv.partial";
  // A header line nested 1,000 deep: refused by the reader's depth pre-scan (128), not parsed recursively.
  std::ofstream(journal) << std::string(1000, '[') << std::string(1000, ']') << "\n{}\n";
  auto deep = SweepJournal::open(d.path / "r.csv", spec(), false);
  ASSERT_FALSE(deep);
  EXPECT_EQ(deep.error().path, "line 1");
  EXPECT_NE(deep.error().message.find("nested deeper than 128"), std::string::npos) << deep.error().str();
  // A header that is an array (it once reached Json::value() on a non-object, an uncaught exception).
  std::ofstream(journal) << "[1]\n{\"point\": 0, \"rows\": []}\n";
  auto array = SweepJournal::open(d.path / "r.csv", spec(), false);
  ASSERT_FALSE(array);
  EXPECT_EQ(array.error().path, "line 1");
  EXPECT_NE(array.error().message.find("fingerprint ?"), std::string::npos) << array.error().str();
}

}  // namespace
}  // namespace scalescope::planner
