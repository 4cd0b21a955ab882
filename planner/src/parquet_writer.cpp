// The Parquet writer: data pages, definition levels and the Thrift compact footer (parquet_writer.hpp).
#include "scalescope/planner/parquet_writer.hpp"

#include <bit>
#include <cassert>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

namespace scalescope::planner {

namespace {

// parquet.thrift enum values used here.
constexpr std::int32_t kTypeBoolean = 0, kTypeInt64 = 2, kTypeDouble = 5, kTypeByteArray = 6;
constexpr std::int32_t kRequired = 0, kOptional = 1;  // FieldRepetitionType
constexpr std::int32_t kUtf8 = 0;                     // ConvertedType
constexpr std::int32_t kPlain = 0, kRle = 3;          // Encoding
constexpr std::int32_t kUncompressed = 0;             // CompressionCodec
constexpr std::int32_t kDataPage = 0;                 // PageType

void put_u32(std::string& out, std::uint32_t v) {
  for (int b = 0; b < 4; ++b) out += static_cast<char>((v >> (8 * b)) & 0xFF);
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int b = 0; b < 8; ++b) out += static_cast<char>((v >> (8 * b)) & 0xFF);
}

/// Unsigned LEB128, as Thrift compact varints and RLE run headers use.
void put_varint(std::string& out, std::uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7F) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

/// Thrift compact protocol (apache/thrift doc/specs/thrift-compact-protocol.md), the parts the footer needs:
/// field headers in the short form (field id delta 1..15 in the high nibble, type in the low one), zigzag
/// varint integers, binaries as varint length + bytes, lists as a size-and-type byte (0xF? + varint size from
/// 15 elements), nested structs ending in a stop byte.
class Compact {
 public:
  static constexpr int kI32 = 5, kI64 = 6, kBinary = 8, kList = 9, kStruct = 12;

  void i32(int id, std::int32_t v) { i64_as(id, kI32, v); }
  void i64(int id, std::int64_t v) { i64_as(id, kI64, v); }
  void binary(int id, std::string_view s) {
    field(id, kBinary);
    element(s);
  }
  void begin_struct(int id) {
    field(id, kStruct);
    last_.push_back(0);
  }
  /// A struct that is a list element (no field header).
  void begin_element() { last_.push_back(0); }
  void end_struct() {
    out_ += '\0';
    last_.pop_back();
  }
  void list(int id, int element_type, std::size_t size) {
    field(id, kList);
    if (size < 15) {
      out_ += static_cast<char>((size << 4) | static_cast<std::size_t>(element_type));
    } else {
      out_ += static_cast<char>(0xF0 | element_type);
      put_varint(out_, size);
    }
  }
  /// List elements of type i32 and binary.
  void element(std::int32_t v) { put_varint(out_, zigzag(v)); }
  void element(std::string_view s) {
    put_varint(out_, s.size());
    out_ += s;
  }
  /// The bytes of the outermost struct, ended by its stop byte.
  std::string finish() {
    assert(last_.size() == 1 && "Compact: a nested struct is still open");
    out_ += '\0';
    return std::move(out_);
  }

 private:
  static std::uint64_t zigzag(std::int64_t v) {
    return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
  }
  void i64_as(int id, int type, std::int64_t v) {
    field(id, type);
    put_varint(out_, zigzag(v));
  }
  void field(int id, int type) {
    const int delta = id - last_.back();
    assert(delta >= 1 && delta <= 15 && "Compact: field ids increase by 1..15 in every struct written here");
    out_ += static_cast<char>((delta << 4) | type);
    last_.back() = id;
  }
  std::string out_;
  std::vector<int> last_{0};  ///< the last field id of each open struct
};

std::int32_t physical_type(ParquetType t) {
  switch (t) {
    case ParquetType::int64: return kTypeInt64;
    case ParquetType::real: return kTypeDouble;
    case ParquetType::string: return kTypeByteArray;
    case ParquetType::boolean: return kTypeBoolean;
  }
  return kTypeInt64;
}

bool cell_fits(const Json& v, ParquetType t) {
  switch (t) {
    case ParquetType::int64:
      return v.is_number_integer() &&
             (!v.is_number_unsigned() ||
              v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()));
    case ParquetType::real: return v.is_number();
    case ParquetType::string: return v.is_string();
    case ParquetType::boolean: return v.is_boolean();
  }
  return false;
}

/// Definition levels (1 = present, 0 = null) as RLE runs: a varint header run_length << 1, then the value in
/// one byte (bit width 1 rounds up to a byte).
std::string definition_levels(const std::vector<bool>& present) {
  std::string out;
  for (std::size_t at = 0; at < present.size();) {
    std::size_t end = at;
    while (end < present.size() && present[end] == present[at]) ++end;
    put_varint(out, static_cast<std::uint64_t>(end - at) << 1);
    out += static_cast<char>(present[at] ? 1 : 0);
    at = end;
  }
  return out;
}

