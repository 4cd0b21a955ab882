// Tests of the nvidia-smi text parsers used by the GPU calibration program.
#include "scalescope/calibrate/smi_text.hpp"

#include <gtest/gtest.h>

namespace scalescope::smi_text {
namespace {

// `nvidia-smi topo -m` of a 4-GPU NVSwitch box with one NIC, in the layout the driver prints
// (tab separated, header underlined with ESC[4m ... ESC[0m, legend after a blank line).
constexpr const char* kTopo4 =
    "\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
    "GPU0\t X \tNV18\tNV18\tNV18\tPXB\t0-31\t0\t\tN/A\n"
    "GPU1\tNV18\t X \tNV18\tNV18\tSYS\t0-31\t0\t\tN/A\n"
    "GPU2\tNV18\tNV18\t X \tNV18\tSYS\t32-63\t1\t\tN/A\n"
    "GPU3\tNV18\tNV18\tNV18\t X \tSYS\t32-63\t1\t\tN/A\n"
    "NIC0\tPXB\tSYS\tSYS\tSYS\t X \n"
    "\n"
    "Legend:\n"
    "\n"
    "  X    = Self\n"
    "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes\n"
    "  NV#  = Connection traversing a bonded set of # NVLinks\n"
    "\n"
    "NIC Legend:\n"
    "\n"
    "  NIC0: mlx5_0\n";

TEST(StripAnsi, RemovesEscapeSequencesOnly) {
  EXPECT_EQ(strip_ansi("\x1b[4mGPU0\tGPU1\x1b[0m x"), "GPU0\tGPU1 x");
  EXPECT_EQ(strip_ansi("plain"), "plain");
}

TEST(TopoMatrix, ReadsDeviceColumnsAndRows) {
  const auto m = parse_topo_matrix(kTopo4);
  ASSERT_TRUE(m.has_value());
  // Columns stop at "CPU" (of "CPU Affinity"): GPU0..GPU3 and NIC0.
  EXPECT_EQ(m->columns, (std::vector<std::string>{"GPU0", "GPU1", "GPU2", "GPU3", "NIC0"}));
  EXPECT_EQ(m->rows, (std::vector<std::string>{"GPU0", "GPU1", "GPU2", "GPU3", "NIC0"}));
  EXPECT_EQ(m->link("GPU0", "GPU0"), "X");
  EXPECT_EQ(m->link("GPU1", "GPU3"), "NV18");
  EXPECT_EQ(m->link("GPU0", "NIC0"), "PXB");
  EXPECT_EQ(m->link("NIC0", "GPU2"), "SYS");
  EXPECT_FALSE(m->link("GPU0", "GPU7").has_value());
}

TEST(TopoMatrix, SingleGpuAndMissingHeader) {
  const auto one = parse_topo_matrix("\tGPU0\tCPU Affinity\tNUMA Affinity\nGPU0\t X \t0-15\t0\n");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->columns.size(), 1u);
  EXPECT_EQ(one->link("GPU0", "GPU0"), "X");
  EXPECT_FALSE(parse_topo_matrix("sh: 1: nvidia-smi: not found\n").has_value());
}

TEST(NvlinkStatus, CountsActiveAndInactiveLinksPerGpu) {
  // Two GPUs: GPU 0 with 2 links at 26.562 GB/s and one inactive; GPU 1 with one link.
  const char* text =
      "GPU 0: NVIDIA H200 (UUID: GPU-1111)\n"
      "\t Link 0: 26.562 GB/s\n"
      "\t Link 1: 26.562 GB/s\n"
      "\t Link 2: <inactive>\n"
      "GPU 1: NVIDIA H200 (UUID: GPU-2222)\n"
      "\t Link 0: 26.562 GB/s\n";
  const auto g = parse_nvlink_status(text);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].gpu, 0);
  EXPECT_EQ(g[0].active_links, 2);
  EXPECT_EQ(g[0].inactive_links, 1);
  ASSERT_EQ(g[0].link_GBps.size(), 2u);
  EXPECT_DOUBLE_EQ(g[0].link_GBps[0], 26.562);
  EXPECT_EQ(g[1].gpu, 1);
  EXPECT_EQ(g[1].active_links, 1);
}

TEST(NvlinkStatus, ErrorTextGivesNoGpus) {
  EXPECT_TRUE(
      parse_nvlink_status("NVIDIA-SMI has failed because it couldn't communicate\n").empty());
}

TEST(SplitCsvLine, TrimsFields) {
  EXPECT_EQ(split_csv_line("0, 00000000:18:00.0, 580.159.04 "),
            (std::vector<std::string>{"0", "00000000:18:00.0", "580.159.04"}));
}

TEST(PciBusId, NvidiaSmiAndCudaFormsCompareEqual) {
  // nvidia-smi prints an 8-digit domain, CUDA a 4-digit one, sometimes upper case.
  EXPECT_EQ(normalize_pci_bus_id("00000000:18:00.0"), "0000:18:00.0");
  EXPECT_EQ(normalize_pci_bus_id("0000:9A:00.0"), "0000:9a:00.0");
  EXPECT_EQ(normalize_pci_bus_id("1:2a:00.0"), "0001:2a:00.0");
}

}  // namespace
}  // namespace scalescope::smi_text
