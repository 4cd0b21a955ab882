// The Parquet writer's bytes for tiny tables, derived by hand from parquet.thrift and the Thrift compact
// protocol (field header = (id delta << 4) | type with i32 5, i64 6, binary 8, list 9, struct 12; integers
// zigzag varints: 0 -> 00, 1 -> 02, 2 -> 04, 4 -> 08, 8 -> 10, 25 -> 32), and its refusals.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "scalescope/planner/parquet_writer.hpp"

namespace scalescope::planner {
namespace {

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s += static_cast<char>(x);
  return s;
}

std::uint32_t u32_at(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (int b = 3; b >= 0; --b) v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<std::size_t>(b)]);
  return v;
}

TEST(ParquetWriter, OneRequiredInt64ColumnOfOneRowHasTheHandDerivedBytes) {
  auto f = parquet_file({{"a", ParquetType::int64, false}}, {Json{{"a", 1}}});
  ASSERT_TRUE(f) << f.error().str();
  const std::string& s = *f;
  // PageHeader: type DATA_PAGE 0 (15 00), uncompressed and compressed size 8 (15 10, 15 10), data_page_header
  // struct at id 5 (delta 2: 2C) {num_values 1 (15 02), PLAIN 0 (15 00), RLE 3 twice (15 06)} stop, stop.
  const std::string header = bytes({0x15, 0x00, 0x15, 0x10, 0x15, 0x10, 0x2C, 0x15, 0x02, 0x15, 0x00, 0x15, 0x06,
                                    0x15, 0x06, 0x00, 0x00});
  const std::string value = bytes({1, 0, 0, 0, 0, 0, 0, 0});  // PLAIN INT64 1, little-endian
  // The chunk starts at 4 (after "PAR1") and is 17 + 8 = 25 bytes.
  const std::string footer =
      bytes({0x15, 0x02,  // version 1
             0x19, 0x2C,  // schema: list of 2 structs
             0x48, 0x06}) + "schema" + bytes({0x15, 0x02, 0x00}) +  // root: name (id 4), num_children 1 (id 5)
      bytes({0x15, 0x04, 0x25, 0x00, 0x18, 0x01, 'a', 0x00}) +       // leaf: INT64 2, REQUIRED 0, name "a"
      bytes({0x16, 0x02,                                             // num_rows 1
             0x19, 0x1C,                                             // row_groups: list of 1 struct
             0x19, 0x1C,                                             //   columns: list of 1 ColumnChunk
             0x26, 0x08,                                             //     file_offset 4 (id 2)
             0x1C,                                                   //     meta_data (id 3)
             0x15, 0x04,                                             //       type INT64
             0x19, 0x15, 0x00,                                       //       encodings [PLAIN]
             0x19, 0x18, 0x01, 'a',                                  //       path_in_schema ["a"]
             0x15, 0x00,                                             //       codec UNCOMPRESSED
             0x16, 0x02,                                             //       num_values 1
             0x16, 0x32, 0x16, 0x32,                                 //       total sizes 25, 25
             0x26, 0x08,                                             //       data_page_offset 4 (id 9)
             0x00, 0x00,                                             //     end meta_data, end ColumnChunk
             0x16, 0x32, 0x16, 0x02,                                 //   total_byte_size 25, num_rows 1
             0x26, 0x08, 0x16, 0x32,                                 //   file_offset 4 (id 5), compressed 25
             0x00,                                                   // end RowGroup
             0x28, 0x0A}) + "scalescope" + bytes({0x00});             // created_by (id 6), stop
  EXPECT_EQ(s, "PAR1" + header + value + footer + bytes({static_cast<int>(footer.size()), 0, 0, 0}) + "PAR1");
  // The structural parts on their own: magic at both ends, the footer length pointing at the footer.
  ASSERT_GE(s.size(), 12u);
  EXPECT_EQ(s.substr(0, 4), "PAR1");
  EXPECT_EQ(s.substr(s.size() - 4), "PAR1");
  EXPECT_EQ(u32_at(s, s.size() - 8), s.size() - 8 - (4 + 25));
}