/// One column's page data: [levels length + levels] values.
Expected<std::string> page_data(const ParquetColumn& c, const std::vector<Json>& rows) {
  std::string values;
  std::vector<bool> present;
  present.reserve(rows.size());
  std::size_t bools = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Json* v = rows[r].is_object() && rows[r].contains(c.name) ? &rows[r].at(c.name) : nullptr;
    if (v == nullptr || v->is_null()) {
      if (!c.optional)
        return runtime_error("Parquet: row " + std::to_string(r) + ", column '" + c.name +
                             "': null in a required column");
      present.push_back(false);
      continue;
    }
    if (!cell_fits(*v, c.type))
      return runtime_error("Parquet: row " + std::to_string(r) + ", column '" + c.name + "': " + v->dump() +
                           " does not fit the column's type");
    present.push_back(true);
    switch (c.type) {
      case ParquetType::int64: put_u64(values, static_cast<std::uint64_t>(v->get<std::int64_t>())); break;
      case ParquetType::real: put_u64(values, std::bit_cast<std::uint64_t>(v->get<double>())); break;
      case ParquetType::string: {
        const auto& s = v->get_ref<const std::string&>();
        if (s.size() > std::numeric_limits<std::int32_t>::max())
          return runtime_error("Parquet: column '" + c.name + "': a string beyond 2 GiB");
        put_u32(values, static_cast<std::uint32_t>(s.size()));
        values += s;
        break;
      }
      case ParquetType::boolean:  // bit-packed, least significant bit first
        if (bools % 8 == 0) values += '\0';
        if (v->get<bool>()) values.back() = static_cast<char>(values.back() | (1 << (bools % 8)));
        ++bools;
        break;
    }
  }
  if (!c.optional) return values;
  const std::string levels = definition_levels(present);
  std::string out;
  put_u32(out, static_cast<std::uint32_t>(levels.size()));
  return out + levels + values;
}

}  // namespace

Expected<std::string> parquet_file(const std::vector<ParquetColumn>& columns, const std::vector<Json>& rows) {
  constexpr auto kMaxPage = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());
  if (rows.size() > kMaxPage) return runtime_error("Parquet: more than 2^31 rows in one page");
  const auto num_rows = static_cast<std::int32_t>(rows.size());
  struct Chunk {
    std::int64_t offset = 0, size = 0;
  };
  std::vector<Chunk> chunks;
  std::string file = "PAR1";
  for (const ParquetColumn& c : columns) {
    auto data = page_data(c, rows);
    if (!data) return data.error();
    if (data->size() > kMaxPage) return runtime_error("Parquet: column '" + c.name + "' beyond 2 GiB");
    const auto size = static_cast<std::int32_t>(data->size());
    Compact h;  // PageHeader
    h.i32(1, kDataPage);
    h.i32(2, size);  // uncompressed_page_size
    h.i32(3, size);  // compressed_page_size
    h.begin_struct(5);  // data_page_header: DataPageHeader
    h.i32(1, num_rows);  // num_values, nulls included
    h.i32(2, kPlain);
    h.i32(3, kRle);  // definition_level_encoding
    h.i32(4, kRle);  // repetition_level_encoding
    h.end_struct();
    const std::string header = h.finish();
    chunks.push_back({static_cast<std::int64_t>(file.size()), static_cast<std::int64_t>(header.size() + data->size())});
    file += header;
    file += *data;
  }

  Compact m;  // FileMetaData
  m.i32(1, 1);  // version
  m.list(2, Compact::kStruct, columns.size() + 1);  // schema: the root, then one leaf per column
  m.begin_element();
  m.binary(4, "schema");
  m.i32(5, static_cast<std::int32_t>(columns.size()));  // num_children
  m.end_struct();
  for (const ParquetColumn& c : columns) {
    m.begin_element();
    m.i32(1, physical_type(c.type));
    m.i32(3, c.optional ? kOptional : kRequired);
    m.binary(4, c.name);
    if (c.type == ParquetType::string) {
      m.i32(6, kUtf8);       // converted_type
      m.begin_struct(10);    // logicalType: LogicalType (a union)
      m.begin_struct(1);     // STRING: StringType, an empty struct
      m.end_struct();
      m.end_struct();
    }
    m.end_struct();
  }
  m.i64(3, num_rows);
  m.list(4, Compact::kStruct, 1);  // row_groups
  m.begin_element();
  m.list(1, Compact::kStruct, columns.size());  // columns: ColumnChunk
  std::int64_t total = 0;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const ParquetColumn& c = columns[i];
    m.begin_element();
    m.i64(2, chunks[i].offset);  // file_offset: the chunk's first page
    m.begin_struct(3);          // meta_data: ColumnMetaData
    m.i32(1, physical_type(c.type));
    m.list(2, Compact::kI32, c.optional ? 2 : 1);  // encodings
    m.element(kPlain);
    if (c.optional) m.element(kRle);
    m.list(3, Compact::kBinary, 1);  // path_in_schema
    m.element(std::string_view(c.name));
    m.i32(4, kUncompressed);
    m.i64(5, num_rows);  // num_values
    m.i64(6, chunks[i].size);  // total_uncompressed_size, page header included
    m.i64(7, chunks[i].size);  // total_compressed_size
    m.i64(9, chunks[i].offset);  // data_page_offset
    m.end_struct();
    m.end_struct();
    total += chunks[i].size;
  }
  m.i64(2, total);  // total_byte_size
  m.i64(3, num_rows);
  m.i64(5, 4);      // file_offset: the first chunk, after "PAR1"
  m.i64(6, total);  // total_compressed_size
  m.end_struct();
  m.binary(6, "scalescope");  // created_by
  const std::string footer = m.finish();
  file += footer;
  put_u32(file, static_cast<std::uint32_t>(footer.size()));
  return file + "PAR1";
}

}  // namespace scalescope::planner
