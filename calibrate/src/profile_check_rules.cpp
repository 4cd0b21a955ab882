// The rule table of `calibrate check` (profile_check.hpp): figure, expectation, threshold with the
// healthy and faulty ratios it sits between, likely causes and the commands that confirm them; and
// the report's text and JSON.
#include <algorithm>
#include <cassert>
#include <cstdio>

#include "scalescope/calibrate/profile_check.hpp"

namespace scalescope::calib {

namespace {

const char* kTopo =
    "nvidia-smi topo -m: the path between each pair (NV# = # NVLinks, PIX/PXB one/several PCIe "
    "switches, "
    "PHB/NODE through the CPU's root complexes, SYS across sockets)";
const char* kNvlinkStatus =
    "nvidia-smi nvlink -s: every link of each GPU at its rate; '<inactive>' marks a link that is "
    "down";
const char* kNvlinkErrors =
    "nvidia-smi nvlink -e: replay / recovery / CRC error counters of each link";
const char* kFabric =
    "nvidia-smi -q | grep -i -A3 fabric: 'State: Completed' on NVSwitch systems (else systemctl "
    "status "
    "nvidia-fabricmanager)";
const char* kP2pMatrix =
    "nvidia-smi topo -p2p rw: 'OK' for each pair that can read/write peer memory";
const char* kNcclInfo =
    "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH ./all_reduce_perf -b 1G -e 1G -g <gpus>: the "
    "'Channel ... via P2P/IPC' (or P2P/CUMEM), 'via SHM', 'via NET/IB/<n>/GDRDMA' lines name the "
    "transport of each hop";
const char* kNcclEnv =
    "env | grep ^NCCL_: NCCL_P2P_DISABLE, NCCL_P2P_LEVEL, NCCL_SHM_DISABLE, NCCL_NET_GDR_LEVEL, "
    "NCCL_IB_DISABLE, NCCL_ALGO, NCCL_PROTO force a path or an algorithm";
const char* kPcieLink =
    "nvidia-smi --query-gpu=pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
    "pcie.link.width.max --format=csv while the GPU is busy (an idle link drops its generation to "
    "save power); lspci -vv -s <bus id> | grep -E 'LnkCap|LnkSta'";
const char* kClocks =
    "nvidia-smi -q -d CLOCK,PERFORMANCE while the GPU is busy: SM and memory clocks against their "
    "maximum, and the active 'Clocks Event Reasons' (SW power cap, HW slowdown, thermal)";
const char* kPower =
    "nvidia-smi -q -d POWER,TEMPERATURE: power limit against the default limit, temperature "
    "against "
    "the slowdown temperature";
const char* kNuma =
    "numactl -H (NUMA nodes and their CPUs) and cat /sys/bus/pci/devices/<bus id>/numa_node (the "
    "GPU's "
    "node); nvidia-smi topo -m's 'CPU Affinity' / 'NUMA Affinity' columns";
const char* kGdr =
    "lsmod | grep -E 'nvidia_peermem|nv_peer_mem' (the GPUDirect RDMA module), and "
    "NCCL_DEBUG=INFO: "
    "'via NET/IB/<n>/GDRDMA' on each inter-node hop (without /GDRDMA traffic is staged through "
    "host memory)";

std::vector<CheckRule> make_rules() {
  return {
      {"topology_match",
       "nvidia-smi topo -m cell of each GPU pair (the profile's topology matrix)",
       "the cluster's path between the pair: NV<k> with its NVLink count, or PIX / PXB / PHB / "
       "NODE / SYS",
       1.0,
       "any difference: the cluster file describes another machine, or links are down",
       {"NVLink links down or not trained (fewer NV# than the cluster's count)",
        "the GPUs sit on other PCIe switches or sockets than the cluster file says (another server "
        "model or slot "
        "layout): import this machine with `scalescope import nvidia-smi-topo`",
        "the check used the wrong cluster (give --cluster)"},
       {kTopo, kNvlinkStatus}},
      {"nvlink_links",
       "active NVLink links per GPU (nvidia-smi nvlink -s in the profile)",
       "the NVLink links the cluster gives the GPU",
       1.0,
       "any link down",
       {"an NVLink link is down (cable, baseboard or NVSwitch fault)",
        "Fabric Manager not running (NVSwitch systems)"},
       {kNvlinkStatus, kNvlinkErrors, kFabric}},
      {"peer_access",
       "GPU pairs with peer access (cudaDeviceCanAccessPeer)",
       "every pair the cluster joins by NVLink or under one PCIe switch tree (PIX, PXB)",
       1.0,
       "any pair without it",
       {"a VM or container without P2P (IOMMU on, or PCIe ACS sending P2P up to the root complex)",
        "Fabric Manager not running (NVSwitch systems)", "driver or BIOS setting"},
       {kP2pMatrix,
        "cat /proc/cmdline: iommu=pt or intel_iommu=off for P2P; lspci -vvv | grep ACSCtl: "
        "SrcValid+ on "
        "a switch port forces P2P through the root complex",
        kFabric}},
      {"p2p_nvlink",
       "P2P copy bandwidth (cudaMemcpyPeerAsync, largest size) of GPU pairs joined by NVLink",
       "the pair's NVLink route bottleneck in the cluster graph (bidirectional: twice it)",
       0.6,
       "healthy 0.83 (h200x4, h200x2: 396 of 478 GB/s one way, 781 of 956 both ways); copies over "
       "PCIe instead: "
       "about 0.1",
       {"the copy went over PCIe: NVLink down, or peer access over NVLink not enabled",
        "NVLink links down or degraded (fewer active links)",
        "Fabric Manager not running (NVSwitch systems)",
        "the GPUs are not the ones the cluster pairs (CUDA_VISIBLE_DEVICES order differs from "
        "nvidia-smi's)"},
       {kNvlinkStatus, kTopo, kP2pMatrix, kFabric}},
      {"p2p_pcie",
       "P2P copy bandwidth (cudaMemcpyPeerAsync, largest size) of GPU pairs joined by PCIe",
       "the pair's PCIe route bottleneck in the cluster graph (switch, root complex or UPI; "
       "bidirectional: twice it)",
       0.6,
       "healthy copy engines reach 0.7-0.9 of a PCIe x16 link (pinned host copies here: 0.69-0.88 "
       "of 63 GB/s); a link "
       "at half width or one generation down: about 0.4",
       {"a PCIe link trained to a lower width or generation",
        "P2P disabled, so the copy is staged through host memory "
        "(IOMMU, ACS)",
        "P2P through the CPU's root complex, which forwards peer traffic slowly on many CPUs"},
       {kPcieLink, kP2pMatrix, kTopo}},
      {"p2p_uniform",
       "P2P copy bandwidth of each pair against the median of the pairs on the same kind of path",
       "the median of those pairs",
       0.85,
       "healthy: the 12 directed pairs of h200x4 within 0.2% of each other",
       {"one NVLink or PCIe link of one GPU degraded (down-trained, or links inactive)",
        "one GPU throttled (power, thermal) or busy with another process"},
       {kNvlinkStatus, kNvlinkErrors, kPcieLink,
        "nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv: "
        "other processes on the GPUs"}},
      {"coll_busbw",
       "NCCL bus bandwidth per collective and group size at the largest measured size",
       "the collective model's busbw with the datasheet parameters on the cluster's routes (NCCL's "
       "ring / tree over "
       "the real topology)",
       0.6,
       "healthy 0.72-0.96 (h200x4, h200x2: every op and group size at 1 GiB); NCCL over PCIe "
       "instead of NVLink: about 0.1",
       {"NCCL chose a slower transport: P2P off (NCCL_P2P_DISABLE, NCCL_P2P_LEVEL), so hops go "
        "through host memory "
        "(SHM) or over PCIe",
        "NVLink down: the ring runs over PCIe",
        "between nodes: GPUDirect RDMA off (nvidia-peermem not loaded, NCCL_NET_GDR_LEVEL), "
        "traffic staged through host "
        "memory",
        "a NIC or GPU on another NUMA node than the cluster file says (traffic crosses UPI)",
        "NCCL_ALGO / NCCL_PROTO / channel limits forced"},
       {kNcclInfo, kNcclEnv, kGdr, kTopo}},
      {"sendrecv_pair_uniform",
       "NCCL sendrecv bus bandwidth of each GPU pair (sendrecv_pair rows) against the median "
       "of the pairs on the same kind of path",
       "the median of those pairs",
       0.85,
       "healthy: the 12 pairs of h200x4 within 0.4% of each other",
       {"one pair's link degraded",
        "NCCL took another transport for that pair (NCCL_DEBUG=INFO shows it)"},
       {kNcclInfo, kNvlinkStatus}},
      {"hbm",
       "HBM bandwidth (device-to-device copy, read + write bytes)",
       "the cluster's hbm_bandwidth_GBps",
       0.7,
       "healthy 0.89-0.90 (H100, H200 here); HBM at half: 0.45",
       {"memory clock below its maximum (throttled, or application clocks set low)",
        "a GPU of another memory configuration than the cluster's (e.g. H100 PCIe 2.0 TB/s against "
        "SXM 3.35 TB/s)",
        "ECC row remapping pending or a degraded HBM stack"},
       {kClocks, "nvidia-smi -q -d ROW_REMAPPER,ECC: pending remaps or uncorrectable errors"}},
      {"gemm_peak",
       "best GEMM throughput per dtype over the measured shapes",
       "the cluster's peak_dense_TFLOPS of the dtype",
       0.55,
       "healthy 0.70-0.81 (H100, H200 bf16, fp8, tf32, fp32)",
       {"SM clock throttled (power cap, thermal, application clocks)",
        "another process sharing the GPU",
        "a GPU of another model or power class than the cluster's"},
       {kClocks, kPower}},
      {"host_copy",
       "pinned host-to-device and device-to-host copy bandwidth",
       "the bottleneck of the GPU's PCIe path "
       "to the CPU of the buffer's NUMA node",
       0.6,
       "healthy 0.69-0.88 (H100, H200 here, of 63 GB/s PCIe Gen5 x16); Gen4 or x8: about 0.4",
       {"the GPU's PCIe link trained to a lower width or generation",
        "IOMMU translation on the path", "host memory on the far NUMA node (crossing UPI)"},
       {kPcieLink, kNuma}},
      {"host_copy_pageable",
       "pageable (malloc'd) host-device copy bandwidth",
       "the pinned copy of the same GPU, NUMA node and direction",
       0.15,
       "the driver stages pageable copies through pinned buffers with a CPU copy: commonly 0.3-0.7 "
       "of pinned; far "
       "below means the CPU side is slow",
       {"host memory bandwidth or CPU frequency low (power-saving governor, memory on the far NUMA "
        "node)",
        "transparent huge pages off or memory fragmented"},
       {kNuma, "cpupower frequency-info: the governor and current frequency"}},
      {"host_copy_numa",
       "pinned host-to-device copies from the NUMA node the cluster places the GPU on",
       "the fastest NUMA node measured for that GPU",
       0.9,
       "the GPU's own node should be the fastest; another node faster by more than 10% means the "
       "placement is wrong",
       {"the cluster file (or its import) places the GPU on another NUMA node than the machine "
        "does",
        "BIOS NUMA settings (sub-NUMA clustering) or a cgroup binding memory elsewhere"},
       {kNuma, kTopo}},
      {"clock_under_load",
       "SM and memory clocks while the GPU is busy (nvidia-smi, sampled during the memory section)",
       "the GPU's maximum clocks (clocks.max.sm, clocks.max.memory)",
       0.8,
       "a busy GPU runs near its maximum (H100/H200 SXM: 1,980 MHz); a power- or thermally-capped "
       "one well below",
       {"power cap below the default (nvidia-smi -pl)", "thermal slowdown (cooling)",
        "application clocks set low", "HW slowdown (power brake, PSU)"},
       {kClocks, kPower}},
      {"clock_uniform",
       "maximum SM clock of each GPU (CUDA's clock rate)",
       "the highest among the profile's GPUs",
       0.95,
       "GPUs of one machine report the same maximum",
       {"application clocks or a clock lock set on one GPU", "mixed SKUs"},
       {kClocks}},
      {"pcie_link",
       "PCIe link generation and width of each GPU while it copies (nvidia-smi)",
       "the maximum the GPU and slot support (pcie.link.gen.max, pcie.link.width.max)",
       1.0,
       "a busy link runs at its maximum; anything less is a down-trained link",
       {"the link trained to a lower generation or width (riser, slot, BIOS setting, signal "
        "integrity)"},
       {kPcieLink}},
      {"nccl_env",
       "NCCL environment variables set when the profile was measured",
       "none that forces a path",
       1.0,
       "any: the measured collectives then describe the forced path, not the machine",
       {"the variable forces NCCL's transport, algorithm or protocol"},
       {kNcclEnv, kNcclInfo}},
  };
}

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pad(std::string s, std::size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

}  // namespace

const std::vector<CheckRule>& check_rules() {
  static const std::vector<CheckRule> rules = make_rules();
  return rules;
}

const CheckRule& check_rule(const std::string& id) {
  for (const auto& r : check_rules())
    if (r.id == id) return r;
  assert(false && "check_rule: unknown rule id");
  return check_rules().front();
}

Json to_json(const CheckReport& r) {
  Json rows = Json::array(), findings = Json::array(), rules = Json::array();
  for (const auto& x : r.rows)
    rows.push_back({{"rule", x.rule},
                    {"figure", x.figure},
                    {"measured", x.measured},
                    {"expected", x.expected},
                    {"unit", x.unit},
                    {"ratio", x.ratio()},
                    {"threshold", check_rule(x.rule).threshold},
                    {"finding", x.finding},
                    {"expected_from", x.expected_from}});
  for (const auto& f : r.findings)
    findings.push_back({{"rule", f.rule},
                        {"figure", f.figure},
                        {"message", f.message},
                        {"causes", f.causes},
                        {"confirm", f.confirm}});
  std::vector<std::string> used;
  for (const auto& x : r.rows)
    if (std::find(used.begin(), used.end(), x.rule) == used.end()) used.push_back(x.rule);
  for (const auto& rule : check_rules()) {
    if (std::find(used.begin(), used.end(), rule.id) == used.end()) continue;
    rules.push_back({{"id", rule.id},
                     {"figure", rule.figure},
                     {"expected", rule.expected},
                     {"threshold", rule.threshold},
                     {"threshold_why", rule.threshold_why}});
  }
  return Json{{"schema", "scalescope.calibration-check/1"},
              {"profile", r.profile},
              {"cluster", r.cluster},
              {"cluster_choice", r.cluster_choice},
              {"clean", r.clean()},
              {"figures_checked", r.rows.size()},
              {"findings", findings},
              {"rows", rows},
              {"notes", r.notes},
              {"rules", rules}};
}

std::string to_text(const CheckReport& r) {
  std::string out = "# scalescope calibrate check: " + r.profile + " against cluster " + r.cluster +
                    " (" + r.cluster_choice +
                    ")\n# ratio = measured / expected; a ratio below the rule's threshold is a "
                    "finding\n";
  std::size_t w = 6;
  for (const auto& x : r.rows) w = std::max(w, x.figure.size());
  out += pad("rule", 22) + pad("figure", w + 2) + pad("measured", 11) + pad("expected", 11) +
         pad("unit", 9) + pad("ratio", 7) + pad("min", 6) + "status  expected from\n";
  for (const auto& x : r.rows) {
    const int d = x.unit == "GB/s" || x.unit == "TFLOP/s" ? 1 : 0;
    out += pad(x.rule, 22) + pad(x.figure, w + 2) + pad(fmt(x.measured, d), 11) +
           pad(fmt(x.expected, d), 11) + pad(x.unit, 9) + pad(fmt(x.ratio(), 2), 7) +
           pad(fmt(check_rule(x.rule).threshold, 2), 6) + (x.finding ? "FINDING " : "ok      ") +
           x.expected_from + "\n";
  }
  for (const auto& n : r.notes) out += "# note: " + n + "\n";
  if (r.findings.empty()) {
    out += "# clean: " + std::to_string(r.rows.size()) + " figures checked, no finding\n";
    return out;
  }
  out += "# " + std::to_string(r.findings.size()) + " finding(s) in " +
         std::to_string(r.rows.size()) + " figures checked\n";
  for (const auto& f : r.findings) {
    out += "\nFINDING [" + f.rule + "] " + f.figure + ": " + f.message + "\n  likely causes:\n";
    for (const auto& c : f.causes) out += "    - " + c + "\n";
    out += "  confirm with:\n";
    for (const auto& c : f.confirm) out += "    $ " + c + "\n";
  }
  return out;
}

}  // namespace scalescope::calib
