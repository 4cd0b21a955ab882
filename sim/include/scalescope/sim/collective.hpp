// The NCCL collective model: closed-form (analytical) times on the real ring/tree of a cluster,
// and the same algorithms run as flows over the cluster's routes (flow fidelity), so that
// concurrent collectives contend where their links meet.
//
// Both fidelities share one description of each algorithm: a set of equal-sized "unit flows"
// (one per channel and ring/tree edge, or per rank pair) over routes from Cluster::route().
// Alone on the network, the slowest unit flow of such a set moves at its max-min share
//     r = min( min over links l of  usable_l / flows_l ,  per-channel cap )
// (usable_l = raw bandwidth * link_efficiency[class]), and the set finishes after
// unit_bytes / r. The analytical time is therefore
//     time = base_latency + hop latencies + unit_wire_bytes / r
// with the latency and byte counts given in collective_params.hpp, and the flow run (which
// starts the unit flows in phases on a FlowNetwork) reproduces it when nothing contends.
//   ring (all_reduce, all_gather, reduce_scatter): steps = 2(n-1) or n-1 of S/n per rank and
//     channel; the flow run groups consecutive steps into at most max_phases phases (exact
//     when steps <= max_phases), each phase starting when the previous one has finished.
//   broadcast: the ring pipeline from ranks[0], every edge carrying S per channel at once.
//   tree (all_reduce): every tree edge carries S/c up and S/c down at once (pipelined).
//   pairwise (alltoall): S/n from every rank to every other at once; p2p (sendrecv): S to the next rank.
// Staging: where routes pass through host memory (Cluster::staged: no GPUDirect RDMA between nodes, or a P2P
// level that forbids a pair's path), the staged route's PCIe, host-memory and NIC links carry the flows (so they
// contend with everything else there) and each staged hop adds the fill of a two-copy pipeline,
// 2 * min(512 KiB, step bytes) / rate, to its latency (NCCL_BUFFSIZE / NCCL_STEPS per step).
// Choice: the (algorithm, protocol) with the lowest analytical time, as NCCL's tuner does.
// Not modelled: NVLS/CollNet, NCCL's tree correction factors and ring "plateau" latency
// factor, LL/LL128 thread-count reduction below one channel's threshold.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective_params.hpp"
#include "scalescope/sim/collective_types.hpp"
#include "scalescope/sim/engine.hpp"
#include "scalescope/sim/flow_network.hpp"
#include "scalescope/sim/units.hpp"

namespace scalescope {

/// One collective's predicted cost (nccl-tests semantics for size, algbw and busbw).
struct CollResult {
  Seconds time;
  Algorithm algorithm = Algorithm::ring;
  Protocol protocol = Protocol::Simple;
  BytesPerSecond algbw;  ///< size / time
  BytesPerSecond busbw;  ///< algbw * busbw_factor(op, n)
  int channels = 0;      ///< channels used at this size (1 for alltoall and sendrecv)
  Seconds latency;       ///< the base + hop latency part of `time`
  LinkClass link_class = LinkClass::nvlink;  ///< net when the ranks span nodes, else the intra-node class
  int bottleneck_link = -1;  ///< directed link whose share limits the slowest flow; -1: a per-channel cap
  std::string bottleneck;    ///< e.g. "n0.gpu3->n0.nvswitch0 (nvlink, 16 flows)" or "per-channel cap 38.7 GB/s"
};

/// Options of the flow-fidelity run.
struct FlowRunOptions {
  std::optional<Algorithm> algorithm;  ///< default: the analytical choice
  std::optional<Protocol> protocol;
  int max_phases = 16;                 ///< ring steps are grouped into at most this many phases
};

class CollectiveModel {
 public:
  /// `cluster` must outlive the model. Thread-safe: rank groups are cached (ring/tree
  /// structure, routes, bottlenecks) on first use; later calls only read.
  CollectiveModel(const Cluster& cluster, CollectiveParams params);
  /// The same with `params` on `shape`'s cluster, starting with the rank groups `shape` has cached
  /// when they do not depend on what changed (equal channel counts and link efficiencies). For
  /// fitting, which evaluates many parameter sets on the same groups.
  CollectiveModel(const CollectiveModel& shape, CollectiveParams params);
  ~CollectiveModel();
  CollectiveModel(const CollectiveModel&) = delete;
  CollectiveModel& operator=(const CollectiveModel&) = delete;

  const Cluster& cluster() const;
  const CollectiveParams& params() const;

  /// Why (op, ranks, forced algorithm/protocol) cannot be modelled, or nullopt if it can:
  /// ranks must be distinct GPUs of the cluster, the algorithm valid for the op and the
  /// protocol enabled (protocol_efficiency > 0) for the algorithm. Forcing LL128 enables it
  /// where NCCL's default would not (as NCCL_PROTO=LL128 does).
  std::optional<std::string> check(CollOp op, std::span<const int> ranks, std::optional<Algorithm> algorithm = {},
                                   std::optional<Protocol> protocol = {}) const;

  /// Closed-form time; the algorithm/protocol not forced are chosen by lowest time. Ranks must
  /// pass check() (asserted). Under 10 us per call once the group is cached.
  CollResult analytical(CollOp op, std::span<const int> ranks, Bytes size, std::optional<Algorithm> algorithm = {},
                        std::optional<Protocol> protocol = {}) const;

  /// analytical() while each of `siblings` (rank groups disjoint from `ranks` and from each other)
  /// runs the same op on the same size at the same time, as the data-parallel groups of a stage's
  /// tensor-parallel ranks do. The algorithm, protocol and channels are those chosen for `ranks`
  /// alone (NCCL's tuner does not see other communicators); the rate is the slowest unit flow's
  /// max-min share with every group's unit flows on the links, e.g. two groups whose rings leave a
  /// node through the same NIC get half of it each. Equals analytical() when nothing is shared.
  /// Siblings with no rank on the group's nodes are left out (they could meet its flows only in the
  /// fabric; flow fidelity routes everything).
  CollResult analytical_concurrent(CollOp op, std::span<const int> ranks,
                                   std::span<const std::span<const int>> siblings, Bytes size) const;

  /// Usable capacity of every directed link (raw * link_efficiency of its class): build the
  /// FlowNetwork that start() runs on from these.
  std::vector<BytesPerSecond> effective_capacities() const;

  /// Runs the collective as flows on `network` (over `engine`, both outliving the run) from
  /// engine.now(); calls done(elapsed) when the last flow has finished.
  void start(Engine& engine, FlowNetwork& network, CollOp op, std::span<const int> ranks, Bytes size,
             std::function<void(Seconds elapsed)> done, const FlowRunOptions& options = {}) const;

  /// start() alone on a fresh engine and network; the result's time is the simulated time.
  CollResult simulate_flow(CollOp op, std::span<const int> ranks, Bytes size, const FlowRunOptions& options = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace scalescope
