// A sweep's journal (OUT.partial, resumable) and its output file (CSV or JSON, written atomically).
#include "scalescope/planner/sweep_output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "scalescope/planner/sweep.hpp"

namespace scalescope::planner {

namespace {

constexpr const char* kJournal = "scalescope.sweep-journal/1";

std::string csv_cell(const Json& v) {
  if (v.is_null()) return {};
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (!v.is_string()) return v.dump();
  const std::string s = v.get<std::string>();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

}  // namespace

Expected<SweepFormat> sweep_format_for(const std::filesystem::path& output) {
  const std::string ext = output.extension().string();
  if (ext == ".csv") return SweepFormat::csv;
  if (ext == ".json") return SweepFormat::json;
  if (ext == ".parquet")
    return input_error("", "-o", "Parquet is not written by the CLI (no Arrow C++ library in Debian 12): write .csv "
                       "and convert, or use the Python package: scalescope.sweep(spec, output='" + output.string() +
                       "') (needs pyarrow)");
  return input_error("", "-o", "expected a .csv or .json output file, got '" + output.string() + "'");
}

std::string render_sweep(const SweepSpec& spec, const std::map<std::size_t, std::vector<Json>>& rows,
                         SweepFormat format) {
  const auto& cols = sweep_columns();
  if (format == SweepFormat::csv) {
    std::string out;
    for (std::size_t c = 0; c < cols.size(); ++c) out += (c ? "," : "") + cols[c];
    out += "\n";
    for (const auto& [point, rs] : rows)
      for (const auto& r : rs) {
        for (std::size_t c = 0; c < cols.size(); ++c) out += (c ? "," : "") + csv_cell(r.at(cols[c]));
        out += "\n";
      }
    return out;
  }
  std::string out = "{\n  \"format\": \"scalescope.sweep-results/1\",\n  \"mode\": \"" +
                    std::string(to_string(spec.mode)) + "\",\n  \"spec_fingerprint\": \"" + spec.fingerprint +
                    "\",\n  \"points\": " + std::to_string(spec.points.size()) + ",\n  \"columns\": " +
                    Json(cols).dump() + ",\n  \"rows\": [";
  bool first = true;
  for (const auto& [point, rs] : rows)
    for (const auto& r : rs) {
      out += (first ? "\n    " : ",\n    ") + r.dump();
      first = false;
    }
  return out + (first ? "]\n}\n" : "\n  ]\n}\n");
}

SweepJournal::SweepJournal(SweepJournal&& o) noexcept
    : output_(std::move(o.output_)), path_(std::move(o.path_)), file_(o.file_), done_(std::move(o.done_)) {
  o.file_ = nullptr;
}

SweepJournal::~SweepJournal() {
  if (file_ != nullptr) std::fclose(file_);
}

Expected<SweepJournal> SweepJournal::open(const std::filesystem::path& output, const SweepSpec& spec, bool restart) {
  SweepJournal j;
  j.output_ = output;
  j.path_ = output.string() + ".partial";
  const std::string name = j.path_.string();
  // A regular file or none: O_NOFOLLOW refuses a planted symbolic link (ELOOP), O_NONBLOCK keeps a FIFO from
  // blocking the open, and fstat() refuses whatever else is not a regular file.
  const int fd = ::open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
  if (fd < 0) {
    const int e = errno;
    return input_error(name, "", e == ELOOP ? "is a symbolic link; the sweep journal must be a regular file or absent"
                                            : std::string("cannot open the sweep journal for writing: ") + std::strerror(e));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return input_error(name, "", "is not a regular file; the sweep journal must be a regular file or absent");
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return input_error(name, "", "another sweep is writing this output (the journal is locked)");
  }
  j.file_ = ::fdopen(fd, "r+");
  if (j.file_ == nullptr) {
    ::close(fd);
    return runtime_error(name + ": cannot open the sweep journal");
  }
  const Json header = {{"format", kJournal}, {"fingerprint", spec.fingerprint}, {"points", spec.points.size()}};
  std::string text;
  if (!restart) {  // the journal, read through the locked descriptor, at most kMaxInputFileBytes
    if (static_cast<std::uint64_t>(st.st_size) > kMaxInputFileBytes)
      return input_error(name, "", "is " + std::to_string(st.st_size) + " bytes; a journal larger than " +
                                       std::to_string(kMaxInputFileBytes >> 20) + " MiB is refused (bounded memory); "
                                       "run with --restart or split the sweep");
    text.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = ::pread(fd, text.data() + got, text.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return runtime_error(name + ": cannot read the journal: " + std::strerror(errno));
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    text.resize(got);
  }
  std::size_t keep = 0;  // bytes of whole, valid lines
  if (!text.empty()) {
    std::size_t line_no = 0;
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t nl = text.find('\n', at);
      if (nl == std::string::npos) break;  // torn last line: dropped
      ++line_no;
      const std::string line = text.substr(at, nl - at);
      const std::string where = "line " + std::to_string(line_no);
      // The project's JSON reader: nesting checked by a linear pre-scan before parsing, numbers a double holds.
      auto parsed = parse_json_text(line, name);
      if (!parsed) {
        if (nl + 1 == text.size()) break;  // the last line torn
        return input_error(name, where, "not a JSON line (" + parsed.error().message +
                                            "); delete the journal or run with --restart");
      }
      const Json v = std::move(parsed).value();
      if (line_no == 1) {
        if (v != header) {
          const bool has_fp = v.is_object() && v.contains("fingerprint") && v["fingerprint"].is_string();
          return input_error(name, where, "the journal belongs to another sweep spec or version (fingerprint " +
                                              (has_fp ? v["fingerprint"].get<std::string>() : std::string("?")) +
                                              ", this spec " + spec.fingerprint + "); delete it or run with --restart");
        }
      } else {
        if (!v.is_object() || !v.contains("point") || !v["point"].is_number_unsigned() || !v.contains("rows") ||
            !v["rows"].is_array() || v["point"].get<std::size_t>() >= spec.points.size())
          return input_error(name, where, "expected {\"point\": index, \"rows\": [...]}; delete the journal or run with --restart");
        j.done_[v["point"].get<std::size_t>()] = v["rows"].get<std::vector<Json>>();
      }
      keep = nl + 1;
      at = nl + 1;
    }
  }
  if (keep == 0) {  // new journal (or one without a whole header line)
    if (::ftruncate(fd, 0) != 0) return runtime_error(name + ": cannot truncate the journal");
    const std::string line = header.dump() + "\n";
    if (std::fwrite(line.data(), 1, line.size(), j.file_) != line.size() || std::fflush(j.file_) != 0)
      return runtime_error(name + ": cannot write the journal");
  } else {
    if (keep < text.size() && ::ftruncate(fd, static_cast<off_t>(keep)) != 0)
      return runtime_error(name + ": cannot drop the torn last line");
    std::fseek(j.file_, 0, SEEK_END);
  }
  return j;
}

Expected<bool> SweepJournal::append(std::size_t point, const std::vector<Json>& rows) {
  const std::string line = Json{{"point", point}, {"rows", rows}}.dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0 ||
      ::fsync(::fileno(file_)) != 0)
    return runtime_error(path_.string() + ": cannot append to the journal (disk full?)");
  done_[point] = rows;
  return true;
}

Expected<bool> SweepJournal::finish(const SweepSpec& spec, SweepFormat format) {
  if (auto ok = write_file_atomic(output_, render_sweep(spec, done_, format)); !ok) return ok.error();
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  return true;
}

}  // namespace scalescope::planner
