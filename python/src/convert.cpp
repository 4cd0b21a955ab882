// JSON to Python objects, errors to Python exceptions, progress callbacks under the GIL.
#include "convert.hpp"

#include <nanobind/stl/string.h>

namespace scalescope::py {

nb::object to_python(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object: {
      nb::dict d;
      for (const auto& [k, v] : j.items()) d[nb::str(k.c_str(), k.size())] = to_python(v);
      return d;
    }
    case Json::value_t::array: {
      nb::list l;
      for (const auto& v : j) l.append(to_python(v));
      return l;
    }
    case Json::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      return nb::str(s.c_str(), s.size());
    }
    case Json::value_t::boolean: return nb::bool_(j.get<bool>());
    case Json::value_t::number_integer: return nb::int_(j.get<std::int64_t>());
    case Json::value_t::number_unsigned: return nb::int_(j.get<std::uint64_t>());
    case Json::value_t::number_float: return nb::float_(j.get<double>());
    default: return nb::none();
  }
}

void raise(const Error& e) {
  nb::object errors = nb::module_::import_("scalescope._errors");
  nb::object cls = errors.attr(e.kind == Error::Kind::input ? "InputError" : "SimulationError");
  nb::object exc = cls(e.str(), e.file, e.path, e.message);
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw nb::python_error();
}

void Callback::operator()(long done, long total) {
  if (cancel_.load()) return;
  nb::gil_scoped_acquire gil;
  try {
    if (fn_.is_valid() && !fn_.is_none()) fn_(done, total);
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  } catch (nb::python_error& e) {
    error_.emplace(std::move(e));
    cancel_ = true;
  }
}

void Callback::rethrow() {
  if (error_) {
    nb::python_error e = std::move(*error_);
    error_.reset();
    throw e;
  }
}

}  // namespace scalescope::py
