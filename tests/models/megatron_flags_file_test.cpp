// --plan-from-megatron FILE read as a file a hostile user controls: its flags are read; a FIFO or device is refused
// without blocking and a file over 1 MiB before it is read, each naming the file.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "scalescope/models/megatron_flags.hpp"

namespace scalescope::models {
namespace {

namespace fs = std::filesystem;

struct Dir {
  fs::path path = fs::temp_directory_path() / ("scalescope_megatron_file_" + std::to_string(::getpid()));
  Dir() { fs::create_directories(path); }
  ~Dir() { fs::remove_all(path); }
};

std::string error_of(const std::string& file) {
  auto r = plan_from_megatron(file, load_model_by_name_or_path("llama3-8b").value(), 8);
  EXPECT_FALSE(r.has_value()) << file;
  return r ? "" : r.error().str();
}

TEST(MegatronFlagsFile, AFileIsReadAndItsFlagsSetThePlan) {
  Dir d;
  const fs::path f = d.path / "launch.sh";
  std::ofstream(f) << "torchrun pretrain_gpt.py \\\n  --tensor-model-parallel-size 2 --micro-batch-size 1 \\\n"
                      "  --global-batch-size 32 --bf16\n";
  auto r = plan_from_megatron(f.string(), load_model_by_name_or_path("llama3-8b").value(), 8);
  ASSERT_TRUE(r.has_value()) << r.error().str();
  EXPECT_EQ(r->plan.tp, 2);
  EXPECT_EQ(r->plan.dp, 4);  // 8 GPUs / tp 2
  EXPECT_EQ(r->plan.gbs, 32);
}

TEST(MegatronFlagsFile, SpecialAndOversizedFilesAreRefusedNamingTheFile) {
  Dir d;
  const std::string fifo = (d.path / "flags.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_NE(error_of(fifo).find(fifo + ": is a FIFO (named pipe), expected a regular Megatron flags file"),
            std::string::npos);
  EXPECT_NE(error_of("/dev/zero").find("/dev/zero: is a character device"), std::string::npos);
  const fs::path big = d.path / "big.sh";
  { std::ofstream create(big); }
  fs::resize_file(big, (1 << 20) + 1);
  EXPECT_NE(error_of(big.string()).find("a Megatron flags file larger than 1 MiB is refused"), std::string::npos);
}

}  // namespace
}  // namespace scalescope::models
