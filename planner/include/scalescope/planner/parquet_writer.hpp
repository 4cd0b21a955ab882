// A small, self-contained Apache Parquet writer for flat tables (the sweep's results; Debian 12 has no Arrow C++).
// Format: apache/parquet-format (parquet.thrift, Encodings.md). The file is
//
//   "PAR1" | column chunk 1 | ... | column chunk N | FileMetaData | footer length (u32 LE) | "PAR1"
//
// with one row group, one column chunk per column and one data page (v1) per chunk: a PageHeader, then (for an
// OPTIONAL column) the definition levels as a u32 LE byte length + RLE runs of bit width 1, then the non-null
// values, PLAIN encoded (BOOLEAN bit-packed LSB first, INT64 and DOUBLE 8 bytes LE, BYTE_ARRAY a u32 LE length +
// the bytes), UNCOMPRESSED. PageHeader and FileMetaData are Thrift compact protocol structs. No statistics, no
// timestamps: the bytes depend only on the columns and the rows (created_by "scalescope").
#pragma once

#include <string>
#include <vector>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::planner {

/// Column types: INT64, DOUBLE, BYTE_ARRAY annotated UTF8/STRING, BOOLEAN.
enum class ParquetType { int64, real, string, boolean };

struct ParquetColumn {
  std::string name;
  ParquetType type = ParquetType::int64;
  bool optional = false;  ///< OPTIONAL (null cells allowed, definition levels written) or REQUIRED
};

/// The whole file for `rows` (JSON objects; the cell of a column is row.at(name)). A cell must match its
/// column: an integer for int64, a number for real, a string, a boolean, or null in an optional column;
/// anything else is a runtime Error naming the row and the column, as is a page beyond 2 GiB.
Expected<std::string> parquet_file(const std::vector<ParquetColumn>& columns, const std::vector<Json>& rows);

}  // namespace scalescope::planner
