// Fitting the collective model's parameters to a calibration profile, and checking the compute
// model's GEMM interpolation on held-back shapes.
//
// Collectives (fit_collective_params). The model (collective_params.hpp) predicts, for op, algorithm a,
// protocol p, n ranks and S bytes:  t = base[a][p] + sum_c k_c hop[c][a][p] + S_wire / rate, with
// S_wire = S / (protocol_eff[a][p] * bus_eff[op][a][class]). Measured rows (out of place, sizes >= 1
// byte, check passed) are split by size and each range fits the parameters it determines:
//  (A) bandwidth, S >= large_min_bytes (64 MiB): for every op and link class of the group, one factor s
//      multiplies the starting bus_eff[op][a][class] of every algorithm a the op can use (all_reduce: ring
//      and tree keep their ratio, since the rows do not say which one NCCL ran), chosen so that the
//      model's own (fastest) choice has median over the rows of log(t_pred / t_meas) = 0 (bisection in
//      log space, bus_eff within [0.05, 2]; t_pred falls monotonically as s grows). No rows that large:
//      the op's largest size if it is >= 1 MiB, otherwise the starting value stays (said in the notes).
//  (B) latency, S <= small_max_bytes (64 KiB): per algorithm, with the protocol NCCL uses for small
//      messages (LL for ring and tree, Simple for pairwise and p2p), each row's latency is
//      L = t_meas - (the model's time with zero latency), and its hop counts k_c come from the model.
//      The median L of each (op, group) is one equation  L = base + sum_c k_c hop[c]; base and hops are
//      the non-negative least-squares solution. When the equations do not separate base from the hops
//      (one hop count only, e.g. sendrecv, or 2-GPU rows only), tree hops take ring's fitted per-hop
//      latency (NCCL's hwLat has the same LL values for both), pairwise and p2p hops become 0 (a group's
//      sends to different peers run concurrently), and base is fitted on the rest.
//  (C) size ramp, small_max < S < large_min: the channel thresholds of LL, LL128 and Simple and a scale
//      on the LL128 and Simple latencies (ring and tree) minimise sum of log(t_pred / t_meas)^2 by
//      coordinate descent over grids of factors 2^(i/8), i = -40..40 (thresholds) and -24..24 (scales).
//  (A), (B), (C) run twice in that order (each uses the others' latest values), on the model without
//  efficiency-by-size curves (those of `start` are dropped). Then:
//  (D) efficiency by size, all sizes: per op, one knot per rounded log2(size) of its rows, valued
//      exp(median over the rows of that size, all group sizes fitted, of log(t_model / t_meas)) (clamped
//      to [1/8, 8]); the model's time is divided by the curve (collective_params.hpp), so each knot
//      makes the median row of its size exact. One curve for all group sizes: n enters only through the
//      model's algorithm terms. sendrecv: the 2-GPU rows give its curve and the 3+ GPU rows (send and
//      receive peers differ) the sendrecv_distinct_peers curve; without 2-GPU rows the op's curve
//      comes from all rows, without 3+ GPU rows there is no second curve.
//  Everything is deterministic. Rows of sendrecv_pair are not used (the model has no one-way pair op).
//
// GEMM (validate_gemm_interpolation): per dtype, the distinct measured problems (m, n, k) in profile
// order; every `every`-th one (indices every-1, 2*every-1, ...) is held back with all its rows (the
// model ignores the layout, so a held-back problem must not stay in the fit set under another layout);
// ComputeModel::with_profile is built from the rest (and the profile's measured copy bandwidth) and
// predicts the held-back ones; the report gives each error and their median absolute value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/calibrate/profile.hpp"
#include "scalescope/sim/cluster.hpp"
#include "scalescope/sim/collective.hpp"

