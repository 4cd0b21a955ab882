// Minimal reader of the compute part of a calibration profile (`scalescope.calibration/1`,
// docs/profile-format.md): GEMM rows, copy / elementwise bandwidth and launch overhead.
//
// What is read (everything else in the document is left alone; the full loader with every section
// is calib::load_profile in calibrate/, which depends on this library, not the other way round):
//   schema                           must be "scalescope.calibration/1"
//   gpus[0].name                     ComputeProfile::gpu (optional)
//   gemm[]                           rows with dtype, m, n, k, time_us -> GemmSample; rows with
//                                    "error" (no cuBLASLt algorithm) or without time_us are skipped;
//                                    unknown keys in a row are errors
//   memory.d2d_copy_GBps             -> hbm_bandwidth (read + written bytes per second)
//   memory.elementwise[]             the row with the most bytes -> elementwise_bandwidth (its GBps)
//   memory.launch_overhead_us        -> launch_overhead (host time per back-to-back launch; raw CUDA,
//                                    without a framework's dispatch cost)
#pragma once

#include <filesystem>
#include <string_view>

#include "scalescope/models/compute_model.hpp"
#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::models {

/// Reads the compute part of a parsed profile; `source` names it in errors and provenance.
Expected<ComputeProfile> compute_profile_from_json(const Json& doc, const std::string& source);
/// Reads a profile file.
Expected<ComputeProfile> load_compute_profile(const std::filesystem::path& file);
/// A path (contains '/', ends in ".json" or names an existing file) or a bare name looked up as
/// NAME.json in $SCALESCOPE_DATA_DIR/calibrate/profiles/ and then SCALESCOPE_SOURCE_DIR/calibrate/profiles/.
Expected<ComputeProfile> load_compute_profile_by_name_or_path(std::string_view name_or_path);

}  // namespace scalescope::models
