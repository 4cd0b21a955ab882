// Running a sweep: every point of a SweepSpec planned (mode "plan": `scalescope plan` with the point's
// constraint) or simulated with a fixed plan (mode "simulate": `scalescope simulate`), each through the same
// library call as the CLI command, as result rows. One process (local threads) or the ranks of an MPI job
// (work_split.hpp); with an output file the rows are journalled as they finish and resumed after an
// interruption (sweep_output.hpp). The rows and the output do not depend on the thread or rank count.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "scalescope/planner/simulate_run.hpp"
#include "scalescope/planner/sweep_spec.hpp"
#include "scalescope/planner/work_split.hpp"

namespace scalescope::planner {

/// Loads a software stack by name (the CLI's --framework loader): called once per distinct stack.
using StackLoader = std::function<Expected<StackApply>(const std::string& stack)>;
/// The loaded stacks by name.
using StackTable = std::map<std::string, StackApply>;

/// The columns of a row, in CSV order. point, model, cluster, gpus, gbs, calibration, stack, fixed (the
/// constraint or plan template), rank (plan mode: 1 = best), status (ok | no_plan | error), plan (text),
/// tp, pp, dp, zero, mbs, schedule, vpp, recompute, sp, step_time_s (analytical), flow_step_time_s,
/// tokens_per_s, mfu, memory_GiB, fits_memory, limiter, limiter_share, message.
const std::vector<std::string>& sweep_columns();

/// The rows of one point (plan mode: one per ranked plan, up to options.top; simulate mode: one). A point
/// that cannot run gives one row with status "no_plan" or "error" and the reason in "message".
std::vector<Json> evaluate_point(const SweepSpec& spec, std::size_t point, const StackTable& stacks);

/// Loads every distinct model, cluster + calibration and stack once, before any point runs; an input
/// error names the spec file and the JSON path of the value. Returns the loaded stacks.
Expected<StackTable> check_sweep_inputs(const SweepSpec& spec, const StackLoader& load_stack);

struct SweepRunOptions {
  std::string output;  ///< .csv or .json; empty: rows only (no journal)
  bool restart = false;  ///< discard a journal left by an interrupted run instead of resuming it
  int threads = 1;       ///< local worker threads of this process
  /// Rank 0, after each finished point: (points done including resumed ones, points in all).
  std::function<void(std::size_t, std::size_t)> progress;
  /// When it reads true, no further point starts and run_sweep returns "sweep cancelled" (resumable).
  const std::atomic<bool>* cancel = nullptr;
};

struct SweepResult {
  std::vector<Json> rows;  ///< rank 0: every row in point order; other ranks: none
  std::size_t points = 0, resumed = 0, computed = 0;
  bool worker = false;  ///< this process was a rank other than 0
};

/// Runs the sweep on this process (transport null or of one rank) or as one rank of an MPI job: every rank
/// calls it with the same spec; rank 0 reads and writes the files.
Expected<SweepResult> run_sweep(const SweepSpec& spec, const SweepRunOptions& options, const StackLoader& load_stack,
                                Transport* transport = nullptr);

}  // namespace scalescope::planner
