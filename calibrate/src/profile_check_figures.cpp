// `calibrate check` (profile_check.hpp): the measured figures against the cluster — P2P copies,
// collectives, HBM, GEMM peak, host-device copies per NUMA node.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "profile_check_impl.hpp"
#include "scalescope/calibrate/fit.hpp"

namespace scalescope::calib::checkimpl {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// |log(measured / predicted)|: how far a measurement is from a prediction, either way.
double distance(double measured, double predicted) {
  return measured > 0 && predicted > 0 ? std::fabs(std::log(measured / predicted)) : 1e300;
}

std::string size_text(double bytes) {
  const char* units[] = {"GiB", "MiB", "KiB"};
  const double scale[] = {1024.0 * 1024 * 1024, 1024.0 * 1024, 1024.0};
  for (int i = 0; i < 3; ++i)
    if (bytes >= scale[i])
      return fmt(bytes / scale[i], bytes == std::floor(bytes / scale[i]) * scale[i] ? 0 : 1) + " " +
             units[i];
  return fmt(bytes, 0) + " B";
}

/// One summary row per group of figures on alike paths: the slowest against the group's median.
void uniformity(Ctx& ctx, const std::string& rule, const std::string& what,
                const std::map<std::string, std::vector<std::pair<std::string, double>>>& groups) {
  for (const auto& [path, items] : groups) {
    if (items.size() < 2) continue;
    std::vector<double> v;
    for (const auto& it : items) v.push_back(it.second);
    const double med = median_of(v);
    std::string slow;
    double lowest = med;
    for (const auto& [name, x] : items) {
      lowest = std::min(lowest, x);
      if (x < check_rule(rule).threshold * med)
        slow += (slow.empty() ? "" : ", ") + name + " " + fmt(x, 1) + " GB/s";
    }
    ctx.add(rule, "slowest " + what + " on " + path + " (" + std::to_string(items.size()) + ")",
            lowest, med, "GB/s", "median of the " + std::to_string(items.size()) + " on " + path,
            slow.empty() ? ""
                         : slow + " below " + fmt(check_rule(rule).threshold, 2) +
                               " x the median " + fmt(med, 1) + " GB/s");
  }
}

std::string path_name(PathType t) {
  return t == PathType::nvlink ? "NVLink" : std::string(to_string(t));
}

}  // namespace

