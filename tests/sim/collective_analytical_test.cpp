// Tests of the analytical NCCL collective model against hand-derived times on small clusters
// whose bandwidths are written in collective_test_clusters.hpp, with the datasheet parameters
// (link efficiency nvlink 0.80, pcie 0.76, net 0.92; 16 channels; NCCL 2.19 latencies).
#include <cmath>
#include <numeric>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "collective_test_clusters.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope {
namespace {

using testing::make_cluster;
using testing::nvswitch_node;

constexpr double kGiB = 1073741824.0;

std::vector<int> iota_ranks(int n, int first = 0) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), first);
  return r;
}

TEST(CollectiveAnalytical, RingAllReduceFourGpusOneGiBMatchesHandFormula) {
  // 4 GPUs on one NVSwitch, 100 GB/s per GPU and direction: usable 0.80 * 100 = 80 GB/s.
  // 16 channels all run the ring 0->1->2->3->0, so each GPU->switch link carries 16 flows of
  // 5 GB/s (below the 38.7 GB/s Simple channel cap): busbw B = 16 * 5 = 80 GB/s.
  // time = base 8.4 us + 2(n-1) = 6 hops * 3.4 us (NVLink ring/Simple) = 28.8 us
  //      + 2(n-1)/n * S / B = 1.5 * 2^30 / 80e9 = 0.0201326592 s   -> 0.0201614592 s.
  const Cluster c = make_cluster("nvs4", nvswitch_node(4, 100.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = iota_ranks(4);
  const CollResult r = m.analytical(CollOp::all_reduce, ranks, Bytes(kGiB), Algorithm::ring, Protocol::Simple);
  EXPECT_NEAR(r.time.value, 0.0201614592, 1e-9);
  EXPECT_NEAR(r.latency.value, 28.8e-6, 1e-12);
  EXPECT_EQ(r.channels, 16);
  // algbw = S / t; busbw = 1.5 * algbw.
  EXPECT_NEAR(r.algbw.value, kGiB / 0.0201614592, 1.0);
  EXPECT_NEAR(r.busbw.value, 1.5 * kGiB / 0.0201614592, 1.0);
  ASSERT_GE(r.bottleneck_link, 0);
  EXPECT_EQ(c.link(r.bottleneck_link).kind, LinkKind::nvlink);
  EXPECT_NE(r.bottleneck.find("16 flows"), std::string::npos) << r.bottleneck;
  // Left to choose, 1 GiB also runs ring/Simple (LL128: 14 + 6*1.9 us latency and 0.92 of the bandwidth).
  const CollResult chosen = m.analytical(CollOp::all_reduce, ranks, Bytes(kGiB));
  EXPECT_EQ(chosen.algorithm, Algorithm::ring);
  EXPECT_EQ(chosen.protocol, Protocol::Simple);
}

TEST(CollectiveAnalytical, AllGatherSizeIsTheWholeReceiveBuffer) {
  // nccl-tests semantics: S = 1 GiB is the gathered buffer, each rank contributes S/4.
  // Ring: n-1 = 3 steps of S/4 per rank and channel -> 3/4 * S / 80 GB/s = 0.0100663296 s;
  // latency 8.4 + 3 * 3.4 = 18.6 us. busbw = (n-1)/n * S / t.
  const Cluster c = make_cluster("nvs4", nvswitch_node(4, 100.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = iota_ranks(4);
  const CollResult r = m.analytical(CollOp::all_gather, ranks, Bytes(kGiB), Algorithm::ring, Protocol::Simple);
  EXPECT_NEAR(r.time.value, 18.6e-6 + 0.0100663296, 1e-9);
  EXPECT_NEAR(r.busbw.value, 0.75 * kGiB / r.time.value, 1.0);
  const CollResult rs = m.analytical(CollOp::reduce_scatter, ranks, Bytes(kGiB), Algorithm::ring, Protocol::Simple);
  EXPECT_NEAR(rs.time.value, r.time.value, 1e-12);
}

TEST(CollectiveAnalytical, AlltoallSendrecvAndBroadcastOnOneSwitch) {
  // Same 4-GPU box (usable 80 GB/s per GPU and direction), S = 1 GiB.
  // alltoall: S/4 to each of 3 peers, as max(1, 16/3) = 5 flows per pair: 15 flows per GPU link,
  //   80/15 GB/s each; one flow moves S/20: t = S/20 * 15 / 80e9 = 0.75 S / 80e9 = 0.0100663296 s,
  //   latency 8.4 + (n-1) * 3.4 = 18.6 us.
  // sendrecv: S to the next rank as 16 flows of S/16 at 80/16 GB/s: S / 80e9 = 0.0134217728 s,
  //   latency 8.4 + 3.4 = 11.8 us.
  // broadcast (root 0): ring pipeline 0->1->2->3, 16 channels: the 3 senders carry 16 flows of
  //   S/16 at 5 GB/s: S / 80e9, latency 8.4 + 3 * 3.4 = 18.6 us.
  const Cluster c = make_cluster("nvs4", nvswitch_node(4, 100.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = iota_ranks(4);
  const CollResult a2a = m.analytical(CollOp::alltoall, ranks, Bytes(kGiB));
  EXPECT_EQ(a2a.algorithm, Algorithm::pairwise);
  EXPECT_NEAR(a2a.time.value, 18.6e-6 + 0.0100663296, 1e-9);
  EXPECT_NEAR(a2a.busbw.value, 0.75 * kGiB / a2a.time.value, 1.0);
  const CollResult sr = m.analytical(CollOp::sendrecv, ranks, Bytes(kGiB));
  EXPECT_EQ(sr.algorithm, Algorithm::p2p);
  EXPECT_NEAR(sr.time.value, 11.8e-6 + 0.0134217728, 1e-9);
  EXPECT_NEAR(sr.busbw.value, sr.algbw.value, 1e-3);
  const CollResult bc = m.analytical(CollOp::broadcast, ranks, Bytes(kGiB), Algorithm::ring, Protocol::Simple);
  EXPECT_NEAR(bc.time.value, 18.6e-6 + 0.0134217728, 1e-9);
}

TEST(CollectiveAnalytical, SmallMessagesPickLLWithNcclLatencyFloor) {
  // 8 GPUs, 450 GB/s NVLink per GPU. At 8 bytes the bandwidth term is below a nanosecond, so
  // the time is the NCCL latency: ring/LL 6.6 + 14 hops * 0.6 = 15.0 us; tree/LL 6.8 +
  // 2 * 7 * 0.6 = 15.2 us; ring/LL128 14 + 14 * 1.9 = 40.6 us; ring/Simple 8.4 + 14 * 3.4 = 56 us.
  const Cluster c = make_cluster("nvs8", nvswitch_node(8, 450.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = iota_ranks(8);
  const CollResult small = m.analytical(CollOp::all_reduce, ranks, Bytes(8));
  EXPECT_EQ(small.algorithm, Algorithm::ring);
  EXPECT_EQ(small.protocol, Protocol::LL);
  EXPECT_NEAR(small.time.value * 1e6, 15.0, 1e-3);
  const CollResult tree = m.analytical(CollOp::all_reduce, ranks, Bytes(8), Algorithm::tree, Protocol::LL);
  EXPECT_NEAR(tree.time.value * 1e6, 15.2, 1e-3);
  // 1 GiB: ring/Simple at 16 * 360/16 = 360 GB/s busbw: 56 us + 1.75 * 2^30 / 360e9 s.
  const CollResult large = m.analytical(CollOp::all_reduce, ranks, Bytes(kGiB));
  EXPECT_EQ(large.protocol, Protocol::Simple);
  EXPECT_EQ(large.algorithm, Algorithm::ring);
  EXPECT_NEAR(large.time.value, 56e-6 + 1.75 * kGiB / 360e9, 1e-9);
}

TEST(CollectiveAnalytical, DgxH100RingUsesAllEighteenNvlinksOfEachGpu) {
  // topologies/dgx-h100-8.json: 18 NVLink4 links of 26.562 GB/s per GPU and direction to one
  // NVSwitch vertex; usable 0.80 * 18 * 26.562 = 382.4928 GB/s. 16 ring channels share it:
  // busbw 382.4928 GB/s, t(1 GiB) = 56 us + 1.75 * 2^30 / 382.4928e9 s.
  auto c = load_cluster_by_name_or_path("dgx-h100-8");
  ASSERT_TRUE(c.has_value()) << c.error().str();
  const CollectiveModel m(*c, datasheet_collective_params());
  const CollResult r = m.analytical(CollOp::all_reduce, iota_ranks(8), Bytes(kGiB));
  EXPECT_EQ(r.algorithm, Algorithm::ring);
  EXPECT_EQ(r.protocol, Protocol::Simple);
  EXPECT_NEAR(r.time.value, 56e-6 + 1.75 * kGiB / 382.4928e9, 1e-9);
}

TEST(CollectiveAnalytical, MediumMessagesUseFewerChannelsCappedPerChannel) {
  // NCCL uses floor(S / (512 threads * 64 B)) Simple channels: 64 KiB -> 2 channels. Each
  // channel moves at most 38.7 GB/s, far below the 360/2 GB/s link share, so the cap binds:
  // t = 56 us + (14 steps * 64 KiB / (8 ranks * 2 channels)) / 38.7e9 = 56 us + 57344 / 38.7e9 s.
  const Cluster c = make_cluster("nvs8", nvswitch_node(8, 450.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = iota_ranks(8);
  const CollResult r = m.analytical(CollOp::all_reduce, ranks, Bytes(65536), Algorithm::ring, Protocol::Simple);
  EXPECT_EQ(r.channels, 2);
  EXPECT_EQ(r.bottleneck_link, -1);
  EXPECT_NEAR(r.time.value, 56e-6 + 57344.0 / 38.7e9, 1e-12);
}

TEST(CollectiveAnalytical, TwoRailNodesAreLimitedByTheNicsThroughPxn) {
  // 2 nodes x 4 GPUs: NVLink 200 GB/s (usable 160), PCIe 64 GB/s (usable 48.64), one 200 Gb/s
  // NIC per GPU on a rail-optimized fabric (usable 25 * 0.92 = 23 GB/s per direction).
  // Channel k enters each node at local GPU k%4 and leaves it from GPU (k-1)%4 through the NIC
  // of GPU k%4 (PXN: same rail as the next node's entry GPU). Per 16 channels, NIC r carries the
  // 4 channels with k%4 == r: 23/4 = 5.75 GB/s per flow; NVLink links carry 16 flows
  // (160/16 = 10), PCIe links 4 (12.16): the NICs bind, busbw = 16 * 5.75 = 92 GB/s.
  // Latency: 14 steps, 2N = 4 of them between nodes: 8.4 + 10 * 3.4 + 4 * 14 = 98.4 us.
  // t = 98.4 us + 1.75 * 2^30 / 92e9 s.
  const Json fabric = {{"kind", "rail_optimized"}, {"link_kind", "ib"}, {"nic_speed_Gbps", 200},
                       {"link_latency_us", 1.0}, {"radix", 8}};
  const Cluster c = make_cluster("rail2x4", nvswitch_node(4, 200.0, 4, 64.0), 2, fabric);
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = iota_ranks(8);
  const CollResult r = m.analytical(CollOp::all_reduce, ranks, Bytes(kGiB), Algorithm::ring, Protocol::Simple);
  EXPECT_EQ(r.link_class, LinkClass::net);
  EXPECT_NEAR(r.time.value, 98.4e-6 + 1.75 * kGiB / 92e9, 1e-9);
  ASSERT_GE(r.bottleneck_link, 0);
  EXPECT_EQ(c.link(r.bottleneck_link).kind, LinkKind::ib);
  EXPECT_NE(r.bottleneck.find("4 flows"), std::string::npos) << r.bottleneck;
}

TEST(CollectiveAnalytical, ForcedTreeOnFourNodesFollowsTheDoubleBinaryTree) {
  // 4 nodes x 1 GPU on one switch, 200 Gb/s NICs (usable 23 GB/s). NCCL's trees over 4 nodes:
  // tree 0: 1->2, 3->2, 2->0 (root 0); tree 1 (mirror): 0->1, 2->1, 1->3 (root 3). Channels
  // alternate trees; each edge carries one flow up and one down. Node 2 sends 3 flows per
  // tree-0 channel and 1 per tree-1 channel: 8*3 + 8*1 = 32 flows on its NIC (node 1 too):
  // 23/32 GB/s per flow, each moving S/16 / 0.92 (tree bus efficiency) wire bytes:
  // t_bw = 2 S / (0.92 * 23e9). Latency: tree/Simple base 0 + 2 * ((1-1) * 28 + log2(4) * 28) = 112 us.
  const Json fabric = {{"kind", "single_switch"}, {"link_kind", "ib"}, {"nic_speed_Gbps", 200},
                       {"link_latency_us", 1.0}};
  const Cluster c = make_cluster("tree4", testing::single_gpu_node(), 4, fabric);
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = iota_ranks(4);
  const CollResult t = m.analytical(CollOp::all_reduce, ranks, Bytes(kGiB), Algorithm::tree, Protocol::Simple);
  EXPECT_NEAR(t.time.value, 112e-6 + 2.0 * kGiB / (0.92 * 23e9), 1e-9);
  EXPECT_NE(t.bottleneck.find("32 flows"), std::string::npos) << t.bottleneck;
  // The ring moves 1.5 S at 23 GB/s (16 flows of 23/16 per NIC) with 8.4 + 6 * 14 = 92.4 us:
  // faster at 1 GiB, so NCCL's choice is the ring there.
  const CollResult ring = m.analytical(CollOp::all_reduce, ranks, Bytes(kGiB), Algorithm::ring, Protocol::Simple);
  EXPECT_NEAR(ring.time.value, 92.4e-6 + 1.5 * kGiB / 23e9, 1e-9);
  EXPECT_EQ(m.analytical(CollOp::all_reduce, ranks, Bytes(kGiB)).algorithm, Algorithm::ring);
}

TEST(CollectiveAnalytical, PcieBoxNeverPicksLL128UnlessForced) {
  // NCCL enables LL128 by default only over NVLink.
  const Cluster c = make_cluster("pcie4", testing::pcie_node(4, 32.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const auto ranks = iota_ranks(4);
  for (double s = 8; s <= kGiB; s *= 4) {
    const CollResult r = m.analytical(CollOp::all_reduce, ranks, Bytes(s));
    EXPECT_NE(r.protocol, Protocol::LL128) << "size " << s;
    EXPECT_EQ(r.link_class, LinkClass::pcie);
  }
  EXPECT_EQ(m.analytical(CollOp::all_reduce, ranks, Bytes(kGiB), {}, Protocol::LL128).protocol, Protocol::LL128);
}

TEST(CollectiveAnalytical, CheckRejectsBadRanksAlgorithmsAndProtocols) {
  const Cluster c = make_cluster("nvs4", nvswitch_node(4, 100.0));
  const CollectiveModel m(c, datasheet_collective_params());
  const std::vector<int> out_of_range{0, 4}, twice{1, 1}, ok{0, 1, 2, 3};
  EXPECT_TRUE(m.check(CollOp::all_reduce, out_of_range).has_value());
  EXPECT_TRUE(m.check(CollOp::all_reduce, twice).has_value());
  EXPECT_TRUE(m.check(CollOp::all_gather, ok, Algorithm::tree).has_value());
  EXPECT_TRUE(m.check(CollOp::alltoall, ok, {}, Protocol::LL).has_value());
  EXPECT_FALSE(m.check(CollOp::all_reduce, ok, Algorithm::tree, Protocol::LL128).has_value());
}

TEST(CollectiveAnalytical, ConcurrentCallsAgreeWithSerialOnes) {
  // Groups are cached on first use from any thread; results must not depend on who built them.
  const Cluster c = make_cluster("nvs8", nvswitch_node(8, 450.0));
  const CollectiveModel serial(c, datasheet_collective_params());
  const CollectiveModel shared(c, datasheet_collective_params());
  const std::vector<std::vector<int>> groups{{0, 1, 2, 3, 4, 5, 6, 7}, {0, 2, 4, 6}, {1, 3}, {7, 6, 5}};
  std::vector<double> expected;
  for (const auto& g : groups)
    for (CollOp op : kAllCollOps) expected.push_back(serial.analytical(op, g, Bytes(1 << 20)).time.value);
  std::vector<std::vector<double>> got(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (const auto& g : groups)
        for (CollOp op : kAllCollOps) got[static_cast<std::size_t>(t)].push_back(shared.analytical(op, g, Bytes(1 << 20)).time.value);
    });
  for (auto& th : threads) th.join();
  for (const auto& g : got) EXPECT_EQ(g, expected);
}

}  // namespace
}  // namespace scalescope
