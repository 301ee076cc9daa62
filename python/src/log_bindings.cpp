#include "log_bindings.hpp"

#include <nanobind/stl/string.h>

#include <string>

#include "core/log.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fgemm::python {
namespace {

// The handler, read and replaced only with the GIL held. A heap object, released by _set_log_handler(None)
// (which fgemm registers at exit), never by a static destructor after the interpreter is gone.
nb::object* g_handler = nullptr;

// The library logs from any thread, with or without the GIL (the compiling threads of a warm-up have not).
void call_handler(detail::LogLevel level, const std::string& message) {
  nb::gil_scoped_acquire acquired;
  if (g_handler == nullptr) return;
  try {
    (*g_handler)(static_cast<int>(level), message);
  } catch (nb::python_error& error) {
    // A failing handler must not unwind through the library's threads.
    error.discard_as_unraisable("fgemm's log handler");
  }
}

void set_log_handler(nb::object handler) {
  detail::set_log_sink(nullptr);
  delete g_handler;
  g_handler = nullptr;
  if (handler.is_none()) return;
  g_handler = new nb::object(std::move(handler));
  detail::set_log_sink(&call_handler);
}

}  // namespace

void register_log_bindings(nb::module_& module) {
  module.def("_set_log_handler", &set_log_handler, "handler"_a.none(),
             "Sends the library's diagnostics to handler(level, message), level 0 debug, 1 info, 2 warning; None "
             "sends them to standard error again.");
}

}  // namespace fgemm::python
