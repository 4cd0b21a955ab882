// Turning parsed nccl-tests logs into calibration-profile collectives entries and profiles.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "scalescope/calibrate/nccl_tests.hpp"
#include "scalescope/sim/file_io.hpp"

namespace scalescope::calib {

namespace {

/// Bytes per element of nccl-tests' type names (nullopt for a name it does not print).
std::optional<double> type_size(const std::string& t) {
  static const std::map<std::string, double> sizes{
      {"int8", 1},   {"uint8", 1},  {"char", 1},    {"int32", 4},    {"uint32", 4},  {"int", 4},
      {"int64", 8},  {"uint64", 8}, {"half", 2},    {"float16", 2},  {"bfloat16", 2}, {"float", 4},
      {"float32", 4}, {"double", 8}, {"float64", 8}, {"f8e4m3", 1},   {"f8e5m2", 1},   {"fp8_e4m3", 1},
      {"fp8_e5m2", 1}};
  auto it = sizes.find(t);
  if (it == sizes.end()) return std::nullopt;
  return it->second;
}

std::string impl_of(const std::string& op) {
  if (op == "all_reduce") return "ncclAllReduce";
  if (op == "all_gather") return "ncclAllGather";
  if (op == "reduce_scatter") return "ncclReduceScatter";
  if (op == "alltoall") return "grouped ncclSend/ncclRecv to every rank (nccl-tests alltoall_perf)";
  if (op == "broadcast") return "ncclBroadcast";
  return "grouped ncclSend to rank+1 / ncclRecv from rank-1 (nccl-tests sendrecv_perf)";
}

CollRow make_row(double bytes, double count_col, double elt, int n, const std::string& op, double time_us, double algbw,
                 double busbw, std::optional<double> wrong, const NcclTestsRun& run) {
  CollRow r;
  r.bytes = bytes;
  r.count = elt > 0 ? std::floor(bytes / elt) : count_col;
  r.count_per_call = count_col;
  if (elt <= 0 && (op == "all_gather" || op == "reduce_scatter" || op == "alltoall")) r.count = count_col * n;
  r.time_us = time_us;
  r.algbw_GBps = algbw;
  r.busbw_GBps = busbw;
  if (run.iters > 0) r.iters = run.iters * std::max(1, run.agg_iters);
  r.wrong = wrong;
  return r;
}

std::string fmt_int(double v) {
  std::ostringstream s;
  if (v < 9e18) s << static_cast<long long>(v);  // a double past LLONG_MAX cannot be cast
  else s << v;
  return s.str();
}

// How the test was launched, from its header: nThread x nGpus ranks per process. One process per GPU is
// how training jobs run (torchrun, mpirun); one process driving several GPUs (-g N, -t N) calls NCCL with
// less host work per rank and shows a lower per-call floor (4x H200, validation/blind24/session19/: an
// 8-byte all_reduce took 18-27 us with -g 2/4, 44-48 us with one torch process per GPU).
Json launch_of(const NcclTestsRun& run) {
  const int per_process = std::max(1, run.nthreads * run.ngpus);
  const int n = run.nranks();
  std::string mode = "one process per GPU";
  if (per_process > 1) {
    mode = "one process drives " + std::to_string(per_process) + " GPUs (nccl-tests";
    if (run.ngpus > 1) mode += " -g " + std::to_string(run.ngpus);
    if (run.nthreads > 1) mode += " -t " + std::to_string(run.nthreads);
    mode += ")";
  }
  return Json{{"ranks_per_process", per_process}, {"processes", std::max(1, n / per_process)}, {"mode", mode}};
}

}  // namespace

Expected<CollEntry> to_coll_entry(const NcclTestsRun& run, const std::string& source, const NcclTestsOptions& options) {
  const int n = run.nranks();
  CollEntry e;
  e.op = run.op;
  e.nranks = n;
  for (int i = 0; i < n; ++i) e.ranks.push_back(i);
  e.dtype = run.rows.empty() ? "float" : run.rows.front().type;
  e.redop = run.rows.empty() || run.rows.front().redop.empty() || run.rows.front().redop == "-"
                ? (run.op == "all_reduce" || run.op == "reduce_scatter" ? "sum" : "none")
                : run.rows.front().redop;
  e.root = run.rows.empty() ? -1 : run.rows.front().root;
  e.impl = impl_of(run.op) + " via nccl-tests " + (run.program.empty() ? run.op + "_perf" : run.program);
  e.source = "nccl-tests " + source;

  // Nodes: distinct hosts of the device lines, unless --gpus-per-node says otherwise.
  std::map<std::string, int> per_host;
  for (const auto& r : run.ranks) ++per_host[r.host];
  if (options.gpus_per_node) {
    const int g = *options.gpus_per_node;
    if (g < 1 || n % g != 0)
      return input_error("", "--gpus-per-node", "expected a divisor of the " + std::to_string(n) + " ranks of the test at " +
                                                    source + " line " + std::to_string(run.line) + ", got " + std::to_string(g));
    e.gpus_per_node = g;
    e.nodes = n / g;
  } else {
    std::set<int> counts;
    for (const auto& [host, c] : per_host) counts.insert(c);
    if (counts.size() != 1)
      return input_error(source, "line " + std::to_string(run.line),
                         "the ranks are spread unevenly over " + std::to_string(per_host.size()) +
                             " hosts; pass --gpus-per-node to say how they map onto nodes");
    e.nodes = static_cast<int>(per_host.size());
    e.gpus_per_node = *counts.begin();
  }

  const double elt = type_size(e.dtype).value_or(0.0);
  double wrong_total = 0;
  bool checked = run.validation != 0;
  for (const auto& row : run.rows) {
    if (row.bytes <= 0) continue;  // nccl-tests' 0-byte points: no data moved
    e.rows.push_back(make_row(row.bytes, row.count, elt, n, run.op, row.time_us, row.algbw_GBps, row.busbw_GBps,
                              row.wrong, run));
    if (row.has_in_place)
      e.in_place_rows.push_back(make_row(row.bytes, row.count, elt, n, run.op, row.ip_time_us, row.ip_algbw_GBps,
                                         row.ip_busbw_GBps, row.ip_wrong, run));
    if (!row.wrong) checked = false;
    wrong_total += row.wrong.value_or(0.0) + row.ip_wrong.value_or(0.0);
  }
  if (e.rows.empty())
    return input_error(source, "line " + std::to_string(run.line), "the test has only 0-byte rows: nothing to import");
  if (wrong_total > 0 || run.out_of_bounds.value_or(0) > 0)
    e.check = "FAILED: nccl-tests reported " + fmt_int(wrong_total) + " wrong element(s) and " +
              fmt_int(run.out_of_bounds.value_or(0)) + " out-of-bounds value(s)";
  else if (!checked)
    e.check = "not checked (nccl-tests ran with -c 0: no #wrong counts)";
  else
    e.check = "passed";

  Json devices = Json::array();
  for (const auto& r : run.ranks) {
    Json d{{"rank", r.rank}, {"pid", r.pid}, {"host", r.host}, {"device", r.device}, {"bus_id", r.bus_id},
           {"name", r.name}};
    if (r.group >= 0) d["group"] = r.group;
    devices.push_back(std::move(d));
  }
  e.nccl_tests = Json{{"line", run.line},
                      {"program", run.program.empty() ? Json(nullptr) : Json(run.program)},
                      {"op_from", run.op_from},
                      {"version", run.version.empty() ? Json(nullptr) : Json(run.version)},
                      {"nthreads", run.nthreads},
                      {"ngpus", run.ngpus},
                      {"min_bytes", run.min_bytes},
                      {"max_bytes", run.max_bytes},
                      {"warmup_iters", run.warmup_iters},
                      {"iters", run.iters},
                      {"agg_iters", run.agg_iters},
                      {"validation", run.validation},
                      {"graph", run.graph},
                      {"columns", run.columns},
                      {"devices", devices},
                      {"launch", launch_of(run)},
                      {"avg_bus_bandwidth_GBps", run.avg_busbw_GBps ? Json(*run.avg_busbw_GBps) : Json(nullptr)},
                      {"out_of_bounds", run.out_of_bounds ? Json(*run.out_of_bounds) : Json(nullptr)},
                      {"complete", run.complete}};
  return e;
}

Expected<Profile> import_nccl_tests(const std::vector<std::filesystem::path>& files, const NcclTestsOptions& options,
                                    std::vector<std::string>* notes) {
  auto note = [&](std::string s) {
    if (notes) notes->push_back(std::move(s));
  };
  if (files.empty()) return input_error("", "FILE", "at least one nccl-tests log is required");
  Profile p;
  p.created_utc = std::nullopt;  // nccl-tests does not print when it ran
  std::string names;
  Json file_list = Json::array();
  for (const auto& f : files) {
    auto text = read_input_file(f, kMaxInputFileBytes, "nccl-tests log");
    if (!text) return text.error();
    auto runs = parse_nccl_tests_log(*text, f.string(), options);
    if (!runs) return runs.error();
    names += (names.empty() ? "" : ", ") + f.string();
    file_list.push_back(f.string());
    for (const auto& run : *runs) {
      auto entry = to_coll_entry(run, f.string(), options);
      if (!entry) return entry.error();
      const std::size_t skipped = run.rows.size() - entry->rows.size();
      note(f.string() + " line " + std::to_string(run.line) + ": " + run.op + " on " + std::to_string(entry->nranks) +
           " ranks (" + std::to_string(*entry->nodes) + " node(s) x " + std::to_string(*entry->gpus_per_node) + "), " +
           std::to_string(entry->rows.size()) + " sizes, op from " + run.op_from +
           (skipped ? "; " + std::to_string(skipped) + " row(s) of 0 bytes left out" : "") +
           (run.complete ? "" : "; NO FOOTER (truncated log kept by --allow-truncated)") +
           (entry->check == "passed" ? "" : "; check: " + entry->check));
      if (run.nthreads * run.ngpus > 1 && entry->nranks > 1)
        note(f.string() + " line " + std::to_string(run.line) + ": " +
             entry->nccl_tests["launch"]["mode"].get<std::string>() +
             "; a training job runs one process per GPU and pays more per call at small sizes (4x H200: an "
             "8-byte all_reduce 44-48 us per process against 18-27 us with -g N); for latency-bound sizes "
             "measure under mpirun with nccl-tests built MPI=1");
      Profile one;
      one.collectives.push_back(std::move(entry).value());
      one.provenance = p.provenance;
      const int replaced = merge_into(p, one);
      if (replaced > 0)
        note(f.string() + " line " + std::to_string(run.line) + ": replaced " + std::to_string(replaced) +
             " row(s) of the same op, ranks and size from an earlier test");
    }
  }
  p.provenance = "imported from nccl-tests " + names;
  p.collectives_method =
      "nccl-tests (imported): time = mean time per call of one timed batch of `iters` calls (host timer; averaged "
      "over processes in MPI runs); the out-of-place columns are the rows (the GPU program measures out of place), "
      "the in-place columns are kept in in_place_rows; 0-byte rows are left out";
  p.other["import"] = Json{{"tool", "scalescope import nccl-tests"},
                           {"files", file_list},
                           {"columns_used", "out-of-place time, algbw, busbw (in-place kept as in_place_rows)"}};
  return p;
}

}  // namespace scalescope::calib