void check_p2p(Ctx& ctx) {
  const Json p2p = ctx.profile.other.value("p2p", Json::array());
  const int G = std::min(static_cast<int>(ctx.profile.other.value("gpus", Json::array()).size()),
                         ctx.base.cluster.gpus_per_node());
  if (!p2p.is_array() || p2p.empty()) {
    if (G >= 2) ctx.report.notes.push_back("no P2P rows in the profile");
    return;
  }
  // Copies between peers ignore NCCL's P2P level: price them on the direct routes.
  const Priced* direct = ctx.base.cluster.p2p_level() == PathType::sys
                             ? &ctx.base
                             : ctx.variant("p2p_sys", ClusterVariant{{}, false, "SYS"});
  if (direct == nullptr) return;
  const Cluster& c = direct->cluster;
  bool has_nvlink = false;
  for (int a = 0; a < G; ++a)
    for (int b = 0; b < G; ++b)
      has_nvlink = has_nvlink || (a != b && c.gpu_path_type(a, b) == PathType::nvlink);
  const Priced* pcie =
      has_nvlink ? ctx.variant("pcie_only", ClusterVariant{{}, true, {}}) : nullptr;
  std::map<std::string, std::vector<std::pair<std::string, double>>> groups;
  for (const auto& row : p2p) {
    if (!row.is_object()) continue;
    const int a = row.value("src", -1), b = row.value("dst", -1);
    const auto bw = number(row, "bandwidth_GBps");
    if (a < 0 || b < 0 || a >= G || b >= G || a == b || !bw) continue;
    const bool bidi = row.value("mode", std::string("uni")) == "bidi";
    const auto r = c.route(a, b);
    double expected = to_GBps(c.path_bandwidth(r));
    if (bidi) expected = 2.0 * std::min(expected, to_GBps(c.path_bandwidth(c.route(b, a))));
    const PathType t = c.gpu_path_type(a, b);
    const std::string figure =
        "p2p " + std::to_string(a) + "->" + std::to_string(b) + (bidi ? " bidi" : " uni");
    std::string message;
    std::vector<std::string> first = ctx.env_causes;
    if (row.contains("peer_access") && row["peer_access"] == false)
      first.insert(first.begin(),
                   "the profile recorded no peer access for this pair: the copy was staged through "
                   "host memory");
    if (*bw < check_rule(t == PathType::nvlink ? "p2p_nvlink" : "p2p_pcie").threshold * expected) {
      message = fmt(*bw, 1) + " GB/s is " + fmt(*bw / expected, 2) + " of the " + fmt(expected, 1) +
                " GB/s of the " + path_name(t) + " route";
      if (pcie && t == PathType::nvlink) {
        double p = to_GBps(pcie->cluster.path_bandwidth(pcie->cluster.route(a, b)));
        if (bidi)
          p = 2.0 * std::min(p, to_GBps(pcie->cluster.path_bandwidth(pcie->cluster.route(b, a))));
        if (distance(*bw, p) < distance(*bw, expected)) {
          message += ", and nearer the pair's PCIe route (" + fmt(p, 1) + " GB/s, " +
                     std::string(to_string(pcie->cluster.gpu_path_type(a, b))) +
                     "): the copy went over PCIe, not NVLink";
        }
      }
    }
    ctx.add(t == PathType::nvlink ? "p2p_nvlink" : "p2p_pcie", figure, *bw, expected, "GB/s",
            describe_bottleneck(c, r) + (bidi ? " x 2 directions" : ""), message, first);
    groups[path_name(t) + (bidi ? " both ways" : " one way")].emplace_back(figure, *bw);
  }
  uniformity(ctx, "p2p_uniform", "P2P pair", groups);
}

void check_collectives(Ctx& ctx) {
  const Cluster& c = ctx.base.cluster;
  std::map<std::string, std::vector<std::pair<std::string, double>>> pairs;
  for (const auto& e : ctx.profile.collectives) {
    if (e.rows.empty()) continue;
    const auto best =
        std::max_element(e.rows.begin(), e.rows.end(),
                         [](const CollRow& x, const CollRow& y) { return x.bytes < y.bytes; });
    if (e.op == "sendrecv_pair") {  // one pair of the group: compared with its peers on alike paths
      if (!e.src || !e.dst || *e.src >= c.gpus_per_node() || *e.dst >= c.gpus_per_node() ||
          *e.src == *e.dst)
        continue;
      pairs[path_name(c.gpu_path_type(*e.src, *e.dst))].emplace_back(
          "sendrecv " + std::to_string(*e.src) + "->" + std::to_string(*e.dst), best->busbw_GBps);
      continue;
    }
    const auto op = e.coll_op();
    if (!op) continue;
    auto ranks = cluster_ranks(e, c);
    if (!ranks) {
      ctx.report.notes.push_back(e.op + " n=" + std::to_string(e.nranks) +
                                 " not checked: " + ranks.error().message);
      continue;
    }
    const double predicted =
        to_GBps(ctx.base.model->analytical(*op, *ranks, Bytes(best->bytes)).busbw);
    const std::string figure =
        e.op + " n=" + std::to_string(e.nranks) +
        (e.nodes && *e.nodes > 1 ? " (" + std::to_string(*e.nodes) + " nodes)" : "") + " at " +
        size_text(best->bytes);
    std::string message;
    std::vector<std::string> first = ctx.env_causes;
    const double m = best->busbw_GBps;
    if (m < check_rule("coll_busbw").threshold * predicted) {
      message = fmt(m, 1) + " GB/s busbw is " + fmt(m / predicted, 2) + " of the " +
                fmt(predicted, 1) + " GB/s the model predicts on " + c.name();
      // Which variant of the machine does the measurement match best?
      const bool spans =
          ctx.base.cluster.node_of(ranks->front()) != ctx.base.cluster.node_of(ranks->back());
      std::vector<std::pair<std::string, ClusterVariant>> tries;
      if (!spans && c.gpus_per_node() > 1 && c.gpu_path_type(0, 1) == PathType::nvlink)
        tries.push_back({"pcie_only", ClusterVariant{{}, true, {}}});
      if (spans && c.gpudirect_rdma())
        tries.push_back({"gdr_off", ClusterVariant{false, false, {}}});
      double best_d = distance(m, predicted);
      for (const auto& [key, v] : tries) {
        const Priced* p = ctx.variant(key, v);
        if (!p) continue;
        const double alt = to_GBps(p->model->analytical(*op, *ranks, Bytes(best->bytes)).busbw);
        if (distance(m, alt) >= best_d) continue;
        best_d = distance(m, alt);
        message += "; nearer the " + v.describe() + " prediction (" + fmt(alt, 1) + " GB/s)";
        first.insert(first.begin() + static_cast<std::ptrdiff_t>(ctx.env_causes.size()),
                     key == "pcie_only"
                         ? "NCCL ran over PCIe (ring over PCIe rate): NVLink down or "
                           "P2P over NVLink not used (NCCL_P2P_DISABLE / LEVEL)"
                         : "GPUDirect RDMA off: inter-node traffic staged through host "
                           "memory (nvidia-peermem not loaded, NCCL_NET_GDR_LEVEL)");
      }
    }
    ctx.add("coll_busbw", figure, m, predicted, "GB/s",
            "collective model, datasheet parameters, " + c.name(), message, first);
  }
  uniformity(ctx, "sendrecv_pair_uniform", "sendrecv pair", pairs);
}