namespace scalescope::calib {

struct FitOptions {
  std::vector<int> groups;             ///< fit only on rows of these group sizes (nranks); empty = all
  std::vector<std::string> ops;        ///< fit only on these ops; empty = all
  double small_max_bytes = 64.0 * 1024.0;             ///< latency rows: bytes <= this
  double large_min_bytes = 64.0 * 1024.0 * 1024.0;    ///< bandwidth rows: bytes >= this
  CollectiveParams start = datasheet_collective_params();  ///< values not fitted stay as here
};

/// One fitted number and where it came from.
struct FittedValue {
  std::string name;   ///< "bus_efficiency.all_reduce.ring.nvlink", "base_latency_us.ring.LL", ...
  double value = 0;
  double before = 0;  ///< the starting value (datasheet unless FitOptions::start says otherwise)
  std::string unit;   ///< "fraction", "us", "bytes", "factor"
  std::string rows;   ///< "all_reduce n=2,4: 64 MiB..1 GiB (8 rows)"
  std::string method;
};

/// One measured row next to the fitted model's prediction (automatic algorithm choice).
struct RowResidual {
  std::string op;
  int nranks = 0;
  double bytes = 0;
  double measured_us = 0, predicted_us = 0;
  double measured_busbw_GBps = 0, predicted_busbw_GBps = 0;  ///< both = bytes / time x nccl-tests factor
  std::string algorithm, protocol;
  std::string range;  ///< "latency", "ramp" or "bandwidth"
  bool in_fit = false;  ///< the row was among those fitted on (FitOptions filters)
  /// predicted / measured busbw - 1 (= measured / predicted time - 1).
  double error() const { return predicted_busbw_GBps / measured_busbw_GBps - 1.0; }
};

struct FitReport {
  std::string profile;  ///< Profile::name()
  std::vector<FittedValue> values;
  std::vector<RowResidual> residuals;  ///< every usable row of the profile, fitted on or not
  std::vector<std::string> notes;      ///< rows left out and why, values that stayed, clamps
};

struct FitResult {
  CollectiveParams params;
  FitReport report;
};

/// Fits the profile's collectives on `cluster` (group ranks 0..n-1; for imports that ran on several
/// nodes, node i's ranks go to the cluster's node i). Input error when no row can be used.
Expected<FitResult> fit_collective_params(const Profile& profile, const Cluster& cluster, const FitOptions& options = {});

/// Residuals of `params` against every usable row of `profile` (in_fit marks rows `options` selects).
std::vector<RowResidual> collective_residuals(const Profile& profile, const Cluster& cluster,
                                              const CollectiveParams& params, const FitOptions& options = {});

/// The cluster ranks a profile entry's group maps to, or an error saying why it does not fit.
Expected<std::vector<int>> cluster_ranks(const CollEntry& entry, const Cluster& cluster);
/// Nodes a cluster needs so that every entry of the profile fits (at least 1).
int nodes_needed(const Profile& profile, int cluster_gpus_per_node);

/// Median of |x| (0 for an empty list). Even counts: mean of the two middle values.
double median_abs(std::vector<double> xs);

struct GemmCheckRow {
  std::string dtype, label;
  std::int64_t m = 0, n = 0, k = 0;
  double measured_us = 0, predicted_us = 0;
  double error() const { return predicted_us / measured_us - 1.0; }
};
struct GemmCheck {
  int every = 4;
  int shapes = 0;        ///< distinct (dtype, m, n, k) with a time
  int fitted_on = 0;     ///< rows given to the compute model
  std::vector<GemmCheckRow> held_back;
  double median_abs_error = 0;
  std::string hbm_source;  ///< what the roofline floor used
};
/// Holds back every `every`-th GEMM problem per dtype and predicts it from the others (see the top).
/// Input error when the profile has fewer than `every` timed GEMM problems.
Expected<GemmCheck> validate_gemm_interpolation(const Profile& profile, const GpuSpec& gpu, int every = 4);

/// Collective parameters named on a command line: a `scalescope.collective_params/1` file, or a
/// calibration profile (a path, or a built-in name such as "h200x4") fitted on `cluster` (required
/// then; an input error otherwise). `description` receives "fitted from ..." or the file name.
Expected<CollectiveParams> load_collective_calibration(std::string_view name_or_path, const Cluster* cluster,
                                                       std::string* description = nullptr);

}  // namespace scalescope::calib