TEST(ParquetWriter, AnOptionalColumnWritesRleDefinitionLevelsAndOnlyTheNonNullValues) {
  // [true, null, true]: levels 1, 0, 1 = three runs of 1 (header 1 << 1 = 02, value byte): 02 01 02 00 02 01,
  // prefixed by their length 6 (u32 LE); then the two present booleans bit-packed LSB first: 0b11 = 03.
  auto f = parquet_file({{"b", ParquetType::boolean, true}}, {Json{{"b", true}}, Json{{"b", nullptr}}, Json{{"b", true}}});
  ASSERT_TRUE(f) << f.error().str();
  const std::string page = bytes({6, 0, 0, 0, 0x02, 0x01, 0x02, 0x00, 0x02, 0x01, 0x03});
  // Page header: sizes 11 (zigzag 22 = 16), num_values 3 (06), nulls included.
  const std::string header = bytes({0x15, 0x00, 0x15, 0x16, 0x15, 0x16, 0x2C, 0x15, 0x06, 0x15, 0x00, 0x15, 0x06,
                                    0x15, 0x06, 0x00, 0x00});
  EXPECT_EQ(f->substr(4, header.size() + page.size()), header + page);
  // The leaf schema element: BOOLEAN 0, OPTIONAL 1, name "b".
  EXPECT_NE(f->find(bytes({0x15, 0x00, 0x25, 0x02, 0x18, 0x01, 'b', 0x00})), std::string::npos);
  EXPECT_EQ(u32_at(*f, f->size() - 8), f->size() - 8 - (4 + header.size() + page.size()));
}

TEST(ParquetWriter, StringsAreLengthPrefixedAndAnnotatedUtf8) {
  auto f = parquet_file({{"s", ParquetType::string, false}, {"x", ParquetType::real, false}},
                        {Json{{"s", "hé"}, {"x", 1.5}}});
  ASSERT_TRUE(f) << f.error().str();
  // BYTE_ARRAY: u32 LE length 3 (UTF-8 bytes of "hé") + the bytes; DOUBLE 1.5 = 0x3FF8000000000000 LE.
  EXPECT_NE(f->find(bytes({3, 0, 0, 0}) + "hé"), std::string::npos);
  EXPECT_NE(f->find(bytes({0, 0, 0, 0, 0, 0, 0xF8, 0x3F})), std::string::npos);
  // The leaf: BYTE_ARRAY 6 (15 0C), REQUIRED (25 00), name "s" (18 01 's'), converted_type UTF8 0 (id 6, delta 2:
  // 25 00), logicalType (id 10, delta 4: 4C) { STRING (id 1: 1C) {} 00 } 00, end of the element 00.
  EXPECT_NE(f->find(bytes({0x15, 0x0C, 0x25, 0x00, 0x18, 0x01, 's', 0x25, 0x00, 0x4C, 0x1C, 0x00, 0x00, 0x00})),
            std::string::npos);
}

TEST(ParquetWriter, TheSameRowsGiveTheSameBytes) {
  const std::vector<ParquetColumn> cols{{"n", ParquetType::int64, true}, {"t", ParquetType::string, true}};
  const std::vector<Json> rows{Json{{"n", 3}, {"t", "x"}}, Json{{"n", nullptr}, {"t", nullptr}}};
  EXPECT_EQ(*parquet_file(cols, rows), *parquet_file(cols, rows));
}

TEST(ParquetWriter, ACellThatDoesNotFitItsColumnIsAnErrorNamingRowAndColumn) {
  auto null_required = parquet_file({{"a", ParquetType::int64, false}}, {Json{{"a", 1}}, Json{{"a", nullptr}}});
  ASSERT_FALSE(null_required);
  EXPECT_NE(null_required.error().message.find("row 1, column 'a'"), std::string::npos);
  auto real_in_int = parquet_file({{"a", ParquetType::int64, true}}, {Json{{"a", 1.5}}});
  ASSERT_FALSE(real_in_int);
  EXPECT_NE(real_in_int.error().message.find("does not fit"), std::string::npos);
}

}  // namespace
}  // namespace scalescope::planner