void check_memory(Ctx& ctx) {
  const auto hbm = ctx.profile.memory_number("d2d_copy_GBps");
  if (!hbm) {
    ctx.report.notes.push_back("no HBM measurement (memory.d2d_copy_GBps) in the profile");
    return;
  }
  const int dev = static_cast<int>(ctx.profile.memory_number("device").value_or(0));
  const double sheet = to_GBps(ctx.base.cluster.gpu_spec().hbm_bandwidth);
  ctx.add("hbm", "HBM copy gpu" + std::to_string(dev), *hbm, sheet, "GB/s",
          "hbm_bandwidth_GBps of " + ctx.base.cluster.gpu_spec().model);
}

void check_gemm(Ctx& ctx) {
  std::map<std::string, double> best;
  for (const auto& g : ctx.profile.gemm)
    if (g.tflops) best[g.dtype] = std::max(best[g.dtype], *g.tflops);
  if (best.empty()) {
    ctx.report.notes.push_back("no GEMM rows in the profile");
    return;
  }
  const PeakFlops& peak = ctx.base.cluster.gpu_spec().peak;
  for (const auto& [dtype, tf] : best) {
    const std::string key = dtype.rfind("fp8", 0) == 0 ? "fp8" : dtype;
    const auto p = peak.get(key);
    if (!p) {
      ctx.report.notes.push_back("GEMM " + dtype + " not checked: the cluster gives no " + key +
                                 " peak");
      continue;
    }
    ctx.add("gemm_peak", "GEMM " + dtype + " best", tf, p->value / 1e12, "TFLOP/s",
            "peak_dense_TFLOPS." + key + " of " + ctx.base.cluster.gpu_spec().model);
  }
}

