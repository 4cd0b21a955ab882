// A sweep's output file and its journal. Rows are appended to OUT.partial as each point finishes (one JSON
// line per point, flushed and synced, in completion order); OUT itself appears only when every point is
// done, written atomically from the journal in point order, and the journal is removed. A run that finds
// OUT.partial resumes it: its points are skipped. The journal's first line names the spec's fingerprint,
// so a journal of another spec is refused. Formats by extension: .csv (RFC 4180, sweep_columns() order,
// empty cell for null), .json and .parquet (parquet_writer.hpp: the same columns, typed; docs/sweep-format.md).
#pragma once

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "scalescope/planner/sweep_spec.hpp"

namespace scalescope::planner {

enum class SweepFormat { csv, json, parquet };

/// By extension: .csv, .json or .parquet; anything else is an input error naming the option and the
/// alternatives.
Expected<SweepFormat> sweep_format_for(const std::filesystem::path& output);

/// The whole output document for the rows of every point, in point order (Parquet: binary bytes; an error
/// only where a row does not fit the schema, a bug, or a column passes 2 GiB).
Expected<std::string> render_sweep(const SweepSpec& spec, const std::map<std::size_t, std::vector<Json>>& rows,
                                   SweepFormat format);

class SweepJournal {
 public:
  /// Opens (resumes) or creates OUT.partial for `spec`, locked against a second writer. `restart` discards
  /// an existing journal. A torn last line (the process was killed while writing it) is dropped.
  static Expected<SweepJournal> open(const std::filesystem::path& output, const SweepSpec& spec, bool restart);
  SweepJournal(SweepJournal&& other) noexcept;
  SweepJournal& operator=(SweepJournal&&) = delete;
  SweepJournal(const SweepJournal&) = delete;
  ~SweepJournal();

  /// Rows of the points already done, by point.
  const std::map<std::size_t, std::vector<Json>>& done() const { return done_; }
  /// Appends one point's rows (one line, flushed and synced).
  Expected<bool> append(std::size_t point, const std::vector<Json>& rows);
  /// Writes OUT atomically from every point's rows and removes the journal.
  Expected<bool> finish(const SweepSpec& spec, SweepFormat format);

 private:
  SweepJournal() = default;
  std::filesystem::path output_, path_;
  std::FILE* file_ = nullptr;
  std::map<std::size_t, std::vector<Json>> done_;
};

}  // namespace scalescope::planner
