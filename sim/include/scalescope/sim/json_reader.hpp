// Reading user JSON with errors that name the file, the JSON path and what was expected,
// e.g. "topologies/x.json: $.nodes[2].gpus: expected a positive integer, got -1".
// Every accessor throws ErrorException; loaders wrap their body in catch_errors().
#pragma once

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/file_io.hpp"  // write_file_atomic, read_input_file

namespace scalescope {

using Json = nlohmann::json;

/// Deepest nesting of arrays and objects a JSON input may have (real files nest < 10 levels).
inline constexpr int kMaxJsonDepth = 128;

/// Parses a whole file (read_input_file: regular files up to kMaxInputFileBytes); a missing file,
/// malformed JSON, nesting deeper than kMaxJsonDepth or a number no double holds (1e400) becomes an
/// input Error naming the file (and the line/column nlohmann reports).
Expected<Json> read_json_file(const std::filesystem::path& file);
/// Parses text that came from somewhere other than a file (`source` names it in errors).
Expected<Json> parse_json_text(std::string_view text, std::string source);

/// JSON text for result files and stdout. Strings that are not UTF-8 (host names from logs, file
/// names, command-line text) come out with U+FFFD in place of the bad bytes instead of an exception.
template <class J>
std::string dump_json(const J& j, int indent = 2) {
  return j.dump(indent, ' ', false, J::error_handler_t::replace);
}

/// `text` with every byte sequence that is not well-formed UTF-8 replaced by U+FFFD.
std::string to_valid_utf8(std::string_view text);

/// A position inside a JSON document: the value, the file it came from and its JSON path.
class JsonCursor {
 public:
  JsonCursor(const Json& value, std::string file, std::string path = "$")
      : j_(&value), file_(std::move(file)), path_(std::move(path)) {}

  const Json& json() const { return *j_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  /// Throws an input error at this position: "FILE: PATH: message".
  [[noreturn]] void fail(const std::string& message) const;
  /// "got -1", "got a string", ... for messages.
  static std::string describe(const Json& v);

  bool is_object() const { return j_->is_object(); }
  bool is_array() const { return j_->is_array(); }
  bool has(std::string_view key) const;

  /// Required member (fails with "missing required key 'k'" if absent).
  JsonCursor at(std::string_view key) const;
  /// Optional member.
  std::optional<JsonCursor> find(std::string_view key) const;
  /// Array element.
  JsonCursor at(std::size_t index) const;
  std::size_t size() const;
  /// Array elements (fails if not an array).
  std::vector<JsonCursor> items() const;
  /// Object members in document order of keys (sorted, since nlohmann::json sorts keys).
  std::vector<std::pair<std::string, JsonCursor>> members() const;

  /// Fails if the object has a key outside `allowed` (no silent defaults for typos).
  void expect_keys(std::initializer_list<std::string_view> allowed) const;
  void expect_object() const;
  void expect_array() const;

  // Typed reads of this value.
  std::string as_string() const;
  bool as_bool() const;
  double as_number() const;
  double as_positive_number() const;      ///< > 0 and finite
  double as_nonnegative_number() const;   ///< >= 0 and finite
  std::int64_t as_int() const;
  std::int64_t as_positive_int() const;
  std::int64_t as_nonnegative_int() const;
  /// An integer in [lo, hi], checked at full width before any narrowing (e.g. into an int).
  std::int64_t as_int_in(std::int64_t lo, std::int64_t hi) const;
  /// A finite number in [lo, hi]: a physical value's plausible range (docs/plausible-ranges.md).
  double as_number_in(double lo, double hi) const;
  double get_number_in(std::string_view key, double lo, double hi) const { return at(key).as_number_in(lo, hi); }
  /// A dropout probability: a number in [0, 1) (1 would drop everything).
  double as_dropout_probability() const;
  /// One of `choices`; fails with the list of accepted values.
  std::string as_enum(std::initializer_list<std::string_view> choices) const;

  // Shorthands for members: required and with default.
  std::string get_string(std::string_view key) const { return at(key).as_string(); }
  std::string get_string(std::string_view key, std::string dflt) const;
  double get_positive(std::string_view key) const { return at(key).as_positive_number(); }
  double get_number(std::string_view key, double dflt) const;
  std::int64_t get_positive_int(std::string_view key) const { return at(key).as_positive_int(); }
  std::int64_t get_int(std::string_view key, std::int64_t dflt) const;
  bool get_bool(std::string_view key, bool dflt) const;

 private:
  const Json* j_;
  std::string file_;
  std::string path_;
};

}  // namespace scalescope
