// `nvidia-smi topo -m` -> a one-node cluster document (rules in topo_node.hpp).
#include "scalescope/calibrate/topo_node.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
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
  // NUMA node of each GPU row ("NUMA Affinity"; -1 when absent or N/A) and its CPU list.
  std::vector<int> numa(static_cast<std::size_t>(D), -1);
  std::vector<std::string> cpus_of(static_cast<std::size_t>(D));
  for (int d = 0; d < G; ++d)
    for (std::size_t r = 0; r < m->rows.size(); ++r)
      if (m->rows[r] == dev[static_cast<std::size_t>(d)]) {
        const std::string& na = m->numa_affinity[r];
        if (!na.empty() && std::isdigit(static_cast<unsigned char>(na[0]))) numa[static_cast<std::size_t>(d)] = std::atoi(na.c_str());
        if (m->cpu_affinity[r] != "N/A") cpus_of[static_cast<std::size_t>(d)] = m->cpu_affinity[r];
      }
  // Grouping, nearest first: PIX -> one leaf switch; PXB -> leaf switches under one parent switch; PHB -> under one
  // host bridge; NODE -> one socket; SYS -> across sockets.
  UnionFind leaf(D), tree(D), bridge(D), sock(D);
  bool any_phb = false;
  for (int a = 0; a < D; ++a)
    for (int b = a + 1; b < D; ++b) {
      const std::string c = *cell(a, b);
      const int na = numa[static_cast<std::size_t>(a)], nb = numa[static_cast<std::size_t>(b)];
      if (c == "PIX") leaf.join(a, b);
      if (c == "PIX" || c == "PXB") tree.join(a, b);
      if (c == "PIX" || c == "PXB" || c == "PHB") bridge.join(a, b);
      if (c == "PHB") any_phb = true;
      if (c == "PIX" || c == "PXB" || c == "PHB" || c == "NODE") sock.join(a, b);
      // NVLink hides the PCIe relation: one socket unless SYS elsewhere or the NUMA affinities differ.
      if (nv_links(c) > 0 && (na < 0 || nb < 0 || na == nb)) sock.join(a, b);
    }
  // NVLink: all pairs alike on more than 2 GPUs -> NVSwitch.
  int common = G > 2 ? nv_links(*cell(0, 1)) : 0;
  for (int a = 0; a < G && common > 0; ++a)
    for (int b = 0; b < G; ++b)
      if (a != b && nv_links(*cell(a, b)) != common) common = 0;
  // Sockets in order of first device; leaf groups per tree; switches: leaf switches (a PIX group of several, or any
  // group of a tree of several groups), then parent switches (trees of several groups), then host bridges (PHB
  // groups of several top-level elements).
  std::map<int, int> socket_of, leaf_switch, parent_switch, bridge_switch;
  std::map<int, std::vector<int>> groups_of_tree;  // tree root -> leaf roots
  std::map<int, int> members;
  for (int d = 0; d < D; ++d) {
    ++members[leaf.find(d)];
    if (!socket_of.count(sock.find(d))) socket_of.emplace(sock.find(d), static_cast<int>(socket_of.size()));
    auto& g = groups_of_tree[tree.find(d)];
    if (std::find(g.begin(), g.end(), leaf.find(d)) == g.end()) g.push_back(leaf.find(d));
  }
  int switches = 0;
  std::vector<int> order(static_cast<std::size_t>(D));
  std::iota(order.begin(), order.end(), 0);
  for (int d : order) {  // leaf switches, in device order
    const bool multi = groups_of_tree[tree.find(d)].size() > 1;
    if ((members[leaf.find(d)] > 1 || multi) && !leaf_switch.count(leaf.find(d))) leaf_switch.emplace(leaf.find(d), switches++);
  }
  for (int d : order)
    if (groups_of_tree[tree.find(d)].size() > 1 && !parent_switch.count(tree.find(d)))
      parent_switch.emplace(tree.find(d), switches++);
  // Top-level element of a device: its parent switch, its leaf switch, or the device itself.
  auto top = [&](int d) -> std::string {
    if (parent_switch.count(tree.find(d))) return "pcie" + std::to_string(parent_switch.at(tree.find(d)));
    if (leaf_switch.count(leaf.find(d))) return "pcie" + std::to_string(leaf_switch.at(leaf.find(d)));
    return d < G ? "gpu" + std::to_string(d) : "nic" + std::to_string(d - G);
  };
  std::map<int, std::vector<std::string>> tops_of_bridge;
  for (int d : order) {
    auto& t = tops_of_bridge[bridge.find(d)];
    if (std::find(t.begin(), t.end(), top(d)) == t.end()) t.push_back(top(d));
  }
  std::vector<std::string> host_bridges;
  for (int d : order)
    if (any_phb && tops_of_bridge[bridge.find(d)].size() > 1 && !bridge_switch.count(bridge.find(d))) {
      bridge_switch.emplace(bridge.find(d), switches);
      host_bridges.push_back("pcie" + std::to_string(switches++));
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
  std::vector<std::string> linked;  // top-level elements already joined upwards
  for (int d = 0; d < D; ++d) {
    const auto l = leaf_switch.find(leaf.find(d));
    if (l != leaf_switch.end()) pcie(name(d), "pcie" + std::to_string(l->second));
    if (l != leaf_switch.end() && parent_switch.count(tree.find(d))) {
      const std::string ls = "pcie" + std::to_string(l->second);
      if (std::find(linked.begin(), linked.end(), ls) == linked.end()) {
        linked.push_back(ls);
        pcie(ls, "pcie" + std::to_string(parent_switch.at(tree.find(d))));
      }
    }
    const std::string t = top(d);
    if (std::find(linked.begin(), linked.end(), "up:" + t) != linked.end()) continue;
    linked.push_back("up:" + t);
    const auto hb = bridge_switch.find(bridge.find(d));
    pcie(t, hb != bridge_switch.end() ? "pcie" + std::to_string(hb->second)
                                      : "cpu" + std::to_string(socket_of.at(sock.find(d))));
  }
  for (const auto& [root, index] : bridge_switch)
    pcie("pcie" + std::to_string(index), "cpu" + std::to_string(socket_of.at(sock.find(root))));
  for (std::size_t s = 1; s < socket_of.size(); ++s)
    links.push_back({{"a", "cpu" + std::to_string(s - 1)}, {"b", "cpu" + std::to_string(s)}, {"kind", "upi"},
                     {"bandwidth_GBps", o.upi_GBps}, {"latency_us", 0.15}});
  // CPU / NUMA affinity of each socket: that of its first GPU that has one.
  const std::size_t S = socket_of.size();
  std::vector<int> socket_numa(S, -1);
  std::vector<std::string> socket_cpus(S);
  for (int d = 0; d < G; ++d) {
    const auto s = static_cast<std::size_t>(socket_of.at(sock.find(d)));
    if (socket_numa[s] < 0) socket_numa[s] = numa[static_cast<std::size_t>(d)];
    if (socket_cpus[s].empty()) socket_cpus[s] = cpus_of[static_cast<std::size_t>(d)];
  }
  Json node = {{"gpu", o.gpu},     {"gpus", G},   {"nvswitches", common > 0 ? 1 : 0}, {"pcie_switches", switches},
               {"cpus", S}, {"nics", N}, {"links", links}};
  if (!host_bridges.empty()) node["host_bridges"] = host_bridges;
  // NUMA nodes only when they are known for every socket, distinct, and not the default (socket k = node k).
  bool numa_known = true, numa_default = true;
  for (std::size_t s = 0; s < S; ++s) {
    numa_known = numa_known && socket_numa[s] >= 0 &&
                 std::count(socket_numa.begin(), socket_numa.end(), socket_numa[s]) == 1;
    numa_default = numa_default && socket_numa[s] == static_cast<int>(s);
  }
  if (numa_known && !numa_default) node["cpu_numa_nodes"] = socket_numa;
  if (std::any_of(socket_cpus.begin(), socket_cpus.end(), [](const std::string& c) { return !c.empty(); }))
    node["cpu_affinity"] = socket_cpus;
  return Json{{"name", o.name},
              {"description", "One node imported from `nvidia-smi topo -m` (" + source + "): " + std::to_string(G) +
                                  " GPUs, " + std::to_string(N) + " NICs, " + std::to_string(switches) +
                                  " PCIe switches, " + std::to_string(S) +
                                  " CPU sockets; link bandwidths and latencies are the import's assumptions"},
              {"sources", Json::array({"nvidia-smi topo -m output: " + source})},
              {"nodes", 1},
              {"node", node},
              {"fabric", {{"kind", "none"}}}};
}

}  // namespace scalescope::calib
