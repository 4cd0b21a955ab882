// Implementation of the path-aware JSON reader (depth-bounded parsing, typed reads with range checks).
#include "scalescope/sim/json_reader.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace scalescope {

namespace fs = std::filesystem;

namespace {

/// Line of the first byte past `max_depth` levels of nesting, or 0 when the text stays within it. A
/// linear pre-scan (strings and escapes skipped), so that no later recursive walk of the DOM (copy,
/// dump, comparison) can be driven arbitrarily deep by the input.
std::size_t too_deep_line(std::string_view text, int max_depth) {
  int depth = 0;
  std::size_t line = 1;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '\n') ++line;
    if (in_string) {
      if (ch == '\\') ++i;
      else if (ch == '"') in_string = false;
    } else if (ch == '"') {
      in_string = true;
    } else if (ch == '[' || ch == '{') {
      if (++depth > max_depth) return line;
    } else if (ch == ']' || ch == '}') {
      --depth;
    }
  }
  return 0;
}

}  // namespace

std::string to_valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    // Length of the sequence a lead byte announces and the smallest code point it may encode (RFC 3629).
    const std::size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= text.size();
    std::uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      ok = (c >> 6) == 0x2;
      cp = (cp << 6) | (c & 0x3Fu);
    }
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[len] && cp <= 0x10FFFF && (cp < 0xD800 || cp > 0xDFFF);
    if (ok) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
    }
  }
  return out;
}

Expected<Json> parse_json_text(std::string_view text, std::string source) {
  if (const std::size_t line = too_deep_line(text, kMaxJsonDepth)) {
    return input_error(std::move(source), "", "malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) +
                                                  " levels at line " + std::to_string(line));
  }
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message already carries "at line L, column C".
    std::string what = e.what();
    const auto pos = what.find("parse error");
    return input_error(std::move(source), "", "malformed JSON: " + what.substr(pos == std::string::npos ? 0 : pos));
  } catch (const nlohmann::json::exception& e) {
    // out_of_range 406: a number such as 1e400 that no double holds.
    std::string what = e.what();
    const auto pos = what.find("] ");
    return input_error(std::move(source), "", "malformed JSON: " + (pos == std::string::npos ? what : what.substr(pos + 2)) +
                                                  " (numbers must fit a finite double)");
  }
}

Expected<Json> read_json_file(const fs::path& file) {
  auto text = read_input_file(file, kMaxInputFileBytes, "JSON file");
  if (!text) return text.error();
  return parse_json_text(*text, file.string());
}

void JsonCursor::fail(const std::string& message) const {
  throw ErrorException(input_error(file_, path_, message));
}

std::string JsonCursor::describe(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "got null";
    case Json::value_t::boolean: return std::string("got ") + (v.get<bool>() ? "true" : "false");
    case Json::value_t::string: {
      const auto& str = v.get_ref<const std::string&>();  // long strings are cut: messages stay one line
      return "got the string \"" + (str.size() > 80 ? str.substr(0, 80) + "...\" (" + std::to_string(str.size()) + " bytes)" : str + "\"");
    }
    case Json::value_t::array: return "got an array";
    case Json::value_t::object: return "got an object";
    default: return "got " + v.dump();
  }
}

bool JsonCursor::has(std::string_view key) const {
  return j_->is_object() && j_->contains(key);
}

void JsonCursor::expect_object() const {
  if (!j_->is_object()) fail("expected an object, " + describe(*j_));
}
void JsonCursor::expect_array() const {
  if (!j_->is_array()) fail("expected an array, " + describe(*j_));
}

JsonCursor JsonCursor::at(std::string_view key) const {
  expect_object();
  auto it = j_->find(key);
  if (it == j_->end()) fail("missing required key '" + std::string(key) + "'");
  return JsonCursor(*it, file_, path_ + "." + std::string(key));
}

std::optional<JsonCursor> JsonCursor::find(std::string_view key) const {
  expect_object();
  auto it = j_->find(key);
  if (it == j_->end()) return std::nullopt;
  return JsonCursor(*it, file_, path_ + "." + std::string(key));
}

JsonCursor JsonCursor::at(std::size_t index) const {
  expect_array();
  if (index >= j_->size()) fail("index " + std::to_string(index) + " out of range");
  return JsonCursor((*j_)[index], file_, path_ + "[" + std::to_string(index) + "]");
}

std::size_t JsonCursor::size() const {
  if (!j_->is_array() && !j_->is_object()) fail("expected an array or object, " + describe(*j_));
  return j_->size();
}

std::vector<JsonCursor> JsonCursor::items() const {
  expect_array();
  std::vector<JsonCursor> out;
  out.reserve(j_->size());
  for (std::size_t i = 0; i < j_->size(); ++i) out.push_back(at(i));
  return out;
}

