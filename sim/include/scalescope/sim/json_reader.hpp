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

namespace scalescope {

using Json = nlohmann::json;

/// Parses a whole file; a missing file or malformed JSON becomes an input Error naming the file
/// (and the line/column nlohmann reports).
Expected<Json> read_json_file(const std::filesystem::path& file);
/// Parses text that came from somewhere other than a file (`source` names it in errors).
Expected<Json> parse_json_text(std::string_view text, std::string source);

/// Writes `content` to `file` atomically: a temporary file in the same folder, flushed, then
/// renamed over the target, so readers never see a half-written result.
Expected<bool> write_file_atomic(const std::filesystem::path& file, std::string_view content);

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
