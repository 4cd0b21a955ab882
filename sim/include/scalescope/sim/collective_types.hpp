// Vocabulary of the NCCL collective model: operations, algorithms, protocols and link classes,
// with their file spellings and the nccl-tests bus-bandwidth factors.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "scalescope/sim/cluster.hpp"

namespace scalescope {

/// The collectives nccl-tests measures (sendrecv: every rank sends to rank+1, as sendrecv_perf).
enum class CollOp { all_reduce, all_gather, reduce_scatter, alltoall, broadcast, sendrecv };
/// How a collective moves data.
///  ring:     NCCL ring (channels, rail-aligned between nodes with PXN); also the broadcast pipeline.
///  tree:     NCCL double binary tree between nodes, a chain inside each node (all_reduce only).
///  pairwise: every rank sends its 1/n slice to every other rank at once (alltoall).
///  p2p:      point-to-point send to the next rank (sendrecv).
enum class Algorithm { ring, tree, pairwise, p2p };
/// NCCL's wire protocols: LL (8 data bytes + 8 flag bytes per 16), LL128 (120 of 128), Simple.
enum class Protocol { LL, LL128, Simple };
/// Class of a hop for latencies and efficiencies: NVLink, PCIe inside a node (UPI and host memory count as
/// PCIe), or the network between nodes (InfiniBand, RoCE, Ethernet).
enum class LinkClass { nvlink, pcie, net };

inline constexpr int kNumCollOps = 6;
inline constexpr int kNumAlgorithms = 4;
inline constexpr int kNumProtocols = 3;
inline constexpr int kNumLinkClasses = 3;

inline constexpr std::array<CollOp, kNumCollOps> kAllCollOps{CollOp::all_reduce, CollOp::all_gather,
                                                             CollOp::reduce_scatter, CollOp::alltoall,
                                                             CollOp::broadcast, CollOp::sendrecv};
inline constexpr std::array<Algorithm, kNumAlgorithms> kAllAlgorithms{Algorithm::ring, Algorithm::tree,
                                                                      Algorithm::pairwise, Algorithm::p2p};
inline constexpr std::array<Protocol, kNumProtocols> kAllProtocols{Protocol::LL, Protocol::LL128,
                                                                   Protocol::Simple};
inline constexpr std::array<LinkClass, kNumLinkClasses> kAllLinkClasses{LinkClass::nvlink, LinkClass::pcie,
                                                                        LinkClass::net};

constexpr int idx(CollOp v) { return static_cast<int>(v); }
constexpr int idx(Algorithm v) { return static_cast<int>(v); }
constexpr int idx(Protocol v) { return static_cast<int>(v); }
constexpr int idx(LinkClass v) { return static_cast<int>(v); }

/// "all_reduce", "ring", "LL128", "nvlink", ... (the spellings used in files and on the command line).
std::string_view to_string(CollOp op);
std::string_view to_string(Algorithm algorithm);
std::string_view to_string(Protocol protocol);
std::string_view to_string(LinkClass link_class);

/// Inverse of to_string (protocols also accept lower case: "ll", "ll128", "simple").
std::optional<CollOp> parse_coll_op(std::string_view s);
std::optional<Algorithm> parse_algorithm(std::string_view s);
std::optional<Protocol> parse_protocol(std::string_view s);
std::optional<LinkClass> parse_link_class(std::string_view s);

/// "all_reduce | all_gather | ..." for error messages.
std::string coll_op_choices();
std::string algorithm_choices();
std::string protocol_choices();

/// Class of a physical link kind: nvlink -> nvlink; pcie, upi, memory -> pcie; ib, roce, ethernet -> net.
LinkClass link_class_of(LinkKind kind);

/// Whether NCCL runs `op` with `algorithm` (all_reduce: ring or tree; all_gather, reduce_scatter,
/// broadcast: ring; alltoall: pairwise; sendrecv: p2p).
bool algorithm_supports(Algorithm algorithm, CollOp op);

/// nccl-tests bus-bandwidth factor: busbw = algbw * factor. all_reduce 2(n-1)/n; all_gather,
/// reduce_scatter, alltoall (n-1)/n; broadcast and sendrecv 1 (nccl-tests doc/PERFORMANCE.md).
double busbw_factor(CollOp op, int nranks);

}  // namespace scalescope
