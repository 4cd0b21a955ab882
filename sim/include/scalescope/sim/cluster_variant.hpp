// What-if variants of a cluster document: GPUDirect RDMA on or off, PCIe-only GPU-to-GPU traffic
// (NVLink removed), NCCL's P2P level. Used by the GUI's what-if switches and by `calibrate check`,
// so that both price a variant exactly as a cluster file edited by hand would be priced.
#pragma once

#include <optional>
#include <string>

#include "scalescope/sim/json_reader.hpp"

namespace scalescope {

struct ClusterVariant {
  std::optional<bool> gpudirect_rdma;  ///< sets $.node.gpudirect_rdma
  bool pcie_only = false;  ///< removes the NVLink links and the NVSwitches (GPUs talk over PCIe)
  std::optional<std::string> p2p_level;  ///< sets $.node.p2p_level (LOC, NVL, PIX, PXB, PHB, SYS)

  bool empty() const { return !gpudirect_rdma && !pcie_only && !p2p_level; }
  /// "GPUDirect RDMA off, PCIe-only P2P", or "as the file" when empty.
  std::string describe() const;
};

/// The document with the variant applied; everything else as it was. The result is validated when
/// it is loaded (cluster_from_json), e.g. a PCIe-only variant of a node whose GPUs have no PCIe
/// path is an input error there.
Json apply_variant(Json doc, const ClusterVariant& variant);

}  // namespace scalescope
