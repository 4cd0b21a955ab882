// Facts recorded before measuring: tool, host, library versions and paths, environment, GPUs.
#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "check.hpp"
#include "scalescope/calibrate/smi_text.hpp"
#include "sections.hpp"

extern char** environ;

namespace scalescope::gpu {

namespace {

std::string version_text(int code, int major_div, int minor_div) {
  // CUDA encodes 13000 as major*1000 + minor*10; NCCL 22809 as major*10000 + minor*100 + patch.
  return std::to_string(code / major_div) + "." + std::to_string((code % major_div) / minor_div);
}

/// Paths of the loaded shared libraries whose file name starts with one of the prefixes.
Json loaded_libraries() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> paths;
  std::string line;
  const char* prefixes[] = {"libcudart", "libnccl", "libcublas", "libcuda.so", "libnvidia-ml"};
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    const std::string base = path.substr(path.rfind('/') + 1);
    for (const char* p : prefixes)
      if (base.rfind(p, 0) == 0) paths.insert(path);
  }
  Json out = Json::array();
  for (const auto& p : paths) out.push_back(p);
  return out;
}

std::string uuid_text(const cudaUUID_t& u) {
  std::string s = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
    s += strf("%02x", static_cast<unsigned>(static_cast<unsigned char>(u.bytes[i])));
  }
  return s;
}

}  // namespace

std::string run_command(const std::string& command, int& exit_status) {
  const std::string wrapped = "if command -v timeout >/dev/null 2>&1; then timeout 30 " + command +
                              "; else " + command + "; fi 2>&1";
  std::FILE* p = ::popen(wrapped.c_str(), "r");
  if (p == nullptr) {
    exit_status = -1;
    return {};
  }
  std::string out;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0 && out.size() < (4u << 20)) out.append(buf, n);
  const int st = ::pclose(p);
  exit_status = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
  return out;
}

std::vector<SmiGpu> query_smi_gpus(std::string& raw, int& exit_status) {
  raw = run_command(
      "nvidia-smi "
      "--query-gpu=index,pci.bus_id,uuid,name,driver_version,clocks.max.sm,clocks.max.memory,"
      "power.limit --format=csv,noheader,nounits",
      exit_status);
  std::vector<SmiGpu> out;
  if (exit_status != 0) return out;
  std::size_t start = 0;
  while (start < raw.size()) {
    std::size_t end = raw.find('\n', start);
    if (end == std::string::npos) end = raw.size();
    const auto f = smi_text::split_csv_line(std::string_view(raw).substr(start, end - start));
    start = end + 1;
    if (f.size() < 8 || f[0].empty() || !std::isdigit(static_cast<unsigned char>(f[0][0])))
      continue;
    SmiGpu g;
    g.index = std::stoi(f[0]);
    g.pci_bus_id = smi_text::normalize_pci_bus_id(f[1]);
    g.uuid = f[2];
    g.name = f[3];
    g.driver_version = f[4];
    g.max_sm_clock_MHz = f[5];
    g.max_mem_clock_MHz = f[6];
    g.power_limit_W = f[7];
    out.push_back(g);
  }
  return out;
}

Json tool_json(const Options& opt) {
  return Json{
      {"name", "scalescope-calibrate"}, {"version", "0.1.0"}, {"command_line", opt.command_line}};
}

Json host_json() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) name[0] = '\0';
  std::string cpu;
  std::ifstream info("/proc/cpuinfo");
  std::string line;
  while (std::getline(info, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) cpu = line.substr(colon + 1);
      while (!cpu.empty() && cpu.front() == ' ') cpu.erase(cpu.begin());
      break;
    }
  }
  return Json{{"hostname", std::string(name)},
              {"cpu", cpu},
              {"cores", std::thread::hardware_concurrency()}};
}

Json versions_json(const std::vector<SmiGpu>& smi) {
  Json v = Json::object();
  v["driver"] = smi.empty() ? Json(nullptr) : Json(smi.front().driver_version);
  int rt = 0, drv = 0;
  v["cuda_runtime"] =
      cudaRuntimeGetVersion(&rt) == cudaSuccess ? Json(version_text(rt, 1000, 10)) : Json(nullptr);
  v["cuda_driver_api"] =
      cudaDriverGetVersion(&drv) == cudaSuccess ? Json(version_text(drv, 1000, 10)) : Json(nullptr);
  cudaGetLastError();
  int nccl = 0;
  if (ncclGetVersion(&nccl) == ncclSuccess)
    v["nccl"] = std::to_string(nccl / 10000) + "." + std::to_string((nccl % 10000) / 100) + "." +
                std::to_string(nccl % 100);
  else
    v["nccl"] = nullptr;
  int maj = 0, min = 0, pat = 0;
  if (cublasGetProperty(MAJOR_VERSION, &maj) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(MINOR_VERSION, &min) == CUBLAS_STATUS_SUCCESS &&
      cublasGetProperty(PATCH_LEVEL, &pat) == CUBLAS_STATUS_SUCCESS)
    v["cublas"] = std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(pat);
  else
    v["cublas"] = nullptr;
  v["cublaslt"] = std::to_string(cublasLtGetVersion());
  v["compiled_with"] =
      Json{{"cuda", std::to_string(CUDART_VERSION)}, {"nccl", std::to_string(NCCL_VERSION_CODE)}};
  v["loaded_libraries"] = loaded_libraries();
  return v;
}

Json environment_json() {
  std::map<std::string, std::string> vars;
  const char* prefixes[] = {"NCCL_",    "CUDA_",          "CUBLAS",
                            "NVSHMEM_", "TORCH_SYMM_MEM", "LD_LIBRARY_PATH"};
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = kv.substr(0, eq);
    for (const char* p : prefixes)
      if (key.rfind(p, 0) == 0) vars[key] = kv.substr(eq + 1);
  }
  Json out = Json::object();
  for (const auto& [k, val] : vars) out[k] = val;
  return out;
}

Json gpus_json(int ngpus, const std::vector<SmiGpu>& smi) {
  Json out = Json::array();
  for (int d = 0; d < ngpus; ++d) {
    cudaDeviceProp p{};
    SS_CUDA(cudaGetDeviceProperties(&p, d));
    char bus[64] = {};
    SS_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    int clock_khz = 0, mem_clock_khz = 0;
    SS_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, d));
    SS_CUDA(cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, d));
    const std::string norm = smi_text::normalize_pci_bus_id(bus);
    Json g{{"index", d},
           {"name", std::string(p.name)},
           {"uuid", uuid_text(p.uuid)},
           {"pci_bus_id", norm},
           {"memory_bytes", static_cast<std::uint64_t>(p.totalGlobalMem)},
           {"sm_count", p.multiProcessorCount},
           {"clock_MHz", clock_khz / 1000},
           {"mem_clock_MHz", mem_clock_khz / 1000},
           {"memory_bus_width_bits", p.memoryBusWidth},
           {"l2_bytes", p.l2CacheSize},
           {"cc", std::to_string(p.major) + "." + std::to_string(p.minor)}};
    g["nvsmi_index"] = nullptr;
    for (const auto& s : smi) {
      if (s.pci_bus_id != norm) continue;
      g["nvsmi_index"] = s.index;
      g["nvsmi"] = Json{{"name", s.name},
                        {"uuid", s.uuid},
                        {"max_sm_clock_MHz", s.max_sm_clock_MHz},
                        {"max_mem_clock_MHz", s.max_mem_clock_MHz},
                        {"power_limit_W", s.power_limit_W}};
    }
    out.push_back(g);
  }
  return out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace scalescope::gpu
