// Parsing a cluster file (docs/cluster-format.md) into a ClusterSpec, with path-aware errors.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "cluster_spec.hpp"

namespace scalescope {

namespace {

constexpr double kMaxLatencyUs = 1e6;  // routing packs hops and latency (< 1 s) into one integer

struct DeviceRange {
  const char* prefix;
  int first;
  int count;
};

std::vector<DeviceRange> device_ranges(const NodeSpec& n) {
  return {{"gpu", 0, n.gpus},
          {"nvswitch", n.first_nvswitch(), n.nvswitches},
          {"pcie", n.first_pcie(), n.pcie_switches},
          {"cpu", n.first_cpu(), n.cpus},
          {"nic", n.first_nic(), n.nics}};
}

std::string device_list(const NodeSpec& n) {
  std::string out;
  for (const auto& r : device_ranges(n)) {
    if (r.count == 0) continue;
    if (!out.empty()) out += ", ";
    out += r.prefix + std::string("0");
    if (r.count > 1) out += "-" + std::to_string(r.count - 1);
  }
  return out;
}

bool parse_uint(std::string_view s, int& out) {
  if (s.empty() || s.size() > 6) return false;
  int v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  out = v;
  return true;
}

/// One token: "gpu3", "gpu0-3", "gpu*".
void expand_token(const JsonCursor& at, const std::string& tok, const NodeSpec& n,
                  std::vector<int>& out) {
  std::size_t i = 0;
  while (i < tok.size() && tok[i] >= 'a' && tok[i] <= 'z') ++i;
  const std::string prefix = tok.substr(0, i);
  const std::string rest = tok.substr(i);
  const DeviceRange* range = nullptr;
  const auto ranges = device_ranges(n);
  for (const auto& r : ranges)
    if (prefix == r.prefix) range = &r;
  int lo = 0, hi = 0;
  bool ok = range != nullptr;
  if (ok && rest == "*") {
    lo = 0;
    hi = range->count - 1;
  } else if (ok) {
    const auto dash = rest.find('-');
    if (dash == std::string::npos) {
      ok = parse_uint(rest, lo);
      hi = lo;
    } else {
      ok =
          parse_uint(rest.substr(0, dash), lo) && parse_uint(rest.substr(dash + 1), hi) && lo <= hi;
    }
  }
  if (!ok) {
    at.fail(
        "expected a device such as gpu0, gpu0-3, gpu*, nvswitch0, pcie1, cpu0 or nic2, got the "
        "string \"" +
        tok + "\"");
  }
  if (range->count == 0 || hi >= range->count) {
    const std::string missing = rest == "*" ? prefix + "*" : prefix + std::to_string(hi);
    at.fail("no device '" + missing + "' in the node (devices: " + device_list(n) + ")");
  }
  for (int k = lo; k <= hi; ++k) out.push_back(range->first + k);
}

std::vector<int> expand_endpoint(const JsonCursor& c, const NodeSpec& n) {
  std::vector<int> out;
  if (c.json().is_string()) {
    expand_token(c, c.as_string(), n, out);
  } else if (c.json().is_array() && c.size() > 0) {
    for (const auto& item : c.items()) expand_token(item, item.as_string(), n, out);
  } else {
    c.fail("expected a device name such as \"gpu*\" or a non-empty array of names, " +
           JsonCursor::describe(c.json()));
  }
  return out;
}

LinkKind parse_link_kind(const JsonCursor& c) {
  const std::string s = c.as_enum({"nvlink", "pcie", "upi", "ib", "roce", "ethernet"});
  if (s == "nvlink") return LinkKind::nvlink;
  if (s == "pcie") return LinkKind::pcie;
  if (s == "upi") return LinkKind::upi;
  if (s == "ib") return LinkKind::ib;
  if (s == "roce") return LinkKind::roce;
  return LinkKind::ethernet;
}

Seconds parse_latency(const JsonCursor& parent, std::string_view key) {
  const JsonCursor c = parent.at(key);
  const double us = c.as_nonnegative_number();
  if (us >= kMaxLatencyUs)
    c.fail("expected a latency below 1 second (1e6 us), " + JsonCursor::describe(c.json()));
  return microseconds(us);
}

int parse_count(const JsonCursor& node, std::string_view key, int max) {
  const auto c = node.find(key);
  if (!c) return 0;
  const std::int64_t v = c->as_nonnegative_int();
  if (v > max)
    c->fail("expected at most " + std::to_string(max) + ", " + JsonCursor::describe(c->json()));
  return static_cast<int>(v);
}

GpuSpec parse_gpu(const JsonCursor& c) {
  c.expect_keys(
      {"model", "memory_GiB", "memory_MiB", "hbm_bandwidth_GBps", "sm_count", "peak_dense_TFLOPS"});
  GpuSpec g;
  g.model = c.get_string("model");
  const bool gib = c.has("memory_GiB"), mib = c.has("memory_MiB");
  if (gib == mib) c.fail("expected exactly one of memory_GiB and memory_MiB");
  // Plausible ranges (docs/plausible-ranges.md): 100-1000x beyond today's parts in both directions.
  g.memory = gib ? GiB(c.get_number_in("memory_GiB", 1e-3, 1e5)) : MiB(c.get_number_in("memory_MiB", 1.0, 1e8));
  g.hbm_bandwidth = GBps(c.get_number_in("hbm_bandwidth_GBps", 1.0, 1e6));
  const std::int64_t sms = c.get_positive_int("sm_count");
  if (sms > 100000) c.at("sm_count").fail("expected at most 100000, got " + std::to_string(sms));
  g.sm_count = static_cast<int>(sms);
  const JsonCursor peak = c.at("peak_dense_TFLOPS");
  peak.expect_keys({"fp8", "bf16", "fp16", "tf32", "fp32"});
  if (peak.size() == 0) peak.fail("expected at least one of fp8, bf16, fp16, tf32, fp32");
  auto read = [&](std::string_view k, std::optional<FlopsPerSecond>& out) {
    if (peak.has(k)) out = TFLOPS(peak.get_number_in(k, 1e-3, 1e6));
  };
  read("fp8", g.peak.fp8);
  read("bf16", g.peak.bf16);
  read("fp16", g.peak.fp16);
  read("tf32", g.peak.tf32);
  read("fp32", g.peak.fp32);
  return g;
}

void parse_link(const JsonCursor& c, NodeSpec& n) {
  c.expect_keys({"a", "b", "kind", "bandwidth_GBps", "count", "per_link_GBps", "latency_us"});
  const std::vector<int> a = expand_endpoint(c.at("a"), n);
  const std::vector<int> b = expand_endpoint(c.at("b"), n);
  TemplateLinkSpec l;
  l.kind = parse_link_kind(c.at("kind"));
  l.path = c.path();
  if (c.has("bandwidth_GBps")) {
    if (c.has("count") || c.has("per_link_GBps"))
      c.fail("expected either bandwidth_GBps or count and per_link_GBps, not both");
    l.bandwidth = GBps(c.get_number_in("bandwidth_GBps", 1e-3, 1e6));
  } else if (c.has("count") || c.has("per_link_GBps")) {
    const std::int64_t count = c.get_positive_int("count");
    if (count > 1024)
      c.at("count").fail("expected at most 1024 links, got " + std::to_string(count));
    l.lanes = static_cast<int>(count);
    l.bandwidth = GBps(static_cast<double>(count) * c.get_number_in("per_link_GBps", 1e-3, 1e6));
  } else {
    c.fail("missing bandwidth: expected bandwidth_GBps, or count and per_link_GBps");
  }
  l.latency = parse_latency(c, "latency_us");
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1) {
    c.fail("a lists " + std::to_string(a.size()) + " devices and b lists " +
           std::to_string(b.size()) +
           "; expected equal lengths (paired in order) or a single device on one side");
  }
  const std::size_t count = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < count; ++i) {
    l.a = a[a.size() == 1 ? 0 : i];
    l.b = b[b.size() == 1 ? 0 : i];
    if (l.a == l.b) c.fail("a link from " + n.name_of(l.a) + " to itself");
    n.links.push_back(l);
  }
}

