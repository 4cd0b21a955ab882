// Shared pieces of the fuzz targets: the fuzzer's bytes as text or JSON, and what every loader's
// error must be (an input error with a message; anything else is a bug and stops the fuzzer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// A loader's rejection: an input error that says something (exit 2 in the CLI), never a runtime
/// failure or an empty message.
inline void check_error(const Error& e) {
  if (e.kind != Error::Kind::input || e.message.empty()) __builtin_trap();
  (void)e.str();
}

/// The bytes parsed as JSON (the reader every loader uses), or nullopt after checking its error.
inline std::optional<Json> json_of(const std::uint8_t* data, std::size_t size) {
  auto j = parse_json_text(text_of(data, size), "fuzz-input.json");
  if (!j) {
    check_error(j.error());
    return std::nullopt;
  }
  return std::move(j).value();
}

/// The fuzz entry point of a JSON loader: parses the bytes, then runs `load` on the document.
template <class Load>
int on_json(const std::uint8_t* data, std::size_t size, Load&& load) {
  if (auto j = json_of(data, size)) load(*j);
  return 0;
}

/// Runs a loader's result through the checks: its error must be an input error; a value is passed
/// to `use` (which writes it back out, so output paths see the loaded strings too).
template <class T, class Use>
void check(const Expected<T>& r, Use&& use) {
  if (!r) {
    check_error(r.error());
    return;
  }
  use(r.value());
}

}  // namespace scalescope::fuzz
