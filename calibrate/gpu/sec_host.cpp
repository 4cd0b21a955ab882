// Memory section, host side: host-device copies of every GPU in use from every NUMA node (pinned
// and pageable, both directions), the machine's NUMA layout, and the clocks and PCIe links of every
// GPU sampled while it works (what `scalescope calibrate check` compares with the cluster's
// topology).
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <thread>

#include "check.hpp"
#include "kernels.hpp"
#include "scalescope/calibrate/gpu_plan.hpp"
#include "scalescope/calibrate/smi_text.hpp"
#include "sections.hpp"
#include "timing.hpp"

namespace scalescope::gpu {

namespace {

namespace fs = std::filesystem;
using SteadyClock = std::chrono::steady_clock;

constexpr int kMpolBind = 2;        // MPOL_BIND (linux/mempolicy.h)
constexpr unsigned kMpolFNode = 1;  // MPOL_F_NODE
constexpr unsigned kMpolFAddr = 2;  // MPOL_F_ADDR
constexpr unsigned long kMaskBits = 1024;

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

/// NUMA nodes with memory, from /sys/devices/system/node/node<k> (empty when the kernel shows
/// none).
std::vector<int> numa_nodes() {
  std::vector<int> out;
  std::error_code ec;
  for (fs::directory_iterator it("/sys/devices/system/node", ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string n = it->path().filename().string();
    if (n.rfind("node", 0) == 0 && n.size() > 4 && std::isdigit(static_cast<unsigned char>(n[4])))
      out.push_back(std::stoi(n.substr(4)));
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// "0-27,56-83" -> CPU ids.
std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> out;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    const std::string part = text.substr(i, j - i);
    const auto dash = part.find('-');
    try {
      const int lo = std::stoi(part.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
      for (int c = lo; c <= hi && c - lo < 4096; ++c) out.push_back(c);
    } catch (...) {
    }
    i = j + 1;
  }
  return out;
}

/// Anonymous memory bound to one NUMA node (mbind), touched so that its pages exist there; pinned
/// with cudaHostRegister when asked. node < 0: the default placement.
class NodeBuffer {
 public:
  NodeBuffer(std::size_t bytes, int node, bool pin) : bytes_(bytes) {
    p_ = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p_ == MAP_FAILED) {
      p_ = nullptr;
      error_ = "mmap failed";
      return;
    }
    if (node >= 0) {
      unsigned long mask[kMaskBits / (8 * sizeof(unsigned long))] = {};
      mask[static_cast<std::size_t>(node) / (8 * sizeof(unsigned long))] |=
          1ul << (node % (8 * sizeof(unsigned long)));
      if (::syscall(SYS_mbind, p_, bytes, kMpolBind, mask, kMaskBits, 0) != 0)
        error_ = std::string("mbind: ") + std::strerror(errno) +
                 " (a container without CAP_SYS_NICE refuses it)";
    }
    std::memset(p_, 1, bytes);  // places every page
    int where = -1;
    if (::syscall(SYS_get_mempolicy, &where, nullptr, 0, p_, kMpolFNode | kMpolFAddr) == 0)
      placed_ = where;
    if (pin && error_.empty()) {
      const cudaError_t e = cudaHostRegister(p_, bytes, cudaHostRegisterDefault);
      if (e != cudaSuccess) {
        cudaGetLastError();
        error_ = "cudaHostRegister: " + cuda_error_text(e);
      } else {
        pinned_ = true;
      }
    }
  }
  ~NodeBuffer() {
    if (pinned_) cudaHostUnregister(p_);
    if (p_) ::munmap(p_, bytes_);
  }
  NodeBuffer(const NodeBuffer&) = delete;
  NodeBuffer& operator=(const NodeBuffer&) = delete;
  void* get() const { return p_; }
  const std::string& error() const { return error_; }
  int placed() const { return placed_; }

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
  bool pinned_ = false;
  int placed_ = -1;
  std::string error_;
};

/// Binds the calling thread to the CPUs of a NUMA node (pageable copies run the driver's CPU copy
/// there).
void bind_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c < CPU_SETSIZE) CPU_SET(c, &set);
  ::sched_setaffinity(0, sizeof set, &set);
}

Json stats_json(const calib::SampleStats& s) {
  return Json{{"time_us", round_to(s.median * 1e6, 0.001)},
              {"time_us_min", round_to(s.min * 1e6, 0.001)},
              {"time_us_p90", round_to(s.p90 * 1e6, 0.001)},
              {"reps", s.n}};
}

/// A numeric nvidia-smi field as a number, else the text.
Json field(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (!s.empty() && end != s.c_str() && *end == '\0') return v;
  return s;
}

}  // namespace