/// The keys of host paths (docs/cluster-format.md): GPUDirect RDMA, P2P level, host memory, PCIe host
/// bridges and the CPUs' NUMA nodes; adds the host-memory vertices and their links when the node stages.
void parse_host_keys(const JsonCursor& c, NodeSpec& n) {
  n.gpudirect_rdma = c.get_bool("gpudirect_rdma", true);
  if (const auto lv = c.find("p2p_level")) {
    const std::string v = lv->as_enum({"LOC", "NVL", "PIX", "PXB", "PHB", "SYS"});
    n.p2p_level = v == "LOC" ? std::nullopt : parse_path_type(v);
  }
  if (c.has("host_memory_GBps")) n.host_memory_bandwidth = GBps(c.get_number_in("host_memory_GBps", 1e-3, 1e6));
  n.host_bridge.assign(static_cast<std::size_t>(n.pcie_switches), 0);
  if (const auto hb = c.find("host_bridges")) {
    hb->expect_array();
    for (const auto& item : hb->items()) {
      const std::string name = item.as_string();
      std::vector<int> tvs;
      expand_token(item, name, n, tvs);
      for (int tv : tvs) {
        if (n.kind_of(tv) != VertexKind::pcie_switch)
          item.fail("expected PCIe switches (pcie0, pcie1-3, ...), got the string \"" + name + "\"");
        n.host_bridge[static_cast<std::size_t>(tv - n.first_pcie())] = 1;
      }
    }
  }
  for (int k = 0; k < n.cpus; ++k) n.cpu_numa.push_back(k);
  if (const auto numa = c.find("cpu_numa_nodes")) {
    if (!numa->is_array() || numa->size() != static_cast<std::size_t>(n.cpus))
      numa->fail("expected an array of " + std::to_string(n.cpus) + " NUMA node ids (one per CPU), " +
                 JsonCursor::describe(numa->json()));
    std::size_t k = 0;
    for (const auto& r : numa->items()) {
      const std::int64_t v = r.as_nonnegative_int();
      if (v >= 1024) r.fail("expected a NUMA node id below 1024, got " + std::to_string(v));
      n.cpu_numa[k++] = static_cast<int>(v);
    }
  }
  if (const auto aff = c.find("cpu_affinity")) {
    if (!aff->is_array() || aff->size() != static_cast<std::size_t>(n.cpus))
      aff->fail("expected an array of " + std::to_string(n.cpus) + " CPU lists such as \"0-55\" (one per CPU), " +
                JsonCursor::describe(aff->json()));
    for (const auto& r : aff->items()) n.cpu_affinity.push_back(r.as_string());
  }
  if (!n.stages()) return;
  if (n.cpus == 0)
    c.at(n.gpudirect_rdma ? "p2p_level" : "gpudirect_rdma")
        .fail("staging through host memory needs a CPU in the node (cpus is 0)");
  // One host memory per NUMA node, joined to the node's first CPU; reads and writes share its bandwidth, each
  // direction of the link carries half (staging writes every byte once and reads it once).
  std::vector<int> numa = n.cpu_numa;
  std::sort(numa.begin(), numa.end());
  numa.erase(std::unique(numa.begin(), numa.end()), numa.end());
  n.host_memory_numa = numa;
  for (std::size_t m = 0; m < numa.size(); ++m) {
    const auto cpu = std::find(n.cpu_numa.begin(), n.cpu_numa.end(), numa[m]) - n.cpu_numa.begin();
    TemplateLinkSpec l;
    l.a = n.first_cpu() + static_cast<int>(cpu);
    l.b = n.first_host_memory() + static_cast<int>(m);
    l.kind = LinkKind::memory;
    l.bandwidth = n.host_memory_bandwidth * 0.5;
    l.latency = microseconds(0.1);
    l.path = c.path();
    n.links.push_back(l);
  }
}

