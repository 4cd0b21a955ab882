// Parameters of the NCCL collective model, grouped, each group with its provenance; the built-in
// datasheet defaults (NCCL's own tuning tables) and their JSON form, which calibration fits into.
//
// Model (see collective.hpp for the algorithms). For op, algorithm a, protocol p, n ranks on
// N nodes and S bytes:
//
//   time = base_latency_us[a][p] + hop latencies (per algorithm, below) + S_wire / busbw_rate
//
//   ring hops (NCCL): (steps - inter) * hop_latency_us[intra][a][p] + inter * hop_latency_us[net][a][p],
//        steps = 2(n-1) all_reduce, n-1 all_gather / reduce_scatter / broadcast;
//        inter = min(steps, 2N) all_reduce, min(steps, N-1) otherwise (0 on one node)
//   tree hops (NCCL): 2 * ((n/N - 1) * hop[intra] + floor(log2 N) * hop[net])
//   pairwise: (n-1) * hop[class of the group]   p2p: 1 * hop[class of the group]
//
// The bandwidth side is a max-min fair share over the real routes: every link's usable
// capacity is raw * link_efficiency[class]; the flows of one channel are capped at
// channel_max_GBps[p] (data) and at max_busbw_GBps[p] / channels; data bytes turn into wire
// bytes as S_wire = S / (protocol_efficiency[a][p] * bus_efficiency[op][a][class]).
// Channels used = clamp(floor(S / threshold), 1, channels) with threshold =
// channel_threshold_bytes[p] (times n for ring LL), as NCCL's enqueue does: this gives the
// size ramp of medium messages. `class` is net when the ranks span nodes, else the intra-node class.
//
// Efficiency by size: the whole time above (latency and bandwidth parts) is divided by
// e = size_efficiency[op](S), a curve piecewise linear in log2(S) through its knots (constant
// beyond the first and last knot; 1 without knots). It is shared by all group sizes: the group
// size enters only through the terms above (steps, hops, (n-1)/n factors). sendrecv in groups of
// 3+ ranks (send and receive peers differ) uses sendrecv_distinct_peers when it has knots.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "scalescope/sim/collective_types.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope {

template <class T>
using PerProtocol = std::array<T, kNumProtocols>;
template <class T>
using PerAlgoProto = std::array<PerProtocol<T>, kNumAlgorithms>;

struct CollectiveParams {
  /// Fixed cost per collective launch, microseconds, per (algorithm, protocol).
  PerAlgoProto<double> base_latency_us{};
  std::string base_latency_source;

  /// Cost per hop, microseconds, per (link class of the hop, algorithm, protocol).
  std::array<PerAlgoProto<double>, kNumLinkClasses> hop_latency_us{};
  std::string hop_latency_source;

  /// Data bytes per wire byte of each protocol (0 disables the protocol for the algorithm).
  PerAlgoProto<double> protocol_efficiency{};
  std::string protocol_efficiency_source;

  /// Fraction of a link's raw (datasheet) bandwidth that NCCL traffic can use, per link class.
  std::array<double, kNumLinkClasses> link_efficiency{};
  std::string link_efficiency_source;

  /// Multiplier on the achieved bus bandwidth per (op, algorithm, link class of the group):
  /// what calibration fits so that measured large-message busbw is reproduced.
  std::array<std::array<std::array<double, kNumLinkClasses>, kNumAlgorithms>, kNumCollOps> bus_efficiency{};
  std::string bus_efficiency_source;

  /// Channels (NCCL rings/trees run in parallel, one SM block each) for collectives, and for
  /// point-to-point traffic the channels a rank spreads over its peers (at least 1 per peer).
  int channels = 1;
  int p2p_channels = 1;
  /// Most data bandwidth one channel moves, per protocol (GB/s; 0 = no limit).
  PerProtocol<double> channel_max_GBps{};
  /// Most bus bandwidth all channels together reach, per protocol (GB/s; 0 = no limit).
  PerProtocol<double> max_busbw_GBps{};
  /// Bytes per channel below which NCCL uses fewer channels, per protocol (ring LL: times n).
  PerProtocol<double> channel_threshold_bytes{};
  std::string channels_source;

  /// Efficiency by message size per op (see the top; datasheet: no knots, i.e. 1 everywhere).
  struct SizeCurve {
    std::vector<double> log2_bytes;  ///< strictly increasing
    std::vector<double> factor;      ///< one per knot, each > 0
    bool empty() const { return log2_bytes.empty(); }
    /// Piecewise linear in log2(bytes) through the knots, constant beyond the ends, 1 if empty.
    double at(double bytes) const;
  };
  std::array<SizeCurve, kNumCollOps> size_efficiency{};
  SizeCurve sendrecv_distinct_peers;  ///< sendrecv on 3+ ranks; no knots: size_efficiency[sendrecv]
  std::string size_efficiency_source;

  /// The curve `op` uses on a group of `nranks`.
  const SizeCurve& size_curve(CollOp op, int nranks) const {
    if (op == CollOp::sendrecv && nranks >= 3 && !sendrecv_distinct_peers.empty()) return sendrecv_distinct_peers;
    return size_efficiency[static_cast<std::size_t>(idx(op))];
  }

  double base_latency(Algorithm a, Protocol p) const { return base_latency_us[idx(a)][idx(p)]; }
  double hop_latency(LinkClass c, Algorithm a, Protocol p) const { return hop_latency_us[idx(c)][idx(a)][idx(p)]; }
  double proto_eff(Algorithm a, Protocol p) const { return protocol_efficiency[idx(a)][idx(p)]; }
  double link_eff(LinkClass c) const { return link_efficiency[idx(c)]; }
  double bus_eff(CollOp op, Algorithm a, LinkClass c) const { return bus_efficiency[idx(op)][idx(a)][idx(c)]; }
};

/// Built-in defaults with their sources: NCCL 2.19 src/graph/tuning.cc (baseLat, hwLat, protocol
/// factors, Hopper per-channel caps), src/graph/topo.h (NVLink/PCIe usable bandwidth) and
/// src/include/comm.h (thread thresholds); a few values are marked "assumed" with the reason.
CollectiveParams datasheet_collective_params();

/// JSON form: {"schema": "scalescope.collective_params/1", "base_latency_us": {"source": ...,
/// "ring": {"LL": 6.6, ...}, ...}, "hop_latency_us": {"source": ..., "nvlink": {"ring": {...}}},
/// "protocol_efficiency": {...}, "link_efficiency": {"source": ..., "nvlink": 0.8, ...},
/// "bus_efficiency": {"source": ..., "all_reduce": {"ring": {"nvlink": 1, "pcie": 1, "net": 1}}},
/// "channels": {"source": ..., "count": 16, "p2p": 16, "max_GBps": {...}, "max_busbw_GBps": {...},
/// "threshold_bytes": {...}}, "size_efficiency": {"source": ..., "all_reduce": {"log2_bytes": [10, 20],
/// "factor": [0.9, 1.1]}, ..., "sendrecv_distinct_peers": {...}}}.
Json to_json(const CollectiveParams& params);

/// Reads the form above. Every group is optional and every entry inside a group too: what is
/// absent keeps its datasheet value. A group that is present must name its "source"; when it
/// gives only some entries, the group's provenance becomes "<source>; other entries: <datasheet
/// source>". Unknown keys, algorithms not valid for an op, and out-of-range values are errors
/// naming `source` and the JSON path.
Expected<CollectiveParams> collective_params_from_json(const Json& doc, std::string source);

}  // namespace scalescope
