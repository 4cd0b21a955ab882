// Comma-separated tables of published and measured runs: a header line naming the columns, one row per
// line (no quoting: cells hold no commas), read with errors that name the file, line and column.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "scalescope/sim/error.hpp"

namespace scalescope::validate {

struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> lines;  ///< line number of each row (1-based, for errors)
};

/// Reads a table; empty lines are skipped; a row with a different cell count is an error.
Expected<CsvTable> read_csv(const std::filesystem::path& file);

/// Typed access to one row by column name; failures throw ErrorException (use inside catch_errors).
class CsvRow {
 public:
  CsvRow(const CsvTable& t, std::size_t index) : t_(t), i_(index) {}
  const std::string& text(std::string_view column) const;
  int positive_int(std::string_view column) const;
  int nonnegative_int(std::string_view column) const;
  double positive_number(std::string_view column) const;

 private:
  [[noreturn]] void fail(std::string_view column, const std::string& expected) const;
  const CsvTable& t_;
  std::size_t i_;
};

}  // namespace scalescope::validate