void run_host_copies(RunContext& ctx, Json& mem) {
  const std::size_t bytes = ctx.opt.quick ? (32ull << 20) : (256ull << 20);
  int numactl_status = 0;
  const std::string numactl = run_command("numactl -H", numactl_status);
  std::vector<int> nodes = numa_nodes();
  Json numa{
      {"nodes", nodes},
      {"numactl_exit_status", numactl_status},
      {"numactl", numactl_status == 0 ? Json(numactl) : Json(nullptr)},
      {"placement",
       "anonymous memory bound to the node with mbind(MPOL_BIND), every page touched; pinned with "
       "cudaHostRegister; pageable copies run with the thread bound to the node's CPUs"}};
  Json cpu_lists = Json::object(), gpu_numa = Json::array();
  std::vector<std::vector<int>> cpus;
  for (int n : nodes) {
    const std::string list =
        read_text("/sys/devices/system/node/node" + std::to_string(n) + "/cpulist");
    cpu_lists[std::to_string(n)] = list;
    cpus.push_back(parse_cpu_list(list));
  }
  numa["cpulist"] = cpu_lists;
  for (int d = 0; d < ctx.ngpus; ++d) {
    char bus[64] = {};
    SS_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, d));
    std::string id = smi_text::normalize_pci_bus_id(bus);
    const std::string text = read_text("/sys/bus/pci/devices/" + id + "/numa_node");
    gpu_numa.push_back(text.empty() ? Json(nullptr) : field(text));
  }
  numa["gpu_numa_nodes"] = gpu_numa;
  mem["numa"] = numa;
  if (nodes.empty()) nodes.push_back(-1);  // no NUMA information: the default placement only
  cpu_set_t saved;
  CPU_ZERO(&saved);
  ::sched_getaffinity(0, sizeof saved, &saved);
  Json rows = Json::array();
  for (int d = 0; d < ctx.ngpus; ++d) {
    Stream st(d);
    const cudaStream_t s = st.get();
    DeviceBuffer dev(d, bytes);
    for (std::size_t k = 0; k < nodes.size(); ++k) {
      if (!ctx.fits(2.0)) {
        mem["host_copies"] = rows;
        return ctx.budget_stop(strf("host copies gpu%d numa %d", d, nodes[k]));
      }
      for (const bool pin : {true, false}) {
        NodeBuffer host(bytes, nodes[k], pin);
        Json base{{"gpu", d},
                  {"numa_node", nodes[k] >= 0 ? Json(nodes[k]) : Json(nullptr)},
                  {"placed_numa_node", host.placed() >= 0 ? Json(host.placed()) : Json(nullptr)},
                  {"memory", pin ? "pinned" : "pageable"},
                  {"bytes", bytes}};
        if (!host.error().empty()) {
          base["error"] = host.error();
          rows.push_back(base);
          continue;
        }
        for (const bool h2d : {true, false}) {
          Json row = base;
          row["direction"] = h2d ? "h2d" : "d2h";
          auto copy = [&] {
            SS_CUDA(cudaMemcpyAsync(h2d ? dev.get() : host.get(), h2d ? host.get() : dev.get(),
                                    bytes, h2d ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                                    s));
          };
          calib::SampleStats stats;
          if (pin) {
            stats = calib::summarize(time_back_to_back(d, s, 1, 3, copy));
          } else {  // pageable copies return when the host's part is done: wall clock, synchronized
            if (k < cpus.size()) bind_thread(cpus[k]);
            std::vector<double> t;
            for (int rep = 0; rep < 4; ++rep) {
              const auto t0 = SteadyClock::now();
              copy();
              SS_CUDA(cudaStreamSynchronize(s));
              if (rep > 0)
                t.push_back(std::chrono::duration<double>(SteadyClock::now() - t0).count());
            }
            ::sched_setaffinity(0, sizeof saved, &saved);
            stats = calib::summarize(t);
          }
          row.update(stats_json(stats));
          row["GBps"] = round_to(static_cast<double>(bytes) / stats.median / 1e9, 0.01);
          rows.push_back(row);
        }
      }
    }
  }
  mem["host_copies"] = rows;
  ctx.log(strf("host copies: %zu rows (%d GPU(s) x %zu NUMA node(s) x pinned/pageable x H2D/D2H)",
               rows.size(), ctx.ngpus, nodes.size()));
}

