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
//   memory.elementwise[]             the row with the most bytes -> elementwise_bandwidth (its GBps);
//                                    every row -> elementwise_curve (bandwidth by kernel size)
//   memory.launch_overhead_us        -> launch_overhead (host time per back-to-back launch; raw CUDA,
//                                    without a framework's dispatch cost)
//   memory.launch_sync_us            -> launch_sync (launch + cudaStreamSynchronize of an empty kernel)
//   attention                        optional: {source (text: where and how it was measured), rows[]:
//                                    {batch, heads, kv_heads, head_dim, seq, causal, dtype, fwd_s, bwd_s,
//                                    label?}} -> AttentionSample (written by `scalescope calibrate
//                                    import-attention`, see make_attention_section()); profiles without
//                                    it load as before (attention efficiency assumed)
//   interference                     optional: {method, gpus, rows[]: {compute, class (gemm | memory),
//                                    op, bytes, compute_alone_us, compute_beside_us, compute_slowdown,
//                                    compute_covered, coll_alone_us, coll_beside_us, coll_slowdown,
//                                    coll_covered, compute_reps, coll_reps} or {compute, op, error}}
//                                    -> InterferenceSample (scalescope-calibrate's `interf` section); a
//                                    slowdown is used only where its `*_covered` is true
//   power                            optional: {source, idle_w, capped_w, classes: {gemm_bf16, memory, ...:
//                                    {watts, joules_per_unit, unit, kernels}}, ...} -> PowerModel (written by
//                                    `scalescope calibrate import-power`, see make_power_section())
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

/// The profile `attention` section from a measurement file of validation/attention/measure_attention.py
/// (schema "scalescope.attention-measurement/1": gpu, torch, cuda, measured_utc, method, rows[] {model?,
/// batch, heads, kv_heads, head_dim, seq, causal, dtype, fwd_s, bwd_s, fwd_bwd_s?, fwd_TFLOPS?,
/// bwd_TFLOPS?}); `file` names it in errors and in `imported_from`, `source` is the section's source
/// text (empty: built from the file's gpu, method and date).
Expected<Json> make_attention_section(const Json& measurement, const std::string& file, const std::string& source);
/// `profile` with its `attention` section set to `section` (replacing an old one), checked by reading
/// the result with compute_profile_from_json.
Expected<Json> with_attention_section(const Json& profile, const Json& section, const std::string& profile_file);

/// A profile `mamba` section from a Mamba-2 kernel measurement (validation/session33/ssd_kernels.py: {meta: {gpu,
/// torch, triton, mamba_ssm, timing, ...}, rows: [{name?, batch, seq, heads, head_dim, groups, state, chunk,
/// ssd_forward_s, ssd_backward_s, gated_norm_forward_s, gated_norm_backward_s, host_*?, *_bytes?}]}): {source,
/// imported_from, rows: [{label?, batch, seq, heads, head_dim, groups, state, chunk, ssd_forward_s, ...}]}.
Expected<Json> make_mamba_section(const Json& measurement, const std::string& file, const std::string& source);
/// A profile `power` section (docs/power.md) from one power sweep (validation/clocks/power_sweep.py, schema
/// "scalescope.power-sweep/1": idle {power_W}, kernels[] {name, class, dtype, flops, bytes, burst_s, sustained_s,
/// relative, power_W, cap_share}) and any power_mix.py files (mixes of a GEMM and an add: checks only): {source,
/// imported_from, gpu, idle_w, capped_w (the median draw of the capped kernels), classes {gemm_bf16, gemm_fp8?,
/// attention_flash?, attention_cudnn?, memory: {watts, joules_per_unit, unit, kernels}} (PowerClass, fitted over the
/// class's kernels at their burst rates; a kernel whose bursts ran more than 1.2x slower than its sustained run is
/// left out), kernels (each fitted kernel's measured and modelled draw), checks (each mix's GEMM rate measured and
/// modelled from the classes alone)}.
Expected<Json> make_power_section(const std::vector<std::pair<Json, std::string>>& measurements,
                                  const std::string& source);
/// `profile` with its top-level `key` section set to `section`, checked by reading the result.
Expected<Json> with_profile_section(const Json& profile, const std::string& key, const Json& section,
                                    const std::string& profile_file);

}  // namespace scalescope::models
