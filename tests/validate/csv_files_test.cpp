// CSV tables (validate/csv.hpp) read as files a hostile user controls: a FIFO or device is refused without
// blocking and a file over 64 MiB before it is read, each naming the file; a regular table still reads.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "scalescope/validate/csv.hpp"

namespace scalescope::validate {
namespace {

namespace fs = std::filesystem;

struct Dir {
  fs::path path = fs::temp_directory_path() / ("scalescope_csv_files_" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
};

TEST(CsvFiles, ARegularTableReadsWithItsLineNumbers) {
  Dir d;
  std::ofstream(d.path / "t.csv") << "\xEF\xBB\xBFgpus,time\r\n8,1.5\r\n\r\n16,0.8\r\n";
  auto t = read_csv(d.path / "t.csv");
  ASSERT_TRUE(t) << t.error().str();
  EXPECT_EQ(t->header, (std::vector<std::string>{"gpus", "time"}));
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(t->rows[1][1], "0.8");
  EXPECT_EQ(t->lines, (std::vector<std::size_t>{2, 4}));  // the empty line 3 is skipped, not renumbered
}

TEST(CsvFiles, SpecialAndOversizedFilesAreRefusedNamingTheFile) {
  Dir d;
  const fs::path fifo = d.path / "t.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto f = read_csv(fifo);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().str(), fifo.string() + ": is a FIFO (named pipe), expected a regular CSV table");
  auto dev = read_csv("/dev/zero");
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().str(), "/dev/zero: is a character device, expected a regular CSV table");
  const fs::path big = d.path / "big.csv";
  { std::ofstream create(big); }
  fs::resize_file(big, (std::uint64_t{64} << 20) + 1);  // sparse
  auto b = read_csv(big);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().str().find("a CSV table larger than 64 MiB is refused"), std::string::npos) << b.error().str();
}

}  // namespace
}  // namespace scalescope::validate
