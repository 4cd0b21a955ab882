// `nvidia-smi topo -m` -> one-node cluster files: an NVSwitch box (the lent 4x H200's own output), a box with
// direct NVLink pairs, PCIe switches and two sockets, and input that is not a topology matrix.
#include "scalescope/calibrate/topo_node.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "scalescope/sim/cluster.hpp"

namespace scalescope {
namespace {

calib::TopoNodeOptions options() {
  calib::TopoNodeOptions o;
  o.gpu = Json{{"model", "test GPU"}, {"memory_GiB", 80}, {"hbm_bandwidth_GBps", 3000}, {"sm_count", 132},
               {"peak_dense_TFLOPS", {{"bf16", 989.4}}}};
  return o;
}

TEST(TopoNode, H200NvswitchBoxBecomesOneNvswitchWith18LinksPerGpu) {
  // validation/h200x4/logs/nvidia-smi.txt: every GPU pair NV18, no NIC, all on NUMA node 0 -> one nvswitch
  // vertex with 18 links per GPU (18 x 26.562 = 478.1 GB/s per direction between two GPUs), one CPU.
  std::ifstream in(std::string(SCALESCOPE_SOURCE_DIR) + "/validation/h200x4/logs/nvidia-smi.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  auto doc = calib::node_file_from_topo(ss.str(), "nvidia-smi.txt", options());
  ASSERT_TRUE(doc.has_value()) << doc.error().str();
  EXPECT_EQ(doc->at("node").at("gpus"), 4);
  EXPECT_EQ(doc->at("node").at("nvswitches"), 1);
  auto c = cluster_from_json(*doc, "imported");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_NEAR(c->path_bandwidth(c->route(0, 3)).value, 18 * 26.562e9, 1e3);
}

TEST(TopoNode, DirectNvlinkPairsPcieSwitchesAndTwoSockets) {
  // GPU0-GPU1 NV2 and GPU2-GPU3 NV2 (no NVLink across pairs); GPU0, GPU1 and NIC0 on one PCIe switch
  // (PIX), GPU2, GPU3 and NIC1 on another; the two halves on different sockets (SYS). Expected: 2 direct
  // NVLink pair links, 2 PCIe switches, 2 CPUs joined by UPI; GPU0 -> GPU2 crosses PCIe, both CPUs
  // and PCIe again: gpu0 -> pcie0 -> cpu0 -> cpu1 -> pcie1 -> gpu2, 5 links, 63 GB/s bottleneck.
  const std::string text =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tNV2\tSYS\tSYS\tPIX\tSYS\t0-31\t0\n"
      "GPU1\tNV2\t X \tSYS\tSYS\tPIX\tSYS\t0-31\t0\n"
      "GPU2\tSYS\tSYS\t X \tNV2\tSYS\tPIX\t32-63\t1\n"
      "GPU3\tSYS\tSYS\tNV2\t X \tSYS\tPIX\t32-63\t1\n"
      "NIC0\tPIX\tPIX\tSYS\tSYS\t X \tSYS\n"
      "NIC1\tSYS\tSYS\tPIX\tPIX\tSYS\t X \n";
  auto doc = calib::node_file_from_topo(text, "box.txt", options());
  ASSERT_TRUE(doc.has_value()) << doc.error().str();
  const Json& node = doc->at("node");
  EXPECT_EQ(node.at("nvswitches"), 0);
  EXPECT_EQ(node.at("pcie_switches"), 2);
  EXPECT_EQ(node.at("cpus"), 2);
  EXPECT_EQ(node.at("nics"), 2);
  auto c = cluster_from_json(*doc, "imported");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_NEAR(c->path_bandwidth(c->route(0, 1)).value, 2 * 26.562e9, 1e3);  // the NV2 pair
  const auto cross = c->route(0, 2);
  EXPECT_EQ(cross.size(), 5u);
  EXPECT_NEAR(c->path_bandwidth(cross).value, 63e9, 1e3);
}

TEST(TopoNode, PixPxbPhbNodeAndSysComeBackAsTheSamePathTypes) {
  // A PCIe box whose matrix uses every PCIe path type: GPU0/GPU1 PIX (one switch); GPU2 PXB to both (another leaf
  // switch under the same parent); GPU3 and GPU4 PHB to each other (one host bridge, no switch) and NODE to GPU0-2
  // (same socket, NUMA 0); GPU5 SYS to all (socket 1, NUMA 1). The written node gives back each pair's type, and the
  // affinity columns become the sockets' cpu_affinity and cpu_numa_nodes (only written when not the default 0, 1).
  const std::string text =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
      "GPU0\t X \tPIX\tPXB\tNODE\tNODE\tSYS\t0-15\t2\tN/A\n"
      "GPU1\tPIX\t X \tPXB\tNODE\tNODE\tSYS\t0-15\t2\tN/A\n"
      "GPU2\tPXB\tPXB\t X \tNODE\tNODE\tSYS\t0-15\t2\tN/A\n"
      "GPU3\tNODE\tNODE\tNODE\t X \tPHB\tSYS\t0-15\t2\tN/A\n"
      "GPU4\tNODE\tNODE\tNODE\tPHB\t X \tSYS\t0-15\t2\tN/A\n"
      "GPU5\tSYS\tSYS\tSYS\tSYS\tSYS\t X \t16-31\t3\tN/A\n";
  auto doc = calib::node_file_from_topo(text, "paths.txt", options());
  ASSERT_TRUE(doc.has_value()) << doc.error().str();
  const Json& node = doc->at("node");
  // Switches: leaf {GPU0, GPU1}, leaf {GPU2}, their parent, and the host bridge of GPU3/GPU4.
  EXPECT_EQ(node.at("pcie_switches"), 4);
  EXPECT_EQ(node.at("host_bridges"), Json::array({"pcie3"}));
  EXPECT_EQ(node.at("cpus"), 2);
  EXPECT_EQ(node.at("cpu_numa_nodes"), Json::array({2, 3}));
  EXPECT_EQ(node.at("cpu_affinity"), Json::array({"0-15", "16-31"}));
  auto c = cluster_from_json(*doc, "imported");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_EQ(c->gpu_path_type(0, 1), PathType::pix);
  EXPECT_EQ(c->gpu_path_type(0, 2), PathType::pxb);
  EXPECT_EQ(c->gpu_path_type(1, 2), PathType::pxb);
  EXPECT_EQ(c->gpu_path_type(3, 4), PathType::phb);
  EXPECT_EQ(c->gpu_path_type(0, 3), PathType::node);
  EXPECT_EQ(c->gpu_path_type(2, 4), PathType::node);
  EXPECT_EQ(c->gpu_path_type(0, 5), PathType::sys);
  EXPECT_EQ(c->gpu_numa_node(0), 2);
  EXPECT_EQ(c->gpu_numa_node(5), 3);
}

TEST(TopoNode, NvlinkPairsOnDifferentNumaNodesStayOnDifferentSockets) {
  // Four GPUs on one NVSwitch (NV18 everywhere): only the NUMA Affinity column tells the sockets apart.
  const std::string text =
      "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tNV18\tNV18\tNV18\t0-31\t0\n"
      "GPU1\tNV18\t X \tNV18\tNV18\t0-31\t0\n"
      "GPU2\tNV18\tNV18\t X \tNV18\t32-63\t1\n"
      "GPU3\tNV18\tNV18\tNV18\t X \t32-63\t1\n";
  auto doc = calib::node_file_from_topo(text, "nv.txt", options());
  ASSERT_TRUE(doc.has_value()) << doc.error().str();
  EXPECT_EQ(doc->at("node").at("cpus"), 2);
  EXPECT_FALSE(doc->at("node").contains("cpu_numa_nodes"));  // 0, 1: the default
  auto c = cluster_from_json(*doc, "imported");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  EXPECT_EQ(c->gpu_numa_node(1), 0);
  EXPECT_EQ(c->gpu_numa_node(2), 1);
  EXPECT_EQ(c->gpu_path_type(0, 3), PathType::nvlink);
}

TEST(TopoNode, TextWithoutAMatrixIsAnInputErrorNamingTheFile) {
  auto doc = calib::node_file_from_topo("no topology here\n", "notes.txt", options());
  ASSERT_FALSE(doc.has_value());
  EXPECT_NE(doc.error().str().find("notes.txt"), std::string::npos);
}

}  // namespace
}  // namespace scalescope
