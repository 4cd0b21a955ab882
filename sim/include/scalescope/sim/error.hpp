// Errors as values: Error names the file, the JSON path and what was expected;
// Expected<T> carries either a value or such an Error (in the spirit of llvm::Expected).
#pragma once

#include <cassert>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace scalescope {

/// What went wrong with user input (or, for kind == runtime, with the run itself).
struct Error {
  enum class Kind { input, runtime };
  Kind kind = Kind::input;
  std::string file;     ///< file the input came from, or "<builtin:NAME>", "--plan", ...; may be empty
  std::string path;     ///< JSON path such as "$.nodes[2].gpus", or a CLI option; may be empty
  std::string message;  ///< what was expected and what was found

  /// "FILE: PATH: MESSAGE", leaving out the parts that are empty.
  std::string str() const {
    std::string out;
    if (!file.empty()) out += file + ": ";
    if (!path.empty()) out += path + ": ";
    out += message;
    return out;
  }
  /// Exit status a CLI should use: 2 for bad input, 1 for a runtime failure.
  int exit_code() const { return kind == Kind::input ? 2 : 1; }
};

inline Error input_error(std::string file, std::string path, std::string message) {
  return Error{Error::Kind::input, std::move(file), std::move(path), std::move(message)};
}
inline Error runtime_error(std::string message) {
  return Error{Error::Kind::runtime, {}, {}, std::move(message)};
}

/// Thrown only inside loaders and caught at their public boundary, where it becomes an
/// Expected<T> holding the Error. Public APIs never let it escape.
struct ErrorException : std::runtime_error {
  Error error;
  explicit ErrorException(Error e) : std::runtime_error(e.str()), error(std::move(e)) {}
};

template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Expected(Error error) : v_(std::move(error)) {}      // NOLINT(google-explicit-constructor)

  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { assert(has_value() && "Expected::value() on an error"); return std::get<0>(v_); }
  const T& value() const& { assert(has_value() && "Expected::value() on an error"); return std::get<0>(v_); }
  T&& value() && { assert(has_value() && "Expected::value() on an error"); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { assert(!has_value() && "Expected::error() on a value"); return std::get<1>(v_); }

  /// The value, or throws ErrorException (for use inside loaders that convert back at their edge).
  T take_or_throw() && {
    if (!has_value()) throw ErrorException(std::get<1>(v_));
    return std::get<0>(std::move(v_));
  }

 private:
  std::variant<T, Error> v_;
};

/// Runs fn() (which may throw ErrorException) and returns its result as an Expected.
template <class Fn>
auto catch_errors(Fn&& fn) -> Expected<decltype(fn())> {
  try {
    return fn();
  } catch (ErrorException& e) {
    return std::move(e.error);
  }
}

}  // namespace scalescope
