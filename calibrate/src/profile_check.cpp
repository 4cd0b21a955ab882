// `calibrate check` (profile_check.hpp): the run (cluster, variants, rows and findings), the choice
// of a built-in cluster for a profile, and the checks of the environment, the nvidia-smi topology
// and the clocks.
#include "scalescope/calibrate/profile_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "profile_check_impl.hpp"
#include "scalescope/calibrate/fit.hpp"
#include "scalescope/calibrate/hardware.hpp"
#include "scalescope/calibrate/smi_text.hpp"
#include "scalescope/sim/data_files.hpp"

namespace scalescope::calib {

namespace checkimpl {

std::string fmt(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::optional<double> number(const Json& obj, const char* key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {  // nvidia-smi CSV fields ("1980"); "[N/A]" and the like are absent
    const std::string s = it->get<std::string>();
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() && *end == '\0' && std::isfinite(v)) return v;
  }
  return std::nullopt;
}

std::string describe_bottleneck(const Cluster& c, const std::vector<int>& route) {
  int best = -1;
  for (int l : route)
    if (best < 0 || c.link(l).bandwidth.value < c.link(best).bandwidth.value) best = l;
  if (best < 0) return "no route";
  const Link& l = c.link(best);
  return c.link_name(best) + " (" + std::string(to_string(l.kind)) +
         (l.lanes > 1 ? " x" + std::to_string(l.lanes) : "") + ", " + fmt(to_GBps(l.bandwidth), 1) +
         " GB/s)";
}

const Priced* Ctx::variant(const std::string& key, const ClusterVariant& v) {
  for (const auto& [k, p] : variants_)
    if (k == key) return p.get();
  ClusterOptions o;
  o.nodes = nodes;
  auto c =
      cluster_from_json(apply_variant(input.doc, v), input.source + " (" + v.describe() + ")", o);
  std::unique_ptr<Priced> p;
  if (c) {
    p = std::make_unique<Priced>(Priced{std::move(c).value(), nullptr});
    p->model = std::make_unique<CollectiveModel>(p->cluster, datasheet_collective_params());
  }
  variants_.emplace_back(key, std::move(p));
  return variants_.back().second.get();
}

void Ctx::add(const std::string& rule, const std::string& figure, double measured, double expected,
              const std::string& unit, const std::string& expected_from, const std::string& message,
              std::vector<std::string> first_causes) {
  CheckRow row{rule, figure, measured, expected, unit, expected_from, false};
  const CheckRule& r = check_rule(rule);
  row.finding = expected > 0 && row.ratio() < r.threshold;
  report.rows.push_back(row);
  if (!row.finding) return;
  Finding f;
  f.rule = rule;
  f.figure = figure;
  f.message = !message.empty() ? message
                               : fmt(measured, unit == "GB/s" || unit == "TFLOP/s" ? 1 : 0) + " " +
                                     unit + " is " + fmt(row.ratio(), 2) + " of the " +
                                     fmt(expected, unit == "GB/s" || unit == "TFLOP/s" ? 1 : 0) +
                                     " " + unit + " expected (" + expected_from +
                                     "); the rule's minimum is " + fmt(r.threshold, 2);
  f.causes = std::move(first_causes);
  for (const auto& c : r.causes) f.causes.push_back(c);
  f.confirm = r.confirm;
  report.findings.push_back(std::move(f));
}

// ---- environment
// -------------------------------------------------------------------------------------------

void check_environment(Ctx& ctx) {
  const Json env = ctx.profile.other.value("environment", Json::object());
  if (!env.is_object()) return;
  // Variables that force NCCL's transport, algorithm or protocol (NCCL's environment-variable
  // documentation).
  static const char* kForcing[] = {"NCCL_P2P_DISABLE",
                                   "NCCL_P2P_LEVEL",
                                   "NCCL_SHM_DISABLE",
                                   "NCCL_NET_GDR_LEVEL",
                                   "NCCL_NET_GDR_READ",
                                   "NCCL_IB_DISABLE",
                                   "NCCL_NET",
                                   "NCCL_ALGO",
                                   "NCCL_PROTO",
                                   "NCCL_MAX_NCHANNELS",
                                   "NCCL_MIN_NCHANNELS",
                                   "NCCL_CROSS_NIC",
                                   "NCCL_P2P_NVL_CHUNKSIZE",
                                   "NCCL_NVLS_ENABLE"};
  int forcing = 0;
  for (const char* k : kForcing) {
    if (!env.contains(k) || !env[k].is_string()) continue;
    const std::string v = env[k].get<std::string>();
    // NVLS (NVLink SHARP) is switched off by scalescope-calibrate itself, and the collective model
    // has no NVLS.
    if (std::string(k) == "NCCL_NVLS_ENABLE" && v == "0") {
      ctx.report.notes.push_back(
          "NCCL_NVLS_ENABLE=0 when measured (scalescope-calibrate's default; the collective "
          "model has no NVLink SHARP either)");
      continue;
    }
    ++forcing;
    const std::string what = std::string(k) + "=" + v;
    ctx.env_causes.push_back("environment: " + what + " was set when the profile was measured");
    Finding f{"nccl_env",
              what,
              "forces NCCL's path or algorithm: the collectives measured describe it, not the "
              "machine's best",
              {},
              check_rule("nccl_env").confirm};
    for (const auto& c : check_rule("nccl_env").causes) f.causes.push_back(c);
    ctx.report.findings.push_back(std::move(f));
    ctx.report.rows.push_back({"nccl_env", what, 0, 1, "set", "no variable forcing a path", true});
  }
  if (forcing == 0)
    ctx.report.notes.push_back("no NCCL variable forcing a path was set when measured");
}

// ---- topology
// ----------------------------------------------------------------------------------------------

namespace {

/// nvidia-smi name of CUDA device d ("GPU<nvsmi index>").
std::string smi_name(const Json& topo, int d) {
  const Json idx = topo.value("nvsmi_index", Json());
  if (idx.is_array() && static_cast<std::size_t>(d) < idx.size() &&
      idx[static_cast<std::size_t>(d)].is_number_integer())
    return "GPU" + std::to_string(idx[static_cast<std::size_t>(d)].get<int>());
  return "GPU" + std::to_string(d);
}

/// NVLink links of local GPU g in the cluster (lanes of its NVLink links).
int nvlink_lanes(const Cluster& c, int g) {
  int lanes = 0;
  const VertexId v = c.gpu_vertex(g);
  for (int l = 0; l < c.num_links(); ++l)
    if (c.link(l).src == v && c.link(l).kind == LinkKind::nvlink) lanes += c.link(l).lanes;
  return lanes;
}

/// Fewest NVLink lanes on the route between local GPUs a and b (NV<k> of nvidia-smi).
int route_lanes(const Cluster& c, int a, int b) {
  int lanes = 1 << 30;
  for (int l : c.route(a, b)) lanes = std::min(lanes, c.link(l).lanes);
  return lanes == (1 << 30) ? 0 : lanes;
}

}  // namespace

void check_topology(Ctx& ctx) {
  const Cluster& c = ctx.base.cluster;
  const Json topo = ctx.profile.other.value("topology", Json::object());
  const int G = std::min(static_cast<int>(ctx.profile.other.value("gpus", Json::array()).size()),
                         c.gpus_per_node());
  if (!topo.is_object() || G < 2) return;
  // nvidia-smi topo -m against the cluster's paths.
  if (const auto m = topo.find("matrix"); m != topo.end() && m->is_string()) {
    if (const auto parsed = smi_text::parse_topo_matrix(m->get<std::string>())) {
      for (int a = 0; a < G; ++a)
        for (int b = a + 1; b < G; ++b) {
          const auto cell = parsed->link(smi_name(topo, a), smi_name(topo, b));
          if (!cell) continue;
          const PathType want = c.gpu_path_type(a, b);
          const std::string figure =
              "topo -m GPU" + std::to_string(a) + "-GPU" + std::to_string(b) + " " + *cell;
          if (want == PathType::nvlink) {
            const int lanes = route_lanes(c, a, b);
            const int have = cell->rfind("NV", 0) == 0 ? std::atoi(cell->c_str() + 2) : 0;
            ctx.add("topology_match", figure, have, lanes, "NVLinks",
                    "cluster: NV" + std::to_string(lanes),
                    have == 0 ? "nvidia-smi shows " + *cell + " where the cluster has NV" +
                                    std::to_string(lanes) + ": the pair talks over PCIe"
                              : "");
          } else {
            const bool same =
                *cell == to_string(want) || (*cell == "PHB" && want == PathType::node);
            ctx.add("topology_match", figure, same ? 1 : 0, 1, "match",
                    "cluster: " + std::string(to_string(want)),
                    same ? ""
                         : "nvidia-smi shows " + *cell + " where the cluster has " +
                               std::string(to_string(want)));
          }
        }
    }
  }
  // Active NVLink links per GPU (nvidia-smi nvlink -s).
  const Json nv = topo.value("nvlink", Json::object());
  if (nv.is_object() && nv.contains("raw") && nv["raw"].is_string()) {
    const auto gpus = smi_text::parse_nvlink_status(nv["raw"].get<std::string>());
    for (int d = 0; d < G; ++d) {
      const int want = nvlink_lanes(c, d);
      if (want == 0) continue;
      const std::string name = smi_name(topo, d);
      for (const auto& g : gpus)
        if ("GPU" + std::to_string(g.gpu) == name)
          ctx.add("nvlink_links", "NVLink links gpu" + std::to_string(d), g.active_links, want,
                  "links", "cluster: " + std::to_string(want) + " NVLink links");
    }
  }
  // Peer access between pairs the cluster joins by NVLink or a PCIe switch tree.
  const Json pa = topo.value("peer_access", Json());
  if (pa.is_array()) {
    int want = 0, have = 0;
    std::string missing;
    for (int a = 0; a < G; ++a)
      for (int b = 0; b < G; ++b) {
        if (a == b) continue;
        const PathType t = c.gpu_path_type(a, b);
        if (t != PathType::nvlink && t != PathType::pix && t != PathType::pxb) continue;
        ++want;
        const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
        const bool ok = ua < pa.size() && pa[ua].is_array() && ub < pa[ua].size() &&
                        pa[ua][ub].is_boolean() && pa[ua][ub].get<bool>();
        have += ok ? 1 : 0;
        if (!ok)
          missing += (missing.empty() ? "" : ", ") + std::to_string(a) + "->" + std::to_string(b);
      }
    if (want > 0)
      ctx.add("peer_access", "GPU pairs with peer access", have, want, "pairs",
              "pairs joined by NVLink or PIX/PXB",
              missing.empty() ? "" : "no peer access for " + missing);
  }
}

// ---- clocks and PCIe links
// ---------------------------------------------------------------------------------

void check_clocks(Ctx& ctx) {
  const Json gpus = ctx.profile.other.value("gpus", Json::array());
  if (!gpus.is_array() || gpus.empty()) return;
  double top = 0;
  for (const auto& g : gpus) top = std::max(top, number(g, "clock_MHz").value_or(0));
  bool under_load = false;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const Json& g = gpus[i];
    const std::string id = "gpu" + std::to_string(g.value("index", static_cast<int>(i)));
    if (gpus.size() > 1)
      if (const auto clk = number(g, "clock_MHz"))
        ctx.add("clock_uniform", "max SM clock " + id, *clk, top, "MHz",
                "highest of the profile's GPUs");
    const Json load = g.value("under_load", Json());
    if (!load.is_object()) continue;
    under_load = true;
    const std::string reasons = load.value("clocks_event_reasons", std::string());
    const std::vector<std::string> why =
        reasons.empty()
            ? std::vector<std::string>{}
            : std::vector<std::string>{"nvidia-smi reported active clock event reasons " + reasons +
                                       " (bit mask; nvidia-smi -q -d PERFORMANCE names them)"};
    if (auto sm = number(load, "sm_clock_MHz"), mx = number(load, "max_sm_clock_MHz"); sm && mx)
      ctx.add("clock_under_load", "SM clock under load " + id, *sm, *mx, "MHz",
              "nvidia-smi clocks.max.sm", "", why);
    if (auto mem = number(load, "mem_clock_MHz"), mx = number(load, "max_mem_clock_MHz"); mem && mx)
      ctx.add("clock_under_load", "memory clock under load " + id, *mem, *mx, "MHz",
              "nvidia-smi clocks.max.memory", "", why);
    if (auto gen = number(load, "pcie_gen"), mx = number(load, "pcie_gen_max"); gen && mx)
      ctx.add("pcie_link", "PCIe generation under load " + id, *gen, *mx, "gen",
              "nvidia-smi pcie.link.gen.max");
    if (auto w = number(load, "pcie_width"), mx = number(load, "pcie_width_max"); w && mx)
      ctx.add("pcie_link", "PCIe width under load " + id, *w, *mx, "lanes",
              "nvidia-smi pcie.link.width.max");
  }
  if (!under_load)
    ctx.report.notes.push_back(
        "clocks and PCIe links under load not in the profile (measured by scalescope-calibrate's "
        "memory section from this version on); GEMM peak and host copies stand in for them");
}

}  // namespace checkimpl

