// A cluster file of one node from `nvidia-smi topo -m` text (`scalescope import nvidia-smi-topo`).
//
// Rules (nvidia-smi's legend): NV<k> between two GPUs is k NVLink links; when every GPU pair shows the
// same NV<k> on more than two GPUs the GPUs hang off NVSwitches (one nvswitch vertex, k links per GPU,
// docs/cluster-format.md), otherwise each pair gets its own k links. PIX / PXB (same PCIe switch or
// tree) put two devices under one PCIe switch; NODE / PHB put them on one CPU socket; SYS crosses
// sockets. Devices that share no switch hang directly off their socket's CPU; sockets are joined by
// one UPI link. Bandwidths: NVLink per link, PCIe and UPI per direction, from the options.
#pragma once

#include <string>
#include <string_view>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::calib {

struct TopoNodeOptions {
  std::string name = "imported-node";
  Json gpu;                        ///< the cluster file's `gpu` object (model, memory, peaks)
  double nvlink_GBps = 26.562;     ///< per link per direction (H100/H200: 26.562, A100: 25, B200: 50)
  double pcie_GBps = 63.0;         ///< PCIe Gen5 x16 per direction
  double upi_GBps = 64.0;          ///< socket-to-socket per direction
};

/// The cluster document (single node, fabric none); `source` names the text in errors and sources.
Expected<Json> node_file_from_topo(std::string_view text, const std::string& source, const TopoNodeOptions& o);

}  // namespace scalescope::calib
