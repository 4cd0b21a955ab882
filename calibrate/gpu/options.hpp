// Command-line options of scalescope-calibrate (CLI11).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "context.hpp"

namespace scalescope::gpu {

/// Text options that need parsing after CLI11 (byte sizes).
struct RawOptions {
  std::string min_bytes = "8";
  std::string max_bytes = "1G";
  std::string gemm_grid = "default";
};

/// Declares every option on app, writing into opt and raw.
void add_options(CLI::App& app, Options& opt, RawOptions& raw);

/// Applies --quick defaults and parses/validates what CLI11 cannot; returns "" or the problem.
std::string finish_options(const CLI::App& app, Options& opt, const RawOptions& raw);

}  // namespace scalescope::gpu
