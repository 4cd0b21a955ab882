// Topology section: nvidia-smi's matrix and NVLink status, CUDA's peer-access matrix, and a
// cluster-format-agnostic list of GPU pairs with their link.
#include <cuda_runtime_api.h>

#include <cctype>

#include "check.hpp"
#include "scalescope/calibrate/smi_text.hpp"
#include "sections.hpp"

namespace scalescope::gpu {

namespace {

/// 18 for "NV18", 0 otherwise.
int nvlink_count(const std::string& cell) {
  if (cell.size() < 3 || cell.rfind("NV", 0) != 0) return 0;
  int n = 0;
  for (std::size_t i = 2; i < cell.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(cell[i]))) return 0;
    n = n * 10 + (cell[i] - '0');
  }
  return n;
}

}  // namespace

void run_topo(RunContext& ctx, const std::vector<SmiGpu>& smi) {
  const int n = ctx.ngpus;
  // CUDA index -> nvidia-smi index (they differ when CUDA_VISIBLE_DEVICES reorders GPUs).
  std::vector<int> nvsmi(static_cast<std::size_t>(n), -1);
  std::vector<std::string> bus_ids;
  for (int d = 0; d < n; ++d) {
    char bus[64] = {};
    SS_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    bus_ids.push_back(smi_text::normalize_pci_bus_id(bus));
    for (const auto& s : smi)
      if (s.pci_bus_id == bus_ids.back()) nvsmi[static_cast<std::size_t>(d)] = s.index;
  }

  int topo_status = 0, nvlink_status = 0;
  const std::string topo_raw = run_command("nvidia-smi topo -m", topo_status);
  const std::string nvlink_raw = run_command("nvidia-smi nvlink -s", nvlink_status);
  const auto matrix = smi_text::parse_topo_matrix(topo_raw);
  const auto links = smi_text::parse_nvlink_status(nvlink_raw);
  ctx.log(strf("nvidia-smi topo -m exit %d (%s), nvlink -s exit %d (%zu GPUs parsed)", topo_status,
               matrix ? "parsed" : "not parsed", nvlink_status, links.size()));

  Json peer = Json::array(), rank = Json::array();
  for (int a = 0; a < n; ++a) {
    Json prow = Json::array(), rrow = Json::array();
    for (int b = 0; b < n; ++b) {
      int can = 0, perf = 0;
      if (a != b) {
        SS_CUDA(cudaDeviceCanAccessPeer(&can, a, b));
        SS_CUDA(cudaDeviceGetP2PAttribute(&perf, cudaDevP2PAttrPerformanceRank, a, b));
      }
      prow.push_back(a == b || can != 0);
      rrow.push_back(a == b ? Json(nullptr) : Json(perf));
    }
    peer.push_back(prow);
    rank.push_back(rrow);
  }

  Json pairs = Json::array();
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      Json p{
          {"a", a}, {"b", b}, {"link", nullptr}, {"nvlinks", nullptr}, {"peer_access", peer[a][b]}};
      const int sa = nvsmi[static_cast<std::size_t>(a)], sb = nvsmi[static_cast<std::size_t>(b)];
      if (matrix && sa >= 0 && sb >= 0) {
        const auto cell = matrix->link("GPU" + std::to_string(sa), "GPU" + std::to_string(sb));
        if (cell) {
          p["link"] = *cell;
          p["nvlinks"] = nvlink_count(*cell);
        }
      }
      pairs.push_back(p);
    }
  }

  Json nvgpus = Json::array();
  for (int d = 0; d < n; ++d) {
    for (const auto& l : links) {
      if (l.gpu != nvsmi[static_cast<std::size_t>(d)]) continue;
      double total = 0.0;
      for (double s : l.link_GBps) total += s;
      nvgpus.push_back(Json{{"cuda_index", d},
                            {"nvsmi_index", l.gpu},
                            {"active_links", l.active_links},
                            {"inactive_links", l.inactive_links},
                            {"link_GBps", l.link_GBps},
                            {"total_GBps", round_to(total, 0.001)}});
    }
  }

  Json parsed = nullptr;
  if (matrix)
    parsed = Json{{"columns", matrix->columns}, {"rows", matrix->rows}, {"cells", matrix->cells}};
  ctx.profile.edit([&](Json& d) {
    d["topology"] = Json{
        {"gpu_count", n},
        {"pci_bus_ids", bus_ids},
        {"nvsmi_index", nvsmi},
        {"matrix", topo_raw},
        {"matrix_exit_status", topo_status},
        {"matrix_parsed", parsed},
        {"peer_access", peer},
        {"p2p_performance_rank", rank},
        {"nvlink", Json{{"raw", nvlink_raw}, {"exit_status", nvlink_status}, {"gpus", nvgpus}}},
        {"pairs", pairs}};
  });
  for (const auto& p : pairs)
    ctx.log(strf("GPU %d - GPU %d: %s, peer access %s", p["a"].get<int>(), p["b"].get<int>(),
                 p["link"].is_null() ? "link unknown" : p["link"].get<std::string>().c_str(),
                 p["peer_access"].get<bool>() ? "yes" : "no"));
}

}  // namespace scalescope::gpu