NodeSpec parse_node(const JsonCursor& c) {
  c.expect_keys({"gpu", "gpus", "nvswitches", "pcie_switches", "cpus", "nics", "nic_rails", "links",
                 "gpudirect_rdma", "p2p_level", "host_memory_GBps", "host_bridges", "cpu_numa_nodes",
                 "cpu_affinity"});
  NodeSpec n;
  n.gpu = parse_gpu(c.at("gpu"));
  const std::int64_t gpus = c.get_positive_int("gpus");
  if (gpus > 4096)
    c.at("gpus").fail("expected at most 4096 GPUs per node, got " + std::to_string(gpus));
  n.gpus = static_cast<int>(gpus);
  n.nvswitches = parse_count(c, "nvswitches", 256);
  n.pcie_switches = parse_count(c, "pcie_switches", 1024);
  n.cpus = parse_count(c, "cpus", 64);
  n.nics = parse_count(c, "nics", 1024);
  if (const auto rails = c.find("nic_rails")) {
    if (!rails->is_array() || rails->size() != static_cast<std::size_t>(n.nics))
      rails->fail("expected an array of " + std::to_string(n.nics) +
                  " rail indices (one per NIC), " + JsonCursor::describe(rails->json()));
    for (const auto& r : rails->items()) {
      const std::int64_t v = r.as_nonnegative_int();
      if (v >= 1024) r.fail("expected a rail index below 1024, got " + std::to_string(v));
      n.nic_rails.push_back(static_cast<int>(v));
    }
  } else {
    for (int k = 0; k < n.nics; ++k) n.nic_rails.push_back(k);
  }
  const JsonCursor links = c.at("links");
  links.expect_array();
  for (const auto& l : links.items()) parse_link(l, n);
  // Every NIC hangs off a PCIe switch or a CPU root complex.
  for (int k = 0; k < n.nics; ++k) {
    const int tv = n.first_nic() + k;
    bool attached = false;
    for (const auto& l : n.links) {
      if (l.a != tv && l.b != tv) continue;
      const int other = l.a == tv ? l.b : l.a;
      const VertexKind ok = n.kind_of(other);
      if (ok != VertexKind::pcie_switch && ok != VertexKind::cpu)
        JsonCursor(links.json(), links.file(), l.path)
            .fail("nic" + std::to_string(k) +
                  " may only be attached to a PCIe switch or a CPU, not to " + n.name_of(other));
      attached = true;
    }
    if (!attached)
      links.fail("nic" + std::to_string(k) + " is not attached to a PCIe switch or CPU");
  }
  parse_host_keys(c, n);
  return n;
}