void check_host_copies(Ctx& ctx) {
  const Cluster& c = ctx.base.cluster;
  const Json mem = ctx.profile.other.value("memory", Json::object());
  if (!mem.is_object()) return;
  auto host_path = [&](int gpu, int numa, std::string& from) -> double {
    const auto r = c.gpu_to_cpu_route(gpu, numa);
    if (r.empty()) return 0;
    from = "gpu" + std::to_string(gpu) + " to NUMA node " + std::to_string(numa) + ": " +
           describe_bottleneck(c, r);
    return to_GBps(c.path_bandwidth(r));
  };
  const Json rows = mem.value("host_copies", Json::array());
  if (!rows.is_array() ||
      rows.empty()) {  // profiles before per-NUMA copies: pinned copies of `device`
    const int dev = mem.value("device", 0);
    if (dev >= c.gpus_per_node()) return;
    std::string from;
    const double want = host_path(dev, c.gpu_numa_node(dev), from);
    for (const char* k : {"h2d_GBps", "d2h_GBps"})
      if (const auto v = number(mem, k); v && want > 0)
        ctx.add(
            "host_copy",
            std::string("pinned ") + (k[0] == 'h' ? "H2D" : "D2H") + " gpu" + std::to_string(dev),
            *v, want, "GB/s", from + " (NUMA node of the buffer not recorded)");
    ctx.report.notes.push_back(
        "host copies per NUMA node and pageable copies not in the profile (measured by "
        "scalescope-calibrate's memory section from this version on)");
    return;
  }
  // Pinned copies per (GPU, NUMA node, direction); pageable ones against the pinned copy of the
  // same three.
  std::map<std::tuple<int, int, std::string>, double> pinned;
  for (const auto& r : rows)
    if (r.value("memory", std::string()) == "pinned")
      if (const auto v = number(r, "GBps"))
        pinned[{r.value("gpu", -1), r.value("numa_node", -1),
                r.value("direction", std::string())}] = *v;
  std::map<int, std::pair<double, int>> best_h2d;  // gpu -> (fastest pinned H2D, its NUMA node)
  for (const auto& [key, v] : pinned) {
    const auto& [gpu, numa, dir] = key;
    if (gpu < 0 || gpu >= c.gpus_per_node()) continue;
    std::string from;
    const double want = host_path(gpu, numa, from);
    const std::string figure = "pinned " + std::string(dir == "h2d" ? "H2D" : "D2H") + " gpu" +
                               std::to_string(gpu) + " numa" + std::to_string(numa);
    if (want > 0)
      ctx.add("host_copy", figure, v, want, "GB/s", from);
    else
      ctx.report.notes.push_back(figure + ": the cluster has no CPU of NUMA node " +
                                 std::to_string(numa));
    if (dir == "h2d" && v > best_h2d[gpu].first) best_h2d[gpu] = {v, numa};
  }
  for (const auto& r : rows) {
    if (r.value("memory", std::string()) != "pageable") continue;
    const auto v = number(r, "GBps");
    const auto it = pinned.find(
        {r.value("gpu", -1), r.value("numa_node", -1), r.value("direction", std::string())});
    if (!v || it == pinned.end()) continue;
    const auto& [gpu, numa, dir] = it->first;
    ctx.add("host_copy_pageable",
            "pageable " + std::string(dir == "h2d" ? "H2D" : "D2H") + " gpu" + std::to_string(gpu) +
                " numa" + std::to_string(numa),
            *v, it->second, "GB/s", "the pinned copy of the same GPU, NUMA node and direction");
  }
  for (const auto& [gpu, best] : best_h2d) {
    const int own = c.gpu_numa_node(gpu);
    const auto it = pinned.find({gpu, own, "h2d"});
    if (it == pinned.end()) {
      ctx.report.notes.push_back(
          "gpu" + std::to_string(gpu) + ": the cluster places it on NUMA node " +
          std::to_string(own) + ", which the machine did not measure (numactl -H shows its nodes)");
      continue;
    }
    ctx.add("host_copy_numa",
            "pinned H2D gpu" + std::to_string(gpu) + " from its NUMA node " + std::to_string(own),
            it->second, best.first, "GB/s", "fastest node: " + std::to_string(best.second),
            it->second < check_rule("host_copy_numa").threshold * best.first
                ? "copies from NUMA node " + std::to_string(best.second) + " (" +
                      fmt(best.first, 1) + " GB/s) beat the node the cluster places gpu" +
                      std::to_string(gpu) + " on (" + std::to_string(own) + ", " +
                      fmt(it->second, 1) + " GB/s)"
                : "");
  }
}

}  // namespace scalescope::calib::checkimpl
