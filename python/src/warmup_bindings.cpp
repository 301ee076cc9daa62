#include "warmup_bindings.hpp"

#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <tuple>

#include "fgemm/error.hpp"
#include "fgemm/warmup.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fgemm::python {
namespace {

// A shape as fgemm.warmup passes it: (operation, n, k, num_groups, D's dtype by torch's name, with_c, sfa MN-major,
// psum layout, packed D).
using ShapeTuple = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::string, bool, bool, bool, bool>;

// D's dtype by its name (fgemm's dtype_name, which is torch's).
DType d_dtype_named(const std::string& name) {
  for (DType dtype : {DType::BF16, DType::F16, DType::F32})
    if (name == dtype_name(dtype)) return dtype;
  throw Error(ErrorKind::InvalidValue, "fgemm.warmup: D's dtype '" + name + "' is none of bfloat16, float16, float32");
}

// The kernels as (name, compiled now, seconds). The compilers run with the GIL released; `on_kernel`, a Python
// callable or None, is called with the GIL held, from one compiling thread at a time.
std::vector<std::tuple<std::string, bool, double>> warmup_py(const std::vector<ShapeTuple>& shape_tuples,
                                                             std::int64_t m_min, std::int64_t m_max,
                                                             std::optional<int> device, int threads,
                                                             nb::object on_kernel) {
  std::vector<WarmupShape> shapes;
  for (const auto& [operation, n, k, groups, d_dtype, with_c, mn_major, psum, packed_d] : shape_tuples)
    shapes.push_back({static_cast<GemmOperation>(operation), n, k, groups, d_dtype_named(d_dtype), with_c, mn_major,
                      psum, packed_d});
  std::function<void(const WarmedKernel&, std::size_t, std::size_t)> report;
  if (!on_kernel.is_none())
    report = [&on_kernel](const WarmedKernel& kernel, std::size_t done, std::size_t total) {
      nb::gil_scoped_acquire acquired;
      on_kernel(kernel.name, kernel.compiled, kernel.seconds, done, total);
    };
  std::vector<WarmedKernel> warmed;
  {
    nb::gil_scoped_release released;
    warmed = warmup(shapes, m_min, m_max, device, threads, report);
  }
  std::vector<std::tuple<std::string, bool, double>> result;
  for (const WarmedKernel& kernel : warmed) result.emplace_back(kernel.name, kernel.compiled, kernel.seconds);
  return result;
}

}  // namespace

void register_warmup_bindings(nb::module_& module) {
  module.def("warmup", &warmup_py, "shapes"_a, "m_min"_a, "m_max"_a, "device"_a.none(), "threads"_a,
             "on_kernel"_a.none(),
             "Compiles (and loads on `device`, unless None) every kernel the heuristics choose for the shapes, "
             "given as (GemmOperation code, n, k, num_groups, D's dtype name, with_c, sfa MN-major, psum layout, "
             "packed D) tuples, with M in [m_min, m_max], on `threads` threads (0: one per core); returns (kernel "
             "name, compiled now, seconds) tuples. on_kernel(name, compiled, seconds, done, total), if given, follows "
             "each kernel.");
}

}  // namespace fgemm::python