FabricSpec parse_fabric(const JsonCursor& c) {
  FabricSpec f;
  const std::string kind =
      c.at("kind").as_enum({"none", "single_switch", "fat_tree", "rail_optimized"});
  if (kind == "none") {
    c.expect_keys({"kind"});
    f.kind = FabricKind::none;
    return f;
  }
  if (kind == "single_switch") {
    c.expect_keys({"kind", "link_kind", "nic_speed_Gbps", "link_latency_us"});
    f.kind = FabricKind::single_switch;
  } else if (kind == "fat_tree") {
    c.expect_keys({"kind", "link_kind", "nic_speed_Gbps", "link_latency_us", "tiers", "radix",
                   "oversubscription", "rail_aligned_leaves", "routing"});
    f.kind = FabricKind::fat_tree;
    const JsonCursor tiers = c.at("tiers");
    const std::int64_t t = tiers.as_int();
    if (t != 2 && t != 3)
      tiers.fail("expected 2 or 3 tiers, " + JsonCursor::describe(tiers.json()));
    f.tiers = static_cast<int>(t);
    f.rail_aligned = c.get_bool("rail_aligned_leaves", false);
  } else {
    c.expect_keys({"kind", "link_kind", "nic_speed_Gbps", "link_latency_us", "radix", "oversubscription",
                   "max_tiers", "planes", "routing", "nic_selection"});
    f.kind = FabricKind::rail_optimized;
    f.tiers = 2;
    if (const auto mt = c.find("max_tiers")) {
      const std::int64_t t = mt->as_int();
      if (t != 2 && t != 3) mt->fail("expected 2 or 3 tiers at most, " + JsonCursor::describe(mt->json()));
      f.tiers = static_cast<int>(t);
    }
    if (const auto planes = c.find("planes")) f.rail_planes = planes->as_enum({"one", "per_rail"}) == "per_rail";
    if (const auto sel = c.find("nic_selection")) f.own_rail_nics = sel->as_enum({"own_rail", "hashed"}) == "own_rail";
    f.rail_aligned = true;
  }
  const JsonCursor lk = c.at("link_kind");
  const std::string lks = lk.as_enum({"ib", "roce", "ethernet"});
  f.link_kind = lks == "ib" ? LinkKind::ib : lks == "roce" ? LinkKind::roce : LinkKind::ethernet;
  f.routing = f.link_kind == LinkKind::ib ? FabricRouting::destination : FabricRouting::ecmp;
  if (const auto routing = c.find("routing")) {
    const bool by_destination = routing->as_enum({"destination", "ecmp"}) == "destination";
    f.routing = by_destination ? FabricRouting::destination : FabricRouting::ecmp;
  }
  f.port_bandwidth = Gbps(c.get_number_in("nic_speed_Gbps", 1.0, 1e6));
  f.link_latency = parse_latency(c, "link_latency_us");
  if (f.kind == FabricKind::single_switch) return f;
  const JsonCursor radix = c.at("radix");
  const std::int64_t r = radix.as_positive_int();
  if (r < 2 || r > 100000)
    radix.fail("expected a switch radix between 2 and 100000, got " + std::to_string(r));
  f.radix = static_cast<int>(r);
  f.oversubscription.assign(static_cast<std::size_t>(f.tiers - 1), 1.0);
  if (const auto os = c.find("oversubscription")) {
    if (!os->is_array() || os->size() != f.oversubscription.size())
      os->fail("expected an array of " + std::to_string(f.oversubscription.size()) +
               " down:up ratios (one per tier below the top), " + JsonCursor::describe(os->json()));
    for (std::size_t i = 0; i < f.oversubscription.size(); ++i) {
      const JsonCursor e = os->at(i);
      const double v = e.as_positive_number();
      if (v < 1.0 || v > 64.0)
        e.fail("expected a down:up ratio between 1 and 64, " + JsonCursor::describe(e.json()));
      f.oversubscription[i] = v;
    }
  }
  return f;
}

}  // namespace

