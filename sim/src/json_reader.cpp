// Implementation of the path-aware JSON reader and atomic file writes.
#include "scalescope/sim/json_reader.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>
#include <unistd.h>

namespace scalescope {

namespace fs = std::filesystem;

Expected<Json> parse_json_text(std::string_view text, std::string source) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // nlohmann's message already carries "at line L, column C".
    std::string what = e.what();
    const auto pos = what.find("parse error");
    return input_error(std::move(source), "", "malformed JSON: " + what.substr(pos == std::string::npos ? 0 : pos));
  }
}

Expected<Json> read_json_file(const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return input_error(file.string(), "", "file does not exist");
  if (fs::is_directory(file, ec)) return input_error(file.string(), "", "is a directory, expected a JSON file");
  std::ifstream in(file, std::ios::binary);
  if (!in) return input_error(file.string(), "", "cannot open file for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_json_text(ss.str(), file.string());
}

Expected<bool> write_file_atomic(const fs::path& file, std::string_view content) {
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Error{Error::Kind::runtime, file.string(), "", "folder " + dir.string() + " does not exist"};
  }
  const fs::path tmp = dir / ("." + file.filename().string() + ".tmp." + std::to_string(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error{Error::Kind::runtime, file.string(), "", "cannot create " + tmp.string()};
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return Error{Error::Kind::runtime, file.string(), "", "write failed (disk full?)"};
    }
  }
  fs::rename(tmp, file, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Error{Error::Kind::runtime, file.string(), "", "cannot rename temporary file into place"};
  }
  return true;
}

void JsonCursor::fail(const std::string& message) const {
  throw ErrorException(input_error(file_, path_, message));
}

std::string JsonCursor::describe(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null: return "got null";
    case Json::value_t::boolean: return std::string("got ") + (v.get<bool>() ? "true" : "false");
    case Json::value_t::string: return "got the string \"" + v.get<std::string>() + "\"";
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

std::int64_t JsonCursor::as_int() const {
  if (!j_->is_number_integer()) fail("expected an integer, " + describe(*j_));
  return j_->get<std::int64_t>();
}

std::int64_t JsonCursor::as_positive_int() const {
  if (!j_->is_number_integer() || j_->get<std::int64_t>() <= 0) fail("expected a positive integer, " + describe(*j_));
  return j_->get<std::int64_t>();
}

std::int64_t JsonCursor::as_nonnegative_int() const {
  if (!j_->is_number_integer() || j_->get<std::int64_t>() < 0) fail("expected a non-negative integer, " + describe(*j_));
  return j_->get<std::int64_t>();
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
