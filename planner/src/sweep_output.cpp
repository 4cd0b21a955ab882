// A sweep's journal (OUT.partial, resumable) and its output file (CSV, JSON or Parquet, written atomically).
#include "scalescope/planner/sweep_output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "scalescope/planner/parquet_writer.hpp"
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

/// The Parquet schema of a row, column by column in sweep_columns() order: what sweep.cpp stores in each (an
/// integer, a rounded real, a text or a boolean), OPTIONAL where some rows hold null (failed points, columns of
/// the other mode). point, model, cluster, gpus, gbs, calibration, stack, fixed and status are always set.
const std::vector<ParquetColumn>& sweep_parquet_columns() {
  using T = ParquetType;
  static const std::vector<ParquetColumn> kColumns = [] {
    const std::vector<ParquetColumn> c{
        {"point", T::int64, false},          {"model", T::string, false},        {"cluster", T::string, false},
        {"gpus", T::int64, false},           {"gbs", T::int64, false},           {"calibration", T::string, false},
        {"stack", T::string, false},         {"fixed", T::string, false},        {"rank", T::int64, true},
        {"status", T::string, false},        {"plan", T::string, true},          {"tp", T::int64, true},
        {"cp", T::int64, true},              {"pp", T::int64, true},             {"dp", T::int64, true},
        {"zero", T::int64, true},            {"mbs", T::int64, true},            {"schedule", T::string, true},
        {"vpp", T::int64, true},             {"recompute", T::string, true},     {"sp", T::boolean, true},
        {"step_time_s", T::real, true},      {"flow_step_time_s", T::real, true}, {"tokens_per_s", T::real, true},
        {"mfu", T::real, true},              {"memory_GiB", T::real, true},      {"fits_memory", T::boolean, true},
        {"limiter", T::string, true},        {"limiter_share", T::real, true},   {"message", T::string, true}};
    assert(c.size() == sweep_columns().size() && "sweep_parquet_columns: one entry per sweep column");
    for (std::size_t i = 0; i < c.size(); ++i)
      assert(c[i].name == sweep_columns()[i] && "sweep_parquet_columns: in sweep_columns() order");
    return c;
  }();
  return kColumns;
}

}  // namespace

Expected<SweepFormat> sweep_format_for(const std::filesystem::path& output) {
  const std::string ext = output.extension().string();
  if (ext == ".csv") return SweepFormat::csv;
  if (ext == ".json") return SweepFormat::json;
  if (ext == ".parquet") return SweepFormat::parquet;
  return input_error("", "-o", "expected a .csv, .json or .parquet output file, got '" + output.string() + "'");
}

Expected<std::string> render_sweep(const SweepSpec& spec, const std::map<std::size_t, std::vector<Json>>& rows,
                                   SweepFormat format) {
  const auto& cols = sweep_columns();
  if (format == SweepFormat::parquet) {
    std::vector<Json> all;
    for (const auto& [point, rs] : rows) all.insert(all.end(), rs.begin(), rs.end());
    return parquet_file(sweep_parquet_columns(), all);
  }
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
  auto bytes = render_sweep(spec, done_, format);
  if (!bytes) return bytes.error();
  if (auto ok = write_file_atomic(output_, *bytes); !ok) return ok.error();
  std::error_code ec;
  std::filesystem::remove(path_, ec);
  return true;
}

}  // namespace scalescope::planner
