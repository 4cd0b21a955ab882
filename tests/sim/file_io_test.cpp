// Tests for bounded reads and the one atomic, exclusive write path (sim/file_io.hpp): special files are
// refused and left alone, symbolic links are not followed on write, "-" is stdout, permissions survive.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "scalescope/sim/file_io.hpp"

namespace scalescope {
namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path dir = fs::temp_directory_path() / ("scalescope_file_io_" + std::to_string(::getpid()));
  TempDir() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~TempDir() { fs::remove_all(dir); }
  std::size_t entries() const { return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), {})); }
};

std::string slurp(const fs::path& f) {
  std::ifstream in(f);
  return {std::istreambuf_iterator<char>(in), {}};
}

TEST(ReadInputFile, FifoIsRefusedWithoutBlocking) {
  TempDir t;
  const auto fifo = t.dir / "in.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto r = read_input_file(fifo, kMaxInputFileBytes, "JSON file");  // no writer: open() would block
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().str(), fifo.string() + ": is a FIFO (named pipe), expected a regular JSON file");
  EXPECT_EQ(r.error().exit_code(), 2);
}

TEST(ReadInputFile, DeviceFolderAndLinkLoopAreRefused) {
  TempDir t;
  EXPECT_EQ(read_input_file("/dev/zero").error().message, "is a character device, expected a regular file");
  EXPECT_EQ(read_input_file(t.dir).error().message, "is a folder, expected a regular file");
  fs::create_symlink(t.dir / "b", t.dir / "a");
  fs::create_symlink(t.dir / "a", t.dir / "b");
  EXPECT_EQ(read_input_file(t.dir / "a").error().message, "symbolic link loop (too many levels of links)");
}

TEST(ReadInputFile, SizeAboveTheLimitIsRefusedBeforeReading) {
  TempDir t;
  const auto big = t.dir / "big.log";
  { std::ofstream(big) << std::string(2000, 'x'); }
  auto r = read_input_file(big, 1024, "nccl-tests log");
  ASSERT_FALSE(r.has_value());
  // 1024 bytes is "0 MiB" in the message's unit; the limit and the size are both named.
  EXPECT_NE(r.error().message.find("is 2000 bytes; a nccl-tests log larger than"), std::string::npos) << r.error().message;
  EXPECT_EQ(read_input_file(big, 4096).value(), std::string(2000, 'x'));
}

TEST(WriteFileAtomic, FifoTargetIsRefusedAndStaysAFifo) {
  TempDir t;
  const auto fifo = t.dir / "trace.json";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto w = write_file_atomic(fifo, "data");
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().message, "is a FIFO (named pipe); results are written only to regular files or new files");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(t.entries(), 1u);  // no temporary file left
}

TEST(WriteFileAtomic, SymlinkTargetIsRefusedAndItsTargetUntouched) {
  TempDir t;
  const auto victim = t.dir / "victim.txt";
  { std::ofstream(victim) << "precious"; }
  fs::create_symlink(victim, t.dir / "out.json");
  auto w = write_file_atomic(t.dir / "out.json", "overwritten");
  ASSERT_FALSE(w.has_value());
  EXPECT_NE(w.error().message.find("is a symbolic link to " + victim.string()), std::string::npos) << w.error().message;
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_TRUE(fs::is_symlink(t.dir / "out.json"));
  EXPECT_EQ(t.entries(), 2u);
}

TEST(WriteFileAtomic, ExistingFileKeepsItsPermissionsAndNoTemporaryRemains) {
  TempDir t;
  const auto f = t.dir / "profile.json";
  { std::ofstream(f) << "old"; }
  ASSERT_EQ(::chmod(f.c_str(), 0640), 0);
  ASSERT_TRUE(write_file_atomic(f, "new").has_value());
  EXPECT_EQ(slurp(f), "new");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(t.entries(), 1u);
}

TEST(WriteFileAtomic, DashWritesToStdout) {
  testing::internal::CaptureStdout();
  ASSERT_TRUE(write_file_atomic("-", "to stdout\n").has_value());
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "to stdout\n");
}

TEST(WriteFileAtomic, MissingFolderAndFolderTargetAreInputErrors) {
  TempDir t;
  auto w = write_file_atomic(t.dir / "no" / "x.json", "x");
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().exit_code(), 2);
  EXPECT_NE(w.error().message.find("does not exist"), std::string::npos);
  fs::create_directories(t.dir / "sub");
  EXPECT_EQ(write_file_atomic(t.dir / "sub", "x").error().message,
            "is a folder; results are written only to regular files or new files");
}

}  // namespace
}  // namespace scalescope
