// Calibration profiles (`scalescope.calibration/1`, docs/profile-format.md): loading with file +
// JSON-path errors, writing back, finding built-in profiles by name, and merging profiles.
//
// The parts the fitting uses (collectives with their rows, GEMM rows, the memory numbers) are read
// into typed fields and validated; the descriptive sections (host, versions, environment, topology,
// p2p, gemm_meta, memory, status, ...) are type-checked and kept as JSON so that to_json()
// writes them back unchanged. Profiles imported from nccl-tests logs (nccl_tests.hpp) use the same
// schema with the extra keys described in docs/nccl-tests-import.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/sim/collective_types.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::calib {

inline constexpr std::string_view kProfileSchema = "scalescope.calibration/1";

/// One size of one collective, nccl-tests semantics (docs/profile-format.md, `rows`).
struct CollRow {
  double bytes = 0;           ///< nccl-tests "size": bytes of the whole buffer
  double count = 0;           ///< elements of the whole buffer
  double count_per_call = 0;  ///< the count passed to NCCL (nccl-tests' count column)
  double time_us = 0;         ///< median (program) or nccl-tests' average time per call
  std::optional<double> time_us_min, time_us_p90;
  double algbw_GBps = 0;
  double busbw_GBps = 0;
  std::optional<int> iters, reps;
  std::optional<double> host_launch_us;
  std::optional<double> wrong;  ///< imported: nccl-tests' #wrong / error column (absent for "N/A")
};

/// One (operation, GPU group) of `collectives[]`.
struct CollEntry {
  std::string op;  ///< all_reduce, ..., sendrecv, sendrecv_pair
  int nranks = 0;
  std::vector<int> ranks;
  std::optional<int> src, dst;  ///< sendrecv_pair only
  std::string dtype = "float";
  std::string redop = "none";
  int root = -1;
  bool in_place = false;
  std::string impl;
  std::string check = "passed";
  std::vector<CollRow> rows;
  // Imported from nccl-tests (absent in the program's profiles):
  std::vector<CollRow> in_place_rows;  ///< nccl-tests' in-place columns, kept as extra
  std::string source;                  ///< "nccl-tests FILE" (the log the rows came from)
  std::optional<int> nodes;            ///< hosts the ranks ran on
  std::optional<int> gpus_per_node;    ///< ranks per host
  Json nccl_tests;                     ///< imported: header values, devices, footer (null otherwise)

  /// The model's operation, or nullopt for sendrecv_pair (which the model has no op for).
  std::optional<CollOp> coll_op() const { return parse_coll_op(op); }
};

/// One timed GEMM of `gemm[]` (cuBLAS column-major arguments).
struct GemmRow {
  std::string dtype;  ///< bf16, fp16, tf32, fp32, fp8_e4m3
  char transa = 'N', transb = 'N';
  std::int64_t m = 0, n = 0, k = 0;
  std::optional<double> time_us, time_us_min, time_us_p90, tflops;
  std::optional<int> reps;
  std::string label;
  std::optional<std::string> error;  ///< no cuBLASLt algorithm for this shape (no times then)
};

struct Profile {
  std::string file;  ///< where it was loaded from (provenance); empty for a profile built in memory
  std::optional<std::string> created_utc;
  std::string provenance = "measured";
  std::string collectives_method;
  std::vector<CollEntry> collectives;
  std::vector<GemmRow> gemm;
  /// Everything else, as found (keys of the top level other than the ones above and `schema`).
  Json other = Json::object();

  /// The profile's name for messages and provenance: the file stem ("h200x4"), or "<profile>".
  std::string name() const;
  /// gpus[0].name when present ("NVIDIA H200"), else the first imported rank's device name, else "".
  std::string gpu_name() const;
  /// A number of `memory` (e.g. "d2d_copy_GBps", "launch_overhead_us"), when present and a number.
  std::optional<double> memory_number(std::string_view key) const;
};

/// Reads and validates a profile. Every error names the file, the JSON path and what was expected.
Expected<Profile> load_profile(const std::filesystem::path& file);
/// Validates a parsed document; `source` names it in errors and becomes Profile::file.
Expected<Profile> profile_from_json(const Json& doc, std::string source);
/// A path (contains '/', ends in ".json" or names an existing file) or a bare name such as "h200x4",
/// looked up as NAME.json in $SCALESCOPE_DATA_DIR/calibrate/profiles/, then in the source tree's
/// calibrate/profiles/. An unknown name is an input error listing the available names.
Expected<Profile> load_profile_by_name_or_path(std::string_view name_or_path);
/// Stems of the built-in profiles in those folders (sorted, without duplicates).
std::vector<std::string> available_profile_names();

/// The profile as JSON (keys in the documented form; `other` sections written back as found).
Json to_json(const Profile& profile);
/// to_json(profile).dump(2) plus a newline, written atomically.
Expected<bool> write_profile(const Profile& profile, const std::filesystem::path& file);

/// Adds `extra` to `base`: collectives are matched by (op, ranks, src, dst, dtype); a matching
/// entry's rows are united by size, the row from `extra` replacing one of the same size. GEMM
/// rows are matched by (dtype, transa, transb, m, n, k), `extra` winning. Sections of `other`
/// that `base` lacks are taken from `extra`. Provenance becomes "<base>; merged with <extra>"
/// when they differ. Returns how many rows of `extra` replaced rows of `base`.
int merge_into(Profile& base, const Profile& extra);

}  // namespace scalescope::calib