std::vector<std::pair<std::string, JsonCursor>> JsonCursor::members() const {
  expect_object();
  std::vector<std::pair<std::string, JsonCursor>> out;
  for (auto it = j_->begin(); it != j_->end(); ++it) {
    out.emplace_back(it.key(), JsonCursor(it.value(), file_, path_ + "." + it.key()));
  }
  return out;
}

void JsonCursor::expect_keys(std::initializer_list<std::string_view> allowed) const {
  expect_object();
  for (auto it = j_->begin(); it != j_->end(); ++it) {
    bool ok = false;
    for (auto a : allowed) ok = ok || (it.key() == a);
    if (!ok) {
      std::string list;
      for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      JsonCursor(it.value(), file_, path_ + "." + it.key()).fail("unknown key '" + it.key() + "' (expected one of: " + list + ")");
    }
  }
}

std::string JsonCursor::as_string() const {
  if (!j_->is_string()) fail("expected a string, " + describe(*j_));
  return j_->get<std::string>();
}

bool JsonCursor::as_bool() const {
  if (!j_->is_boolean()) fail("expected true or false, " + describe(*j_));
  return j_->get<bool>();
}

double JsonCursor::as_number() const {
  if (!j_->is_number()) fail("expected a number, " + describe(*j_));
  const double v = j_->get<double>();
  if (!std::isfinite(v)) fail("expected a finite number, " + describe(*j_));
  return v;
}

double JsonCursor::as_positive_number() const {
  if (!j_->is_number()) fail("expected a positive number, " + describe(*j_));
  const double v = j_->get<double>();
  if (!(v > 0.0) || !std::isfinite(v)) fail("expected a positive number, " + describe(*j_));
  return v;
}

double JsonCursor::as_nonnegative_number() const {
  if (!j_->is_number()) fail("expected a non-negative number, " + describe(*j_));
  const double v = j_->get<double>();
  if (!(v >= 0.0) || !std::isfinite(v)) fail("expected a non-negative number, " + describe(*j_));
  return v;
}

namespace {

/// The integer value at full width: false for non-integers and for unsigned values above INT64_MAX
/// (nlohmann keeps those as uint64, which get<int64_t>() would wrap to a negative number).
bool full_width_int(const Json& j, std::int64_t& out) {
  if (j.is_number_unsigned()) {
    const std::uint64_t u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
    out = static_cast<std::int64_t>(u);
    return true;
  }
  if (!j.is_number_integer()) return false;
  out = j.get<std::int64_t>();
  return true;
}

}  // namespace

std::int64_t JsonCursor::as_int() const {
  std::int64_t v = 0;
  if (!full_width_int(*j_, v)) fail("expected an integer in [-2^63, 2^63-1], " + describe(*j_));
  return v;
}

std::int64_t JsonCursor::as_positive_int() const {
  std::int64_t v = 0;
  if (!full_width_int(*j_, v) || v <= 0) fail("expected a positive integer, " + describe(*j_));
  return v;
}

std::int64_t JsonCursor::as_nonnegative_int() const {
  std::int64_t v = 0;
  if (!full_width_int(*j_, v) || v < 0) fail("expected a non-negative integer, " + describe(*j_));
  return v;
}

std::int64_t JsonCursor::as_int_in(std::int64_t lo, std::int64_t hi) const {
  std::int64_t v = 0;
  if (!full_width_int(*j_, v) || v < lo || v > hi)
    fail("expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi) + ", " + describe(*j_));
  return v;
}

double JsonCursor::as_number_in(double lo, double hi) const {
  const double v = as_number();
  if (v < lo || v > hi) {
    char range[96];
    std::snprintf(range, sizeof range, "expected a number from %g to %g (plausible range), ", lo, hi);
    fail(range + describe(*j_));
  }
  return v;
}

double JsonCursor::as_dropout_probability() const {
  const double v = as_number();
  if (!(v >= 0.0 && v < 1.0)) fail("expected a dropout probability in [0, 1), " + describe(*j_));
  return v;
}

std::string JsonCursor::as_enum(std::initializer_list<std::string_view> choices) const {
  std::string list;
  for (auto c : choices) list += (list.empty() ? "" : " | ") + std::string(c);
  if (!j_->is_string()) fail("expected one of " + list + ", " + describe(*j_));
  const std::string s = j_->get<std::string>();
  for (auto c : choices) if (s == c) return s;
  fail("expected one of " + list + ", " + describe(*j_));
}

std::string JsonCursor::get_string(std::string_view key, std::string dflt) const {
  auto c = find(key);
  return c ? c->as_string() : dflt;
}
double JsonCursor::get_number(std::string_view key, double dflt) const {
  auto c = find(key);
  return c ? c->as_number() : dflt;
}
std::int64_t JsonCursor::get_int(std::string_view key, std::int64_t dflt) const {
  auto c = find(key);
  return c ? c->as_int() : dflt;
}
bool JsonCursor::get_bool(std::string_view key, bool dflt) const {
  auto c = find(key);
  return c ? c->as_bool() : dflt;
}

}  // namespace scalescope