VertexKind NodeSpec::kind_of(int tv) const {
  if (tv < first_nvswitch()) return VertexKind::gpu;
  if (tv < first_pcie()) return VertexKind::nvswitch;
  if (tv < first_cpu()) return VertexKind::pcie_switch;
  if (tv < first_nic()) return VertexKind::cpu;
  if (tv < first_host_memory()) return VertexKind::nic;
  return VertexKind::host_memory;
}

int NodeSpec::local_of(int tv) const {
  switch (kind_of(tv)) {
    case VertexKind::gpu:
      return tv;
    case VertexKind::nvswitch:
      return tv - first_nvswitch();
    case VertexKind::pcie_switch:
      return tv - first_pcie();
    case VertexKind::cpu:
      return tv - first_cpu();
    case VertexKind::host_memory:
      return tv - first_host_memory();
    default:
      return tv - first_nic();
  }
}

std::string NodeSpec::name_of(int tv) const {
  const VertexKind k = kind_of(tv);
  if (k == VertexKind::host_memory)  // named by its NUMA node
    return "hostmem" + std::to_string(host_memory_numa[static_cast<std::size_t>(local_of(tv))]);
  static constexpr const char* kPrefix[] = {"gpu", "nvswitch", "pcie", "cpu", "nic"};
  return kPrefix[static_cast<int>(k)] + std::to_string(local_of(tv));
}

ClusterSpec parse_cluster_spec(const Json& doc, const std::string& source) {
  const JsonCursor c(doc, source);
  c.expect_keys({"name", "description", "sources", "nodes", "node", "fabric"});
  ClusterSpec s;
  s.source = source;
  s.name = c.get_string("name");
  s.description = c.get_string("description", "");
  if (const auto src = c.find("sources"))
    for (const auto& item : src->items()) s.sources.push_back(item.as_string());
  if (const auto nodes = c.find("nodes")) {
    const std::int64_t v = nodes->as_positive_int();
    if (v > 1'000'000) nodes->fail("expected at most 1000000 nodes, got " + std::to_string(v));
    s.default_nodes = static_cast<int>(v);
  }
  s.node = parse_node(c.at("node"));
  if (const auto fabric = c.find("fabric")) s.fabric = parse_fabric(*fabric);
  if (s.fabric.rail_aligned) {
    // A rail-aligned leaf serves one NIC per node: rails must be distinct within a node.
    std::vector<char> seen;
    for (int k = 0; k < s.node.nics; ++k) {
      const auto r = static_cast<std::size_t>(s.node.nic_rails[static_cast<std::size_t>(k)]);
      if (seen.size() <= r) seen.resize(r + 1, 0);
      if (seen[r]) {
        c.at("node").fail("rail-aligned fabric needs distinct rails per node, but rail " +
                          std::to_string(r) + " has two NICs (see nic_rails)");
      }
      seen[r] = 1;
    }
  }
  return s;
}

}  // namespace scalescope
