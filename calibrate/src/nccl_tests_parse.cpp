// Parser of nccl-tests stdout (see nccl_tests.hpp for the formats it reads).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

#include "scalescope/calibrate/nccl_tests.hpp"

namespace scalescope::calib {

namespace {

constexpr std::string_view kSupported =
    "all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, broadcast_perf, sendrecv_perf";

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split_ws(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

std::optional<double> to_number(const std::string& t) {
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

/// A decimal integer token in [lo, hi], checked before any narrowing (std::stoi would throw on
/// "99999999999"); nullopt otherwise.
std::optional<std::int64_t> to_int(const std::string& t, std::int64_t lo, std::int64_t hi) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || end != t.data() + t.size() || v < lo || v > hi) return std::nullopt;
  return v;
}

/// Longest line read: nccl-tests prints lines of < 300 bytes; the regexes below (libstdc++'s recurse
/// per character) only ever see lines up to this length.
constexpr std::size_t kMaxLineBytes = 4096;
/// Largest rank, device, thread or GPU count accepted from a log.
constexpr std::int64_t kMaxRanks = 1 << 20;

bool is_integer_token(const std::string& t) {
  return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Where the columns of a result line are (indices into the header's names).
struct Layout {
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  struct Group {
    int time = -1, algbw = -1, busbw = -1, wrong = -1;
  };
  std::vector<Group> groups;  ///< [0] out-of-place, [1] in-place
  int needed = 0;             ///< tokens a line must have
};

std::optional<Layout> layout_of(const std::vector<std::string>& cols) {
  Layout l;
  for (int i = 0; i < static_cast<int>(cols.size()); ++i) {
    const std::string& c = cols[static_cast<std::size_t>(i)];
    if (c == "size" || c == "bytes") l.size = i;
    else if (c == "count" || c == "N") l.count = i;
    else if (c == "type") l.type = i;
    else if (c == "redop" || c == "op") l.redop = i;
    else if (c == "root") l.root = i;
    else if (c == "time" || c == "cputime") l.groups.push_back({i, -1, -1, -1});
    else if (!l.groups.empty() && c == "algbw") l.groups.back().algbw = i;
    else if (!l.groups.empty() && c == "busbw") l.groups.back().busbw = i;
    else if (!l.groups.empty() && (c == "#wrong" || c == "error" || c == "res" || c == "wrong")) l.groups.back().wrong = i;
  }
  if (l.size < 0 || l.count < 0 || l.type < 0 || l.groups.empty()) return std::nullopt;
  if (l.groups.size() > 2) l.groups.resize(2);
  // A data line must hold every column read from it: a header that repeats a name ("count ... type" again after
  // the in-place group, as a garbled log can) moves that column past the bandwidth groups.
  l.needed = std::max({l.size, l.count, l.type, l.redop, l.root}) + 1;
  for (const auto& g : l.groups) {
    if (g.algbw < 0 || g.busbw < 0) return std::nullopt;
    l.needed = std::max({l.needed, g.time + 1, g.algbw + 1, g.busbw + 1, g.wrong + 1});
  }
  return l;
}

bool is_column_header(const std::vector<std::string>& t) {
  auto has = [&](std::string_view s) { return std::find(t.begin(), t.end(), s) != t.end(); };
  return (has("size") || has("bytes")) && (has("time") || has("cputime")) && has("busbw");
}

/// Program names in a line: "all_reduce_perf", "alltoall_perf_mpi" -> "alltoall_perf" (last one wins).
/// What the regex `([a-z_]+_perf)(_mpi)?\b` finds, scanned by hand: each maximal run of [a-z_] that ends in
/// "_perf" or "_perf_mpi" at a word boundary. libstdc++'s regex backtracked over every start of a run that did
/// not match ("aaa...a_perf1"), quadratic in the line (a 4 KiB line: ~10^7 steps; 87% of a fuzzer's time).
std::optional<std::string> program_in(const std::string& line) {
  auto lower = [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; };
  auto word = [&](char c) { return lower(c) || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
  std::optional<std::string> found;
  for (std::size_t i = 0; i < line.size();) {
    if (!lower(line[i])) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < line.size() && lower(line[i])) ++i;
    if (i < line.size() && word(line[i])) continue;  // no word boundary after the run
    std::string_view run(line.data() + start, i - start);
    if (run.ends_with("_perf_mpi")) run.remove_suffix(4);
    if (run.ends_with("_perf") && run.size() > 5) found = std::string(run);
  }
  if (found) {
    // "./build/all_reduce_perf" matched from the last '/': strip any leading path-like underscores.
    while (!found->empty() && found->front() == '_') found->erase(0, 1);
  }
  return found;
}

constexpr double kMaxBytes = 1125899906842624.0;  // 2^50
constexpr double kMaxTimeUs = 1e9;
constexpr double kMaxGBps = 1e5;

std::string fmt_limit(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

struct Parser {
  std::string source;
  const NcclTestsOptions& opt;
  std::vector<NcclTestsRun> runs;
  std::optional<NcclTestsRun> cur;
  std::optional<Layout> layout;
  int header_line = 0;
  std::string pending_version, pending_program;
  int pending_program_line = 0;
  /// The last program name (all_reduce_perf, ...) on a non-table line since the last test ended, and its line.
  std::optional<std::pair<int, std::string>> context_program;
  std::set<int> ranks_seen;  ///< ranks of the current test's device lines

  void note_context(int line, const std::string& text) {
    if (text.find("_perf") == std::string::npos) return;  // only lines that can name one
    if (auto p = program_in(text)) context_program = {line, *p};
  }

  [[noreturn]] void fail(int line, const std::string& msg) const {
    throw ErrorException(input_error(source, line > 0 ? "line " + std::to_string(line) : "", msg));
  }

  void start_run(int line, const std::string& body) {
    finish_run();
    NcclTestsRun r;
    r.line = line;
    // Compiled once: libstdc++ builds a regex in microseconds to milliseconds (it was 23% of a parse).
    static const std::regex kNThreadRe(R"(nThread\s+(\d+))");
    static const std::regex kNGpusRe(R"(nGpus\s+(\d+))");
    static const std::regex kMinBytesRe(R"(minBytes\s+(\d+))");
    static const std::regex kMaxBytesRe(R"(maxBytes\s+(\d+))");
    static const std::regex kWarmupRe(R"(warmup iters:\s*(\d+))");
    static const std::regex kItersRe(R"(warmup iters:\s*\d+\s+iters:\s*(\d+))");
    static const std::regex kAggItersRe(R"(agg iters:\s*(\d+))");
    static const std::regex kValidationRe(R"(validation:\s*(\d+))");
    static const std::regex kGraphRe(R"(graph:\s*(\d+))");
    auto grab = [&](const std::regex& pattern) -> std::optional<std::int64_t> {
      std::smatch m;
      if (!std::regex_search(body, m, pattern)) return std::nullopt;
      const auto v = to_int(m[1].str(), 0, std::numeric_limits<int>::max());
      if (!v) fail(line, "expected an integer from 0 to 2147483647 in '" + m[0].str() + "'");
      return v;
    };
    if (auto v = grab(kNThreadRe)) r.nthreads = static_cast<int>(std::min(*v, kMaxRanks));
    if (auto v = grab(kNGpusRe)) r.ngpus = static_cast<int>(std::min(*v, kMaxRanks));
    if (auto v = grab(kMinBytesRe)) r.min_bytes = *v;
    if (auto v = grab(kMaxBytesRe)) r.max_bytes = *v;
    if (auto v = grab(kWarmupRe)) r.warmup_iters = static_cast<int>(*v);
    if (auto v = grab(kItersRe)) r.iters = static_cast<int>(*v);
    if (auto v = grab(kAggItersRe)) r.agg_iters = static_cast<int>(*v);
    if (auto v = grab(kValidationRe)) r.validation = static_cast<int>(*v);
    if (auto v = grab(kGraphRe)) r.graph = static_cast<int>(*v);
    r.version = pending_version;
    if (!pending_program.empty()) {
      r.program = pending_program;
      r.op_from = "'Collective test starting' line " + std::to_string(pending_program_line);
    } else if (context_program) {
      r.program = context_program->second;
      r.op_from = "program name on line " + std::to_string(context_program->first);
    }
    pending_version.clear();
    pending_program.clear();
    context_program.reset();
    ranks_seen.clear();
    cur = r;
    layout.reset();
  }

  void finish_run() {
    if (!cur) return;
    NcclTestsRun r = std::move(*cur);
    cur.reset();
    if (r.rows.empty())
      fail(r.line, "the test starting here has no result rows" +
                       std::string(layout ? " after its column header (line " + std::to_string(header_line) + ")"
                                          : " and no column header") +
                       ": the log is truncated or the test failed");
    if (!r.complete && !opt.allow_truncated)
      fail(r.rows.back().line,
           "the log ends after " + std::to_string(r.rows.size()) + " result row(s) of the test starting at line " +
               std::to_string(r.line) +
               " without nccl-tests' footer ('# Avg bus bandwidth'): it is truncated or the test failed "
               "(--allow-truncated keeps the rows)");
    runs.push_back(std::move(r));
  }

  void rank_line(int line, const std::string& raw) {
    static const std::regex re(
        R"(^#\s*Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+\[([^\]]*)\]\s*(.*)$)");
    std::smatch m;
    if (!std::regex_match(raw, m, re)) fail(line, "unreadable device line: " + raw);
    auto integer = [&](int group, std::int64_t hi, const char* what) {
      const auto v = to_int(m[group].str(), 0, hi);
      if (!v) fail(line, std::string("expected a ") + what + " from 0 to " + std::to_string(hi) + ", got '" + m[group].str() + "'");
      return *v;
    };
    NcclTestsRank k;
    k.rank = static_cast<int>(integer(1, kMaxRanks - 1, "rank"));
    k.group = m[2].matched ? static_cast<int>(integer(2, kMaxRanks - 1, "group")) : -1;
    k.pid = integer(3, std::numeric_limits<std::int64_t>::max(), "pid");
    k.host = m[4].str();
    k.device = static_cast<int>(integer(5, kMaxRanks - 1, "device"));
    k.bus_id = m[6].str();
    k.name = trim(m[7].str());
    if (!ranks_seen.insert(k.rank).second)
        fail(line, "rank " + std::to_string(k.rank) +
                       " is listed twice: each process ran its own test (an nccl-tests binary built without MPI=1 "
                       "started by mpirun?); such a log does not measure one communicator");
    cur->ranks.push_back(std::move(k));
  }

  void data_line(int line, const std::string& raw, std::vector<std::string> t) {
    const Layout& l = *layout;
    const int columns = static_cast<int>(cur->columns.size());
    // Some older tests printed an empty redop (no token) under a "redop" header.
    // (Found by the fuzzer: a header whose redop is its last column made this test read one token past the row.)
    if (l.redop >= 0 && static_cast<int>(t.size()) == columns - 1 && t.size() > 3 &&
        static_cast<std::size_t>(l.redop) < t.size() && to_number(t[static_cast<std::size_t>(l.redop)]))
      t.insert(t.begin() + l.redop, "none");
    if (static_cast<int>(t.size()) < l.needed)
      fail(line, "expected at least " + std::to_string(l.needed) + " columns as in the header on line " +
                     std::to_string(header_line) + ", got " + std::to_string(t.size()) + ": '" + trim(raw) + "'");
    // Plausible ranges (docs/nccl-tests-import.md): sizes up to 2^50 bytes, times up to 10^9 us per call,
    // bandwidths up to 10^5 GB/s (100x the fastest NVLink); beyond them the log is not a real measurement.
    auto number = [&](int idx, const char* what, double max) {
      const std::string& s = t[static_cast<std::size_t>(idx)];
      auto v = to_number(s);
      if (!v || *v < 0) fail(line, std::string("expected a non-negative number for ") + what + ", got '" + s + "'");
      if (*v > max) fail(line, std::string("expected ") + what + " at most " + fmt_limit(max) + ", got '" + s + "'");
      return *v;
    };
    auto wrong = [&](int idx) -> std::optional<double> {
      if (idx < 0) return std::nullopt;
      const std::string& s = t[static_cast<std::size_t>(idx)];
      if (s == "N/A") return std::nullopt;
      auto v = to_number(s);
      if (!v || *v < 0 || *v > 1e18) fail(line, "expected a count from 0 to 1e18 or N/A in the #wrong/error column, got '" + s + "'");
      return *v;
    };
    NcclTestsRow r;
    r.line = line;
    r.bytes = number(l.size, "size", kMaxBytes);
    r.count = number(l.count, "count", kMaxBytes);
    r.type = t[static_cast<std::size_t>(l.type)];
    if (l.redop >= 0) r.redop = t[static_cast<std::size_t>(l.redop)];
    if (l.root >= 0) {
      const std::string& root = t[static_cast<std::size_t>(l.root)];
      auto v = root == "-1" ? std::optional<std::int64_t>(-1) : to_int(root, 0, kMaxRanks - 1);
      if (!v) fail(line, "expected a root rank from -1 to " + std::to_string(kMaxRanks - 1) + ", got '" + root + "'");
      r.root = static_cast<int>(*v);
    }
    const auto& g0 = l.groups[0];
    r.time_us = number(g0.time, "time", kMaxTimeUs);
    r.algbw_GBps = number(g0.algbw, "algbw", kMaxGBps);
    r.busbw_GBps = number(g0.busbw, "busbw", kMaxGBps);
    r.wrong = wrong(g0.wrong);
    if (l.groups.size() > 1) {
      const auto& g1 = l.groups[1];
      r.has_in_place = true;
      r.ip_time_us = number(g1.time, "in-place time", kMaxTimeUs);
      r.ip_algbw_GBps = number(g1.algbw, "in-place algbw", kMaxGBps);
      r.ip_busbw_GBps = number(g1.busbw, "in-place busbw", kMaxGBps);
      r.ip_wrong = wrong(g1.wrong);
    }
    cur->rows.push_back(r);
  }

  void comment_line(int line, const std::string& raw) {
    const std::string body = trim(std::string_view(raw).substr(raw.find('#') + 1));
    if (body.rfind("nccl-tests version", 0) == 0) {
      const auto t = split_ws(body);
      pending_version = t.size() > 2 ? t[2] : "";
    } else if (body.rfind("Collective test starting:", 0) == 0) {
      pending_program = trim(body.substr(std::string("Collective test starting:").size()));
      if (pending_program.ends_with("_mpi")) pending_program.resize(pending_program.size() - 4);
      pending_program_line = line;
    } else if (body.rfind("nThread", 0) == 0) {
      start_run(line, body);
    } else if (body.rfind("Rank", 0) == 0 && cur && !layout) {
      rank_line(line, raw);
    } else if (body.rfind("Out of bounds values", 0) == 0 && cur) {
      const auto colon = body.find(':');
      const auto t = split_ws(body.substr(colon + 1));
      if (!t.empty()) {
        if (auto v = to_int(t[0], 0, std::numeric_limits<int>::max())) cur->out_of_bounds = static_cast<int>(*v);
      }
    } else if (body.rfind("Avg bus bandwidth", 0) == 0 && cur) {
      const auto t = split_ws(body.substr(body.find(':') + 1));
      if (t.empty() || !to_number(t[0]) || *to_number(t[0]) < 0 || *to_number(t[0]) > kMaxGBps)
        fail(line, "unreadable average bus bandwidth (expected 0 to 1e5 GB/s): " + raw);
      cur->avg_busbw_GBps = *to_number(t[0]);
      cur->complete = true;
      layout.reset();
      context_program.reset();
    } else {
      const auto t = split_ws(body);
      if (!is_column_header(t)) {
        if ((!cur || cur->complete) && body.rfind("Collective test concluded", 0) != 0) note_context(line, body);
      } else {
        if (!cur) fail(line, "column header without a preceding '# nThread ...' line (is the start of the log missing?)");
        layout = layout_of(t);
        if (!layout) fail(line, "unrecognised column header: " + raw);
        cur->columns = t;
        header_line = line;
      }
    }
  }

  void other_line(int line, const std::string& raw) {
    const std::string s = trim(raw);
    if (cur && layout) {
      auto t = split_ws(s);
      if (!t.empty() && is_integer_token(t[0])) return data_line(line, raw, std::move(t));
    }
    if (cur && (s.find("Test failure") != std::string::npos || s.find("Test CUDA failure") != std::string::npos ||
                s.find("Test NCCL failure") != std::string::npos))
      fail(line, "nccl-tests reported a failure: '" + s + "'");
    if (!cur || cur->complete) note_context(line, s);
  }

  void parse(std::string_view text) {
    int line = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
      const std::size_t nl = text.find('\n', pos);
      const std::size_t len = (nl == std::string_view::npos ? text.size() : nl) - pos;
      if (len > kMaxLineBytes)
        fail(line + 1, "line is " + std::to_string(len) + " bytes long; nccl-tests lines are short (at most " +
                           std::to_string(kMaxLineBytes) + " bytes are read): is this an nccl-tests log?");
      std::string raw(text.substr(pos, len));
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
      // Output tags of launchers: Open MPI --tag-output "[1,0]<stdout>:", srun --label " 0: ".
      static const std::regex tag(R"(^(\[\d+,\d+\]<std(out|err)>:|\s*\d+: ))");
      std::smatch m;
      const auto lead = raw.find_first_not_of(' ');
      const bool may_be_tagged = lead != std::string::npos && (raw[lead] == '[' || (raw[lead] >= '0' && raw[lead] <= '9'));
      if (may_be_tagged && std::regex_search(raw, m, tag)) raw = m.suffix().str();
      ++line;
      const std::string s = trim(raw);
      if (!s.empty() && s[0] == '#') {
        comment_line(line, s);
      } else if (!s.empty()) {
        other_line(line, raw);
      }
      if (nl == std::string_view::npos) break;
      pos = nl + 1;
    }
    finish_run();
    if (runs.empty())
      fail(0, "no nccl-tests result table found (expected a '# nThread ...' line, device lines, a column header "
              "and result rows)");
  }
};

std::optional<std::string> op_from_file_name(const std::string& source) {
  const std::string stem = std::filesystem::path(source).filename().string();
  if (auto p = program_in(stem)) return op_of_nccl_tests_program(*p);
  for (const char* op : {"reduce_scatter", "all_reduce", "all_gather", "alltoall", "broadcast", "sendrecv"})
    if (stem.find(op) != std::string::npos) return std::string(op);
  return std::nullopt;
}

/// nccl-tests busbw factor for a profile op name (all sizes, as in gpu_plan.hpp).
double factor_of(const std::string& op, int n) {
  auto o = parse_coll_op(op);
  return o ? busbw_factor(*o, n) : 1.0;
}

}  // namespace

std::optional<std::string> op_of_nccl_tests_program(std::string_view program) {
  std::string p(program);
  if (p.ends_with("_mpi")) p.resize(p.size() - 4);
  if (!p.ends_with("_perf")) return std::nullopt;
  p.resize(p.size() - 5);
  for (const char* op : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv"})
    if (p == op) return std::string(op);
  return std::nullopt;
}

Expected<std::vector<NcclTestsRun>> parse_nccl_tests_log(std::string_view text, std::string source,
                                                         const NcclTestsOptions& options) {
  return catch_errors([&]() -> std::vector<NcclTestsRun> {
    Parser p{source, options, {}, {}, {}, 0, {}, {}, 0, {}, {}};
    p.parse(text);
    for (auto& r : p.runs) {
      if (options.op) {
        if (!parse_coll_op(*options.op))
          throw ErrorException(input_error("", "--op", "expected auto or one of " + coll_op_choices() + ", got '" +
                                                           *options.op + "'"));
        r.op = *options.op;
        r.op_from = "--op";
      } else if (!r.program.empty()) {
        auto op = op_of_nccl_tests_program(r.program);
        if (!op)
          p.fail(r.line, "the test was run by " + r.program + ", which is not supported (supported: " +
                             std::string(kSupported) + ")");
        r.op = *op;
      } else if (auto op = op_from_file_name(source)) {
        r.op = *op;
        r.op_from = "the file name";
      } else {
        p.fail(r.line, "cannot tell which collective this test ran: no 'Collective test starting' line, no program "
                       "name (" + std::string(kSupported) + ") on the lines before it, none in the file name; pass --op");
      }
      if (r.ranks.empty())
        p.fail(r.line, "no device lines ('#  Rank  0 Group  0 Pid ... device ...') follow this line, so the number "
                       "of ranks is unknown");
      const int n = r.nranks();
      if (n < 2) p.fail(r.line, "the test ran on " + std::to_string(n) + " rank(s); collectives need at least 2");
      // The printed busbw/algbw ratio must be the op's nccl-tests factor for n ranks.
      std::vector<double> ratios;
      for (const auto& row : r.rows)
        if (row.algbw_GBps >= 1.0) ratios.push_back(row.busbw_GBps / row.algbw_GBps);
      if (!ratios.empty()) {
        std::sort(ratios.begin(), ratios.end());
        const double ratio = ratios[ratios.size() / 2];
        const double want = factor_of(r.op, n);
        if (std::fabs(ratio - want) > 0.02 * want + 0.01)
          p.fail(r.line, "busbw/algbw is " + std::to_string(ratio).substr(0, 5) + " in this test, but " + r.op +
                             " on " + std::to_string(n) + " ranks has nccl-tests factor " +
                             std::to_string(want).substr(0, 5) + " (op taken from " + r.op_from +
                             "): wrong --op, or device lines missing?");
      }
    }
    return p.runs;
  });
}

}  // namespace scalescope::calib
