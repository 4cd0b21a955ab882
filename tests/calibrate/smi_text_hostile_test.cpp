// nvidia-smi text that no nvidia-smi prints (fuzz/smi_text.cpp found the first): a device index of more digits than
// an int holds is no GPU line (it overflowed the int, undefined behaviour), and the GPUs around it still count.
#include <gtest/gtest.h>

#include "scalescope/calibrate/smi_text.hpp"

namespace scalescope::smi_text {
namespace {

TEST(NvlinkStatusHostile, AnIndexBeyondTwoToTheTwentyIsNoGpuLine) {
  // GPU 0 with one 26.562 GB/s link; "GPU 555555555555" is skipped, so its link line belongs to GPU 0 (2 links);
  // GPU 1048576 (2^20) is the largest index read.
  const auto gpus = parse_nvlink_status(
      "GPU 0: NVIDIA H200 (UUID: GPU-0)\n\t Link 0: 26.562 GB/s\n"
      "GPU 555555555555: NVIDIA H200 (UUID: GPU-x)\n\t Link 0: 26.562 GB/s\n"
      "GPU 1048576: NVIDIA H200 (UUID: GPU-y)\n");
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].gpu, 0);
  EXPECT_EQ(gpus[0].active_links, 2);
  EXPECT_EQ(gpus[1].gpu, 1048576);
}

}  // namespace
}  // namespace scalescope::smi_text
