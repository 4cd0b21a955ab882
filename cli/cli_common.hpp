// Shared pieces of the scalescope subcommands: output formats, tables, error reporting.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "scalescope/sim/error.hpp"

namespace scalescope::cli {

enum class Format { text, json, csv };

/// Adds `--format text|json|csv` (default text) to a subcommand.
void add_format_option(CLI::App* sub, Format& format);

/// A table of strings printed aligned (text) or as RFC 4180 CSV.
struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  /// Columns whose cells are right-aligned in text output (numbers).
  std::vector<bool> right_align;

  std::string to_text() const;
  std::string to_csv() const;
};

/// Prints "scalescope CMD: error: <file: path: message>" on stderr and returns the exit code
/// (2 for bad input, 1 for runtime failures).
int report(const std::string& command, const Error& error);

/// Writes data to stdout (text/CSV/JSON documents always end in a newline).
void print_stdout(const std::string& data);

/// Where subcommand callbacks leave their exit status.
struct Context {
  int exit_code = 0;
};

// One registration function per subcommand; each lives in cmd_<name>.cpp.
// (add: void register_<name>(CLI::App& app, Context& ctx);)
void register_collective(CLI::App& app, Context& ctx);
void register_simulate(CLI::App& app, Context& ctx);
void register_validate(CLI::App& app, Context& ctx);
void register_validate_planner(CLI::App& app, Context& ctx);  // after register_validate
void register_import(CLI::App& app, Context& ctx);
void register_calibrate(CLI::App& app, Context& ctx);
void register_plan(CLI::App& app, Context& ctx);
void register_scaling(CLI::App& app, Context& ctx);
void register_capacity(CLI::App& app, Context& ctx);
void register_sweep(CLI::App& app, Context& ctx);

}  // namespace scalescope::cli
