// Names, parsing and nccl-tests bus-bandwidth factors for the collective model's vocabulary.
#include "scalescope/sim/collective_types.hpp"

#include <cctype>

namespace scalescope {

namespace {

constexpr std::array<std::string_view, kNumCollOps> kOpNames{"all_reduce", "all_gather", "reduce_scatter",
                                                             "alltoall",   "broadcast",  "sendrecv"};
constexpr std::array<std::string_view, kNumAlgorithms> kAlgoNames{"ring", "tree", "pairwise", "p2p"};
constexpr std::array<std::string_view, kNumProtocols> kProtoNames{"LL", "LL128", "Simple"};
constexpr std::array<std::string_view, kNumLinkClasses> kClassNames{"nvlink", "pcie", "net"};

template <class E, std::size_t N>
std::optional<E> find_name(const std::array<std::string_view, N>& names, std::string_view s) {
  for (std::size_t i = 0; i < N; ++i)
    if (names[i] == s) return static_cast<E>(i);
  return std::nullopt;
}

template <std::size_t N>
std::string join(const std::array<std::string_view, N>& names) {
  std::string out;
  for (auto n : names) out += (out.empty() ? "" : " | ") + std::string(n);
  return out;
}

}  // namespace

std::string_view to_string(CollOp op) { return kOpNames[static_cast<std::size_t>(idx(op))]; }
std::string_view to_string(Algorithm a) { return kAlgoNames[static_cast<std::size_t>(idx(a))]; }
std::string_view to_string(Protocol p) { return kProtoNames[static_cast<std::size_t>(idx(p))]; }
std::string_view to_string(LinkClass c) { return kClassNames[static_cast<std::size_t>(idx(c))]; }

std::optional<CollOp> parse_coll_op(std::string_view s) { return find_name<CollOp>(kOpNames, s); }
std::optional<Algorithm> parse_algorithm(std::string_view s) { return find_name<Algorithm>(kAlgoNames, s); }
std::optional<LinkClass> parse_link_class(std::string_view s) { return find_name<LinkClass>(kClassNames, s); }
std::optional<Protocol> parse_protocol(std::string_view s) {
  if (auto p = find_name<Protocol>(kProtoNames, s)) return p;
  std::string lower(s);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "ll") return Protocol::LL;
  if (lower == "ll128") return Protocol::LL128;
  if (lower == "simple") return Protocol::Simple;
  return std::nullopt;
}

std::string coll_op_choices() { return join(kOpNames); }
std::string algorithm_choices() { return join(kAlgoNames); }
std::string protocol_choices() { return join(kProtoNames); }

LinkClass link_class_of(LinkKind kind) {
  switch (kind) {
    case LinkKind::nvlink: return LinkClass::nvlink;
    case LinkKind::pcie:
    case LinkKind::upi:
    case LinkKind::memory: return LinkClass::pcie;
    case LinkKind::ib:
    case LinkKind::roce:
    case LinkKind::ethernet: return LinkClass::net;
  }
  return LinkClass::net;
}

bool algorithm_supports(Algorithm a, CollOp op) {
  switch (op) {
    case CollOp::all_reduce: return a == Algorithm::ring || a == Algorithm::tree;
    case CollOp::all_gather:
    case CollOp::reduce_scatter:
    case CollOp::broadcast: return a == Algorithm::ring;
    case CollOp::alltoall: return a == Algorithm::pairwise;
    case CollOp::sendrecv: return a == Algorithm::p2p;
  }
  return false;
}

double busbw_factor(CollOp op, int nranks) {
  const double n = nranks;
  switch (op) {
    case CollOp::all_reduce: return nranks > 1 ? 2.0 * (n - 1.0) / n : 0.0;
    case CollOp::all_gather:
    case CollOp::reduce_scatter:
    case CollOp::alltoall: return nranks > 1 ? (n - 1.0) / n : 0.0;
    case CollOp::broadcast:
    case CollOp::sendrecv: return 1.0;
  }
  return 1.0;
}

}  // namespace scalescope
