// Importing nccl-tests logs (NVIDIA/nccl-tests: all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf, broadcast_perf, sendrecv_perf) into a calibration profile.
//
// What is read (docs/nccl-tests-import.md has the details and the keys written):
//  * the "# nThread 1 nGpus 4 minBytes ... iters: 20 ..." line that opens each test (a log may hold
//    several tests one after the other), "# nccl-tests version ..." and "# Collective test starting: X"
//    when printed;
//  * the device lines "#  Rank  0 Group  0 Pid 1234 on host device  0 [0000:18:00] NVIDIA H200"
//    (older logs: no "Group", "[0x18]"): one per rank, so nranks = their number for both `-g N`
//    single-process runs and one-process-per-GPU (MPI) runs; hosts give nodes and GPUs per node;
//  * the column header, whatever its layout: "size count type redop root time algbw busbw #wrong"
//    (2022 and later), "size count type redop time algbw busbw error" (older; no redop column in some
//    tests), "bytes N type op time algbw busbw res" (2016), extra columns (per-iteration statistics,
//    "#bitdiff", a timestamp) ignored; the first time/algbw/busbw group is out-of-place, the second
//    in-place;
//  * the footer "# Out of bounds values : 0 OK" and "# Avg bus bandwidth : 123.4".
// Launcher prefixes (Open MPI --tag-output "[1,0]<stdout>:", srun --label " 0: ") are removed first.
// The operation comes from --op, else the "Collective test starting" line, else a program name
// (all_reduce_perf, ..., with or without _mpi) in the lines before the test (the command line), else
// the file name. The profile uses the out-of-place columns (as the GPU program measures out of place);
// the in-place ones are kept as `in_place_rows`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/calibrate/profile.hpp"
#include "scalescope/sim/error.hpp"

namespace scalescope::calib {

/// One device line of a test.
struct NcclTestsRank {
  int rank = 0;
  int group = -1;  ///< -1 when the log has no "Group" field
  std::int64_t pid = 0;
  std::string host;
  int device = 0;
  std::string bus_id;  ///< as printed between the brackets
  std::string name;    ///< "NVIDIA H200"
};

/// One result line: out-of-place and (when printed) in-place timings of one size.
struct NcclTestsRow {
  int line = 0;
  double bytes = 0;
  double count = 0;  ///< the count column (per rank for all_gather, reduce_scatter, alltoall)
  std::string type, redop;
  int root = -1;
  double time_us = 0, algbw_GBps = 0, busbw_GBps = 0;
  std::optional<double> wrong;  ///< #wrong / error column; nullopt for "N/A"
  bool has_in_place = false;
  double ip_time_us = 0, ip_algbw_GBps = 0, ip_busbw_GBps = 0;
  std::optional<double> ip_wrong;
};

/// One test of a log (from its "# nThread" line to its footer).
struct NcclTestsRun {
  int line = 0;             ///< line of "# nThread ..."
  std::string program;      ///< "all_reduce_perf" (without _mpi); empty when not found
  std::string op;           ///< profile op name ("all_reduce"), set by parse_nccl_tests_log
  std::string op_from;      ///< how op was found: "--op", "'Collective test starting' line 2", ...
  std::string version;      ///< nccl-tests version when printed ("2.17.6")
  int nthreads = 1, ngpus = 1;
  std::int64_t min_bytes = 0, max_bytes = 0;
  int warmup_iters = 0, iters = 0, agg_iters = 1;
  int validation = 1;
  int graph = 0;
  std::vector<NcclTestsRank> ranks;
  std::vector<std::string> columns;  ///< header column names as printed
  std::vector<NcclTestsRow> rows;
  std::optional<double> avg_busbw_GBps;  ///< "# Avg bus bandwidth" footer
  std::optional<int> out_of_bounds;       ///< "# Out of bounds values" footer
  bool complete = false;                  ///< the footer was seen

  int nranks() const { return ranks.empty() ? nthreads * ngpus : static_cast<int>(ranks.size()); }
};

struct NcclTestsOptions {
  std::optional<std::string> op;        ///< force the op (profile name, e.g. "all_reduce"); nullopt = auto
  std::optional<int> gpus_per_node;     ///< ranks per node; default: from the hosts of the rank lines
  bool allow_truncated = false;         ///< keep the rows of a test that has no footer (else an error)
};

/// Parses one log's text; `source` names it in errors ("FILE: line N: ..."). Rejects logs without a
/// test, tests without rows, unreadable result lines, test failures printed by nccl-tests, duplicate
/// ranks (an nccl-tests binary built without MPI run under mpirun), unsupported programs, and a
/// busbw/algbw ratio that contradicts the op's nccl-tests factor (wrong --op or rank count).
Expected<std::vector<NcclTestsRun>> parse_nccl_tests_log(std::string_view text, std::string source,
                                                         const NcclTestsOptions& options = {});

/// The profile op for an nccl-tests program name ("all_reduce_perf", "alltoall_perf_mpi"), or nullopt.
std::optional<std::string> op_of_nccl_tests_program(std::string_view program);

/// The collectives entry for one parsed test (out-of-place rows; in-place as in_place_rows; sizes
/// of 0 bytes left out). `source` is recorded as "nccl-tests <source>".
Expected<CollEntry> to_coll_entry(const NcclTestsRun& run, const std::string& source, const NcclTestsOptions& options);

/// Reads every file, parses it and builds one profile (provenance "imported from nccl-tests FILE, ...").
/// Tests of the same op and rank count are merged (a later file's row replaces a row of the same
/// size). `notes` receives what the user should know (op source, sizes left out, merges).
Expected<Profile> import_nccl_tests(const std::vector<std::filesystem::path>& files, const NcclTestsOptions& options,
                                    std::vector<std::string>* notes = nullptr);

}  // namespace scalescope::calib
