// Parsers for the text that `nvidia-smi topo -m`, `nvidia-smi nvlink -s` and
// `nvidia-smi --query-gpu=... --format=csv` print (used by the GPU calibration program).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalescope::smi_text {

/// Removes ANSI escape sequences (nvidia-smi underlines the topo header with ESC[4m ... ESC[0m).
std::string strip_ansi(std::string_view text);

/// The device part of `nvidia-smi topo -m`: the GPU/NIC columns of the header and, for each row
/// whose name is one of those columns, its cells ("X", "NV18", "SYS", "PIX", ...).
struct TopoMatrix {
  std::vector<std::string> columns;             ///< "GPU0", "GPU1", ..., "NIC0", ...
  std::vector<std::string> rows;                ///< row names in printed order
  std::vector<std::vector<std::string>> cells;  ///< cells[r][c]
  /// Per row: the "CPU Affinity" and "NUMA Affinity" columns after the cells ("0-63", "0"; empty when the row has
  /// none, as NIC rows; "N/A" as printed).
  std::vector<std::string> cpu_affinity, numa_affinity;
  /// The cell between two column/row names, or nullopt when either is absent.
  std::optional<std::string> link(std::string_view from, std::string_view to) const;
};
/// nullopt when no header with a "GPU<n>" column is found.
std::optional<TopoMatrix> parse_topo_matrix(std::string_view text);

/// One GPU block of `nvidia-smi nvlink -s`: "GPU <i>: <name> (UUID: ...)" followed by
/// "Link <l>: <x> GB/s" (active) or "Link <l>: <inactive>" lines.
struct NvlinkGpu {
  int gpu = -1;  ///< nvidia-smi index
  int active_links = 0;
  int inactive_links = 0;
  std::vector<double> link_GBps;  ///< speed of each active link, as printed
};
std::vector<NvlinkGpu> parse_nvlink_status(std::string_view text);

/// Splits a CSV line from `--format=csv,noheader` into trimmed fields.
std::vector<std::string> split_csv_line(std::string_view line);

/// "00000000:18:00.0" and "0000:18:00.0" both become "0000:18:00.0" (lower case, 4-digit domain),
/// so nvidia-smi's and CUDA's PCI bus ids compare equal.
std::string normalize_pci_bus_id(std::string_view id);

}  // namespace scalescope::smi_text