// ---- the run
// -------------------------------------------------------------------------------------------------

Expected<CheckReport> check_profile(const Profile& profile, const CheckCluster& input) {
  ClusterOptions one;
  one.nodes = 1;
  auto probe = cluster_from_json(input.doc, input.source, one);
  if (!probe) return probe.error();
  const int gpus = static_cast<int>(profile.other.value("gpus", Json::array()).size());
  if (gpus > probe->gpus_per_node() && profile.collectives.empty())
    return input_error(profile.file, "$.gpus",
                       std::to_string(gpus) + " GPUs measured, but a node of cluster '" +
                           probe->name() + "' has " + std::to_string(probe->gpus_per_node()) +
                           " (give the cluster the profile was measured on: --cluster)");
  const int nodes = std::max(1, nodes_needed(profile, probe->gpus_per_node()));
  ClusterOptions o;
  o.nodes = nodes;
  auto cluster = cluster_from_json(input.doc, input.source, o);
  if (!cluster) return cluster.error();
  checkimpl::Ctx ctx(profile, input, nodes, std::move(cluster).value());
  ctx.base.model =
      std::make_unique<CollectiveModel>(ctx.base.cluster, datasheet_collective_params());
  ctx.report.profile = profile.name();
  ctx.report.cluster = ctx.base.cluster.name();
  ctx.report.cluster_choice = input.choice;
  const std::string gpu = profile.gpu_name();
  if (!gpu.empty() && gpu_family(gpu) != gpu_family(ctx.base.cluster.gpu_spec().model))
    ctx.report.notes.push_back("the profile's GPU '" + gpu + "' is not the cluster's '" +
                               ctx.base.cluster.gpu_spec().model +
                               "': its datasheet figures do not apply");
  checkimpl::check_environment(ctx);
  checkimpl::check_topology(ctx);
  checkimpl::check_p2p(ctx);
  checkimpl::check_collectives(ctx);
  checkimpl::check_memory(ctx);
  checkimpl::check_gemm(ctx);
  checkimpl::check_host_copies(ctx);
  checkimpl::check_clocks(ctx);
  return std::move(ctx.report);
}

