// Between the libraries and Python: JSON values as plain Python objects, errors as Python exceptions
// (scalescope.InputError / scalescope.SimulationError with .file, .path, .message), callbacks under the GIL.
#pragma once

#include <nanobind/nanobind.h>

#include <atomic>
#include <optional>

#include "scalescope/sim/error.hpp"
#include "scalescope/sim/json_reader.hpp"

namespace scalescope::py {

namespace nb = nanobind;

/// dict / list / str / int / float / bool / None, keys in the JSON's (sorted) order.
nb::object to_python(const Json& j);

/// Raises scalescope.InputError (bad input: exit code 2 in the CLI) or scalescope.SimulationError.
[[noreturn]] void raise(const Error& e);

/// Calls a Python progress callback from any thread while the GIL is released elsewhere: takes the GIL,
/// calls it, checks for Ctrl-C. An exception from the callback (or KeyboardInterrupt) sets `cancel`, is
/// kept, and rethrow() raises it once the library call has returned.
class Callback {
 public:
  explicit Callback(nb::object fn) : fn_(std::move(fn)) {}
  void operator()(long done, long total);
  const std::atomic<bool>* cancel_flag() const { return &cancel_; }
  void rethrow();  ///< with the GIL held

 private:
  nb::object fn_;
  std::atomic<bool> cancel_{false};
  std::optional<nb::python_error> error_;
};

}  // namespace scalescope::py
