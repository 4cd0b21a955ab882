// Comma-separated tables with named columns (csv.hpp).
#include "scalescope/validate/csv.hpp"

#include <charconv>
#include <cmath>
#include <sstream>

#include "scalescope/sim/file_io.hpp"

namespace scalescope::validate {

namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();
  return cells;
}

}  // namespace

Expected<CsvTable> read_csv(const std::filesystem::path& file) {
  // Regular files only (a FIFO or device is refused without blocking), at most 64 MiB (the tables are a few KiB).
  auto text = read_input_file(file, std::uint64_t{64} << 20, "CSV table");
  if (!text) return text.error();
  std::istringstream in(std::move(text).value());
  CsvTable t;
  t.file = file.string();
  std::string line;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (n == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 byte-order mark
    if (line.empty()) continue;
    std::vector<std::string> cells = split(line);
    if (t.header.empty()) {
      t.header = std::move(cells);
      continue;
    }
    if (cells.size() != t.header.size()) {
      return input_error(t.file, "line " + std::to_string(n),
                         "expected " + std::to_string(t.header.size()) + " cells, got " + std::to_string(cells.size()));
    }
    t.rows.push_back(std::move(cells));
    t.lines.push_back(n);
  }
  if (t.header.empty()) return input_error(t.file, "", "expected a header line naming the columns");
  return t;
}

void CsvRow::fail(std::string_view column, const std::string& expected) const {
  throw ErrorException(input_error(t_.file, "line " + std::to_string(t_.lines[i_]) + ", column '" + std::string(column) + "'",
                                   expected));
}

const std::string& CsvRow::text(std::string_view column) const {
  for (std::size_t c = 0; c < t_.header.size(); ++c) {
    if (t_.header[c] == column) return t_.rows[i_][c];
  }
  throw ErrorException(input_error(t_.file, "", "missing column '" + std::string(column) + "'"));
}

int CsvRow::positive_int(std::string_view column) const {
  const int v = nonnegative_int(column);
  if (v == 0) fail(column, "expected a positive integer, got 0");
  return v;
}

int CsvRow::nonnegative_int(std::string_view column) const {
  const std::string& s = text(column);
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0) fail(column, "expected a non-negative integer, got '" + s + "'");
  return v;
}

double CsvRow::positive_number(std::string_view column) const {
  const std::string& s = text(column);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !(v > 0) || !std::isfinite(v)) {
    fail(column, "expected a positive number, got '" + s + "'");
  }
  return v;
}

}  // namespace scalescope::validate