void sample_under_load(RunContext& ctx) {
  if (!ctx.fits(6.0)) return ctx.budget_stop("clocks under load");
  // Every GPU copies from pinned host memory on one stream and reads/writes HBM on another for
  // about 1.5 s; nvidia-smi samples clocks, power and PCIe links half a second in (an idle link
  // drops its generation).
  struct Load {
    std::unique_ptr<Stream> copy, compute;
    std::unique_ptr<DeviceBuffer> a, b, dst;
    std::unique_ptr<PinnedBuffer> host;
  };
  const std::size_t hb = 64ull << 20, big = 512ull << 20;
  std::vector<Load> loads(static_cast<std::size_t>(ctx.ngpus));
  for (int d = 0; d < ctx.ngpus; ++d) {
    Load& l = loads[static_cast<std::size_t>(d)];
    l.copy = std::make_unique<Stream>(d);
    l.compute = std::make_unique<Stream>(d);
    l.a = std::make_unique<DeviceBuffer>(d, big);
    l.b = std::make_unique<DeviceBuffer>(d, big);
    l.dst = std::make_unique<DeviceBuffer>(d, hb);
    l.host = std::make_unique<PinnedBuffer>(hb);
    SS_CUDA(
        launch_fill_random(l.a->get(), ElemType::f32, big / 4, 31, -1.0f, 1.0f, l.compute->get()));
    for (int i = 0; i < 1200; ++i)  // 64 MiB at ~50 GB/s: ~1.5 s
      SS_CUDA(
          cudaMemcpyAsync(l.dst->get(), l.host->get(), hb, cudaMemcpyHostToDevice, l.copy->get()));
    for (int i = 0; i < 4000; ++i)  // 1 GiB of HBM traffic per launch: ~0.3 ms each
      SS_CUDA(launch_scale_copy(l.a->as<float>(), l.b->as<float>(), big / 4, l.compute->get()));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  int st1 = 0, st2 = 0, st3 = 0;
  const std::string clocks = run_command(
      "nvidia-smi "
      "--query-gpu=pci.bus_id,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,power.draw,power."
      "limit,"
      "temperature.gpu --format=csv,noheader,nounits",
      st1);
  const std::string pcie = run_command(
      "nvidia-smi "
      "--query-gpu=pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
      "pcie.link.width.max --format=csv,noheader,nounits",
      st2);
  std::string reasons = run_command(
      "nvidia-smi --query-gpu=pci.bus_id,clocks_event_reasons.active --format=csv,noheader", st3);
  if (st3 != 0)  // drivers before 535 name it clocks_throttle_reasons
    reasons = run_command(
        "nvidia-smi --query-gpu=pci.bus_id,clocks_throttle_reasons.active --format=csv,noheader",
        st3);
  for (int d = 0; d < ctx.ngpus; ++d) {
    Load& l = loads[static_cast<std::size_t>(d)];
    wait_stream(d, l.copy->get(), 60.0, "copies under load");
    wait_stream(d, l.compute->get(), 60.0, "kernels under load");
  }
  auto rows_of = [](const std::string& text) {
    std::vector<std::vector<std::string>> out;
    std::size_t i = 0;
    while (i < text.size()) {
      std::size_t j = text.find('\n', i);
      if (j == std::string::npos) j = text.size();
      auto f = smi_text::split_csv_line(std::string_view(text).substr(i, j - i));
      if (f.size() >= 2) {
        f[0] = smi_text::normalize_pci_bus_id(f[0]);
        out.push_back(f);
      }
      i = j + 1;
    }
    return out;
  };
  const auto c_rows = rows_of(st1 == 0 ? clocks : ""), p_rows = rows_of(st2 == 0 ? pcie : ""),
             r_rows = rows_of(st3 == 0 ? reasons : "");
  ctx.profile.edit([&](Json& doc) {
    for (auto& g : doc["gpus"]) {
      const std::string bus = g.value("pci_bus_id", std::string());
      Json load{
          {"load", "pinned H2D copies and an HBM read/write kernel on every GPU in use at once"},
          {"smi_exit_status", Json::array({st1, st2, st3})}};
      for (const auto& f : c_rows)
        if (f[0] == bus && f.size() >= 8) {
          load["sm_clock_MHz"] = field(f[1]);
          load["max_sm_clock_MHz"] = field(f[2]);
          load["mem_clock_MHz"] = field(f[3]);
          load["max_mem_clock_MHz"] = field(f[4]);
          load["power_draw_W"] = field(f[5]);
          load["power_limit_W"] = field(f[6]);
          load["temperature_C"] = field(f[7]);
        }
      for (const auto& f : p_rows)
        if (f[0] == bus && f.size() >= 5) {
          load["pcie_gen"] = field(f[1]);
          load["pcie_gen_max"] = field(f[2]);
          load["pcie_width"] = field(f[3]);
          load["pcie_width_max"] = field(f[4]);
        }
      for (const auto& f : r_rows)
        if (f[0] == bus) load["clocks_event_reasons"] = f[1];
      g["under_load"] = load;
    }
  });
  ctx.log(strf("clocks under load sampled (nvidia-smi exit %d/%d/%d)", st1, st2, st3));
}

}  // namespace scalescope::gpu