Expected<CheckCluster> load_check_cluster(const std::string& name_or_path) {
  std::string source = name_or_path;
  std::filesystem::path file = name_or_path;
  if (!looks_like_path(name_or_path)) {
    const auto f = find_data_file("topologies", name_or_path);
    if (!f) {
      auto err =
          load_cluster_by_name_or_path(name_or_path);  // the loader's message lists the names
      return err ? input_error("--cluster", "", "unknown cluster '" + name_or_path + "'")
                 : err.error();
    }
    file = f->path;
    source = f->label;
  }
  auto doc = read_json_file(file);
  if (!doc) return doc.error();
  return CheckCluster{std::move(doc).value(), source, "--cluster " + name_or_path};
}

Expected<CheckCluster> cluster_for_profile(const Profile& profile) {
  const Json gpus = profile.other.value("gpus", Json::array());
  const std::string gpu = profile.gpu_name();
  const int sms = gpus.is_array() && !gpus.empty() ? gpus[0].value("sm_count", 0) : 0;
  if (!gpus.is_array() || gpus.empty())
    return input_error(profile.file, "$.gpus",
                       "the profile lists no GPU (nothing was measured): nothing to check");
  const int count = static_cast<int>(gpus.size());
  struct Candidate {
    bool single;
    int per_node;
    std::string name;
    Json doc;
    std::string label;
  };
  std::vector<Candidate> found;
  for (const auto& name : available_cluster_names()) {
    const auto f = find_data_file("topologies", name);
    if (!f) continue;
    auto doc = read_json_file(f->path);
    if (!doc || !doc->is_object()) continue;
    const Json node = doc->value("node", Json::object());
    const Json g = node.is_object() ? node.value("gpu", Json::object()) : Json::object();
    if (!g.is_object() || !g.contains("model") || !g["model"].is_string()) continue;
    const int per = node.value("gpus", 0);
    if (gpu_family(g["model"].get<std::string>()) != gpu_family(gpu) ||
        g.value("sm_count", 0) != sms || per < count)
      continue;
    found.push_back({doc->value("nodes", 1) == 1, per, name, std::move(doc).value(), f->label});
  }
  if (found.empty())
    return input_error(profile.file, "$.gpus[0]",
                       "no built-in cluster has '" + gpu + "' (" + std::to_string(sms) +
                           " SMs) with at least " + std::to_string(count) +
                           " GPUs per node; give the cluster the profile was measured on with "
                           "--cluster (a topologies/ name or a file, e.g. from `scalescope "
                           "import nvidia-smi-topo`)");
  std::sort(found.begin(), found.end(), [](const Candidate& a, const Candidate& b) {
    if (a.single != b.single) return a.single;
    if (a.per_node != b.per_node) return a.per_node < b.per_node;
    return a.name < b.name;
  });
  Candidate& c = found.front();
  return CheckCluster{
      std::move(c.doc), c.label,
      "chosen for '" + gpu + "', " + std::to_string(sms) + " SMs, " + std::to_string(count) +
          " GPU(s): the single-node built-in with the fewest GPUs per node; --cluster to choose"};
}

}  // namespace scalescope::calib
