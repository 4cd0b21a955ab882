// `nvidia-smi topo -m` -> a one-node cluster document (rules in topo_node.hpp).
#include "scalescope/calibrate/topo_node.hpp"

#include <map>
#include <numeric>
#include <vector>

#include "scalescope/calibrate/smi_text.hpp"

namespace scalescope::calib {
namespace {

struct UnionFind {
  std::vector<int> p;
  explicit UnionFind(int n) : p(static_cast<std::size_t>(n)) { std::iota(p.begin(), p.end(), 0); }
  int find(int x) { return p[static_cast<std::size_t>(x)] == x ? x : p[static_cast<std::size_t>(x)] = find(p[static_cast<std::size_t>(x)]); }
  void join(int a, int b) { p[static_cast<std::size_t>(find(a))] = find(b); }
};

int nv_links(const std::string& cell) {
  if (cell.size() < 3 || cell.compare(0, 2, "NV") != 0) return 0;
  try {
    return std::stoi(cell.substr(2));
  } catch (...) {
    return 0;
  }
}

}  // namespace

Expected<Json> node_file_from_topo(std::string_view text, const std::string& source, const TopoNodeOptions& o) {
  const auto m = smi_text::parse_topo_matrix(text);
  if (!m) return input_error(source, "", "expected `nvidia-smi topo -m` output (a header with GPU0 ...), found none");
  std::vector<std::string> gpus, nics;
  for (const auto& c : m->columns) (c.rfind("GPU", 0) == 0 ? gpus : nics).push_back(c);
  const int G = static_cast<int>(gpus.size()), N = static_cast<int>(nics.size());
  std::vector<std::string> dev = gpus;  // devices: GPUs then NICs
  dev.insert(dev.end(), nics.begin(), nics.end());
  const int D = G + N;
  auto cell = [&](int a, int b) { return m->link(dev[static_cast<std::size_t>(a)], dev[static_cast<std::size_t>(b)]); };
  for (int a = 0; a < D; ++a)
    for (int b = 0; b < D; ++b)
      if (a != b && !cell(a, b))
        return input_error(source, "", "the matrix has no cell for " + dev[static_cast<std::size_t>(a)] + " -> " +
                                           dev[static_cast<std::size_t>(b)]);
  UnionFind sw(D), sock(D);
  for (int a = 0; a < D; ++a)
    for (int b = a + 1; b < D; ++b) {
      const std::string c = *cell(a, b);
      if (c == "PIX" || c == "PXB") sw.join(a, b), sock.join(a, b);
      if (c == "NODE" || c == "PHB") sock.join(a, b);
      if (nv_links(c) > 0) sock.join(a, b);  // NVLink hides the PCIe relation: assume one socket unless SYS elsewhere
    }
  // NVLink: all pairs alike on more than 2 GPUs -> NVSwitch.
  int common = G > 2 ? nv_links(*cell(0, 1)) : 0;
  for (int a = 0; a < G && common > 0; ++a)
    for (int b = 0; b < G; ++b)
      if (a != b && nv_links(*cell(a, b)) != common) common = 0;
  std::map<int, int> switch_of, socket_of;  // root -> index
  std::map<int, int> members;
  for (int d = 0; d < D; ++d) ++members[sw.find(d)];
  for (int d = 0; d < D; ++d) {
    if (members[sw.find(d)] > 1 && !switch_of.count(sw.find(d))) switch_of.emplace(sw.find(d), static_cast<int>(switch_of.size()));
    if (!socket_of.count(sock.find(d))) socket_of.emplace(sock.find(d), static_cast<int>(socket_of.size()));
  }
  auto name = [&](int d) { return d < G ? "gpu" + std::to_string(d) : "nic" + std::to_string(d - G); };
  Json links = Json::array();
  if (common > 0) {
    links.push_back({{"a", "gpu*"}, {"b", "nvswitch0"}, {"kind", "nvlink"}, {"count", common},
                     {"per_link_GBps", o.nvlink_GBps}, {"latency_us", 0.1}});
  } else {
    for (int a = 0; a < G; ++a)
      for (int b = a + 1; b < G; ++b)
        if (const int k = nv_links(*cell(a, b)); k > 0)
          links.push_back({{"a", name(a)}, {"b", name(b)}, {"kind", "nvlink"}, {"count", k},
                           {"per_link_GBps", o.nvlink_GBps}, {"latency_us", 0.1}});
  }
  auto pcie = [&](const std::string& a, const std::string& b) {
    links.push_back({{"a", a}, {"b", b}, {"kind", "pcie"}, {"bandwidth_GBps", o.pcie_GBps}, {"latency_us", 0.2}});
  };
  for (int d = 0; d < D; ++d) {
    const auto s = switch_of.find(sw.find(d));
    pcie(name(d), s != switch_of.end() ? "pcie" + std::to_string(s->second)
                                       : "cpu" + std::to_string(socket_of.at(sock.find(d))));
  }
  for (const auto& [root, index] : switch_of) pcie("pcie" + std::to_string(index), "cpu" + std::to_string(socket_of.at(sock.find(root))));
  for (std::size_t s = 1; s < socket_of.size(); ++s)
    links.push_back({{"a", "cpu" + std::to_string(s - 1)}, {"b", "cpu" + std::to_string(s)}, {"kind", "upi"},
                     {"bandwidth_GBps", o.upi_GBps}, {"latency_us", 0.15}});
  Json node = {{"gpu", o.gpu},     {"gpus", G},   {"nvswitches", common > 0 ? 1 : 0}, {"pcie_switches", switch_of.size()},
               {"cpus", socket_of.size()}, {"nics", N}, {"links", links}};
  return Json{{"name", o.name},
              {"description", "One node imported from `nvidia-smi topo -m` (" + source + "): " + std::to_string(G) +
                                  " GPUs, " + std::to_string(N) + " NICs, " + std::to_string(switch_of.size()) +
                                  " PCIe switches, " + std::to_string(socket_of.size()) +
                                  " CPU sockets; link bandwidths and latencies are the import's assumptions"},
              {"sources", Json::array({"nvidia-smi topo -m output: " + source})},
              {"nodes", 1},
              {"node", node},
              {"fabric", {{"kind", "none"}}}};
}

}  // namespace scalescope::calib
