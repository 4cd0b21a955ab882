// Parsers for nvidia-smi text output (topology matrix, NVLink status, CSV queries, PCI bus ids).
#include "scalescope/calibrate/smi_text.hpp"

#include <cctype>
#include <cstdlib>

namespace scalescope::smi_text {

namespace {

std::vector<std::string> split_ws(std::string_view line) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    std::size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) out.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find('\n', start);
    std::string_view line =
        text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool prefix_digits(std::string_view tok, std::string_view prefix) {
  if (tok.size() <= prefix.size() || tok.substr(0, prefix.size()) != prefix) return false;
  for (char c : tok.substr(prefix.size()))
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool is_device_column(std::string_view tok) {
  return prefix_digits(tok, "GPU") || prefix_digits(tok, "NIC") || tok.substr(0, 3) == "mlx";
}

/// Parses a non-negative integer at the start of s; -1 if none, or if it exceeds 2^20 (no device index does; a
/// longer run of digits overflowed the int, found by fuzz/smi_text.cpp).
int leading_int(std::string_view s) {
  constexpr int kMax = 1 << 20;
  int v = 0;
  std::size_t i = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    v = v * 10 + (s[i] - '0');
    if (v > kMax) return -1;
  }
  return i == 0 ? -1 : v;
}

}  // namespace

std::string strip_ansi(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      std::size_t j = i + 2;
      while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) ++j;
      i = j;  // skip the final byte too
      continue;
    }
    out += text[i];
  }
  return out;
}

std::optional<std::string> TopoMatrix::link(std::string_view from, std::string_view to) const {
  std::size_t r = rows.size(), c = columns.size();
  for (std::size_t i = 0; i < rows.size(); ++i)
    if (rows[i] == from) r = i;
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == to) c = i;
  if (r == rows.size() || c == columns.size()) return std::nullopt;
  return cells[r][c];
}

std::optional<TopoMatrix> parse_topo_matrix(std::string_view text) {
  const std::string clean = strip_ansi(text);
  TopoMatrix m;
  bool header_found = false;
  for (std::string_view line : split_lines(clean)) {
    const auto toks = split_ws(line);
    if (toks.empty()) continue;
    if (!header_found) {
      if (!prefix_digits(toks[0], "GPU")) continue;
      for (const auto& t : toks) {
        if (!is_device_column(t)) break;
        m.columns.push_back(t);
      }
      header_found = true;
      continue;
    }
    if (toks[0] == "Legend:") break;
    bool is_row = false;
    for (const auto& c : m.columns) is_row = is_row || c == toks[0];
    if (!is_row || toks.size() < m.columns.size() + 1) continue;
    m.rows.push_back(toks[0]);
    m.cells.emplace_back(toks.begin() + 1,
                         toks.begin() + 1 + static_cast<std::ptrdiff_t>(m.columns.size()));
    const std::size_t after = m.columns.size() + 1;
    m.cpu_affinity.push_back(toks.size() > after ? toks[after] : std::string());
    m.numa_affinity.push_back(toks.size() > after + 1 ? toks[after + 1] : std::string());
  }
  if (!header_found) return std::nullopt;
  return m;
}

std::vector<NvlinkGpu> parse_nvlink_status(std::string_view text) {
  std::vector<NvlinkGpu> out;
  const std::string clean = strip_ansi(text);
  for (std::string_view raw : split_lines(clean)) {
    const std::string_view line = trim(raw);
    if (line.substr(0, 4) == "GPU ") {
      const int idx = leading_int(line.substr(4));
      if (idx < 0) continue;
      out.push_back(NvlinkGpu{});
      out.back().gpu = idx;
      continue;
    }
    if (line.substr(0, 5) != "Link " || out.empty()) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string value(trim(line.substr(colon + 1)));
    if (value.empty() || value[0] == '<') {
      ++out.back().inactive_links;
      continue;
    }
    char* end = nullptr;
    const double speed = std::strtod(value.c_str(), &end);
    if (end == value.c_str()) continue;
    if (std::string_view(end).find("GB/s") == std::string_view::npos) continue;
    ++out.back().active_links;
    out.back().link_GBps.push_back(speed);
  }
  return out;
}

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    out.emplace_back(trim(line.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string normalize_pci_bus_id(std::string_view id) {
  id = trim(id);
  std::string out;
  const std::size_t colon = id.find(':');
  if (colon == std::string_view::npos) {
    out = std::string(id);
  } else {
    std::string domain(id.substr(0, colon));
    if (domain.size() > 4) domain = domain.substr(domain.size() - 4);
    while (domain.size() < 4) domain.insert(domain.begin(), '0');
    out = domain + std::string(id.substr(colon));
  }
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace scalescope::smi_text
