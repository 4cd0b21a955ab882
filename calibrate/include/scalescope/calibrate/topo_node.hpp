// A cluster file of one node from `nvidia-smi topo -m` text (`scalescope import nvidia-smi-topo`).
//
// Rules (nvidia-smi's legend): NV<k> between two GPUs is k NVLink links; when every GPU pair shows the
// same NV<k> on more than two GPUs the GPUs hang off NVSwitches (one nvswitch vertex, k links per GPU,
// docs/cluster-format.md), otherwise each pair gets its own k links. The PCIe paths are kept as paths of the
// same type in the written node (Cluster::gpu_path_type gives back what nvidia-smi printed):
//   PIX  devices under one leaf PCIe switch;
//   PXB  leaf switches (one per PIX group, singletons included) under one parent switch;
//   PHB  the top switches or devices under one host bridge: a PCIe switch listed in `host_bridges`;
//   NODE under one CPU socket (its root complex); SYS across sockets, joined by one UPI link.
// NVLink hides the PCIe relation of a pair: such GPUs share a socket unless their NUMA affinities differ.
// The "CPU Affinity" / "NUMA Affinity" columns become `cpu_affinity` and `cpu_numa_nodes` of each socket (from
// its first GPU; the NUMA ids only when every socket has its own and they are not the default 0, 1, ...).
// Bandwidths: NVLink per link, PCIe and UPI per direction, from the options.
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
