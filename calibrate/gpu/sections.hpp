// The measuring sections of the calibration program and the facts collected before them.
// Each section appends its results to the profile as it goes and throws GpuError when a GPU call
// fails in a way the section cannot work around.
#pragma once

#include <string>
#include <vector>

#include "context.hpp"

namespace scalescope::gpu {

/// One row of `nvidia-smi --query-gpu=...`, keyed by normalized PCI bus id.
struct SmiGpu {
  int index = -1;
  std::string pci_bus_id, uuid, name, driver_version, max_sm_clock_MHz, max_mem_clock_MHz,
      power_limit_W;
};

/// Runs a shell command (stderr folded into stdout, 30 s limit when `timeout` exists); returns
/// its output and sets exit_status (-1 if it could not be started).
std::string run_command(const std::string& command, int& exit_status);

std::vector<SmiGpu> query_smi_gpus(std::string& raw, int& exit_status);
Json tool_json(const Options& opt);
Json host_json();
Json versions_json(const std::vector<SmiGpu>& smi);
Json environment_json();
/// One entry per used GPU (CUDA devices 0..ngpus-1) with CUDA's facts and nvidia-smi's.
Json gpus_json(int ngpus, const std::vector<SmiGpu>& smi);
/// ISO 8601 UTC time, e.g. "2026-11-20T10:11:12Z".
std::string utc_now();

/// Human-readable summary of a profile document (printed at the end of a run).
std::string summary_text(const Json& doc);
/// `scalescope calibrate check` of the profile document written to `path`, against `cluster` (empty: chosen from
/// the GPU type): the report's text; `health` gets its summary (or the reason it did not run).
std::string health_check(const Json& doc, const std::string& path, const std::string& cluster, Json& health);

void run_topo(RunContext& ctx, const std::vector<SmiGpu>& smi);
void run_mem(RunContext& ctx);
/// Part of the memory section: host-device copies of every GPU in use from every NUMA node, pinned and pageable,
/// both directions (memory.host_copies), and the NUMA layout (memory.numa).
void run_host_copies(RunContext& ctx, Json& mem);
/// Part of the memory section: clocks, power and PCIe links of every GPU in use sampled with nvidia-smi while
/// they copy and compute (gpus[i].under_load).
void sample_under_load(RunContext& ctx);
void run_p2p(RunContext& ctx);
void run_coll(RunContext& ctx);
void run_gemm(RunContext& ctx);
/// Compute-communication interference on every GPU in use (skipped, with a reason, on one GPU).
void run_interf(RunContext& ctx);

}  // namespace scalescope::gpu
