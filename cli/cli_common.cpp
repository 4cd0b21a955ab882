// Output formats, tables and error reporting shared by the subcommands.
#include "cli_common.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>

namespace scalescope::cli {

void add_format_option(CLI::App* sub, Format& format) {
  static const std::map<std::string, Format> kFormats{
      {"text", Format::text}, {"json", Format::json}, {"csv", Format::csv}};
  sub->add_option("--format", format, "Output format: text, json or csv")
      ->transform(CLI::CheckedTransformer(kFormats, CLI::ignore_case))
      ->default_str("text");
}

std::string Table::to_text() const {
  std::vector<std::size_t> width(header.size(), 0);
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto& r : rows)
    for (std::size_t c = 0; c < r.size() && c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size() && c < width.size(); ++c) {
      const bool right = c < right_align.size() && right_align[c];
      const std::string pad(width[c] - cells[c].size(), ' ');
      if (c) out += "  ";
      out += right ? pad + cells[c] : cells[c] + (c + 1 == cells.size() ? "" : pad);
    }
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

static std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += (ch == '"') ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

std::string Table::to_csv() const {
  auto line = [](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) out += (c ? "," : "") + csv_cell(cells[c]);
    return out + "\n";
  };
  std::string out = line(header);
  for (const auto& r : rows) out += line(r);
  return out;
}

int report(const std::string& command, const Error& error) {
  std::cerr << "scalescope " << command << ": error: " << error.str() << "\n";
  return error.exit_code();
}

void print_stdout(const std::string& data) {
  std::fwrite(data.data(), 1, data.size(), stdout);
  if (!data.empty() && data.back() != '\n') std::fputc('\n', stdout);
  std::fflush(stdout);
}

}  // namespace scalescope::cli
