#include "quantize_bindings.hpp"

#include <cstdint>
#include <vector>

#include "fgemm/quantize.hpp"
#include "quantize_int8_bindings.hpp"
#include "torch_tensor.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fgemm::python {
namespace {

using Quantizer = void (*)(const TensorView&, const TensorView&, const TensorView&, bool, Stream);

// The names an operation's errors use for its arguments.
struct Names {
  const char* op;
  const char* input;
  const char* codes;
};

// Reads the tensors, then runs the operation on the stream torch uses on the input's device with the GIL
// released: on the CPU the work runs inside the call, on a GPU the first call of a shape compiles a kernel (the
// caller's references keep the tensors alive meanwhile).
void quantize_py(Quantizer quantizer, const Names& names, nb::handle x, nb::handle codes, nb::handle sf,
                 bool use_ue8m0) {
  const TensorView input = tensor_view(x, names.op, names.input);
  const TensorView output = tensor_view(codes, names.op, names.codes);
  const TensorView scales = tensor_view(sf, names.op, "sf");
  const Stream stream = current_stream(input.device);
  nb::gil_scoped_release released;
  quantizer(input, output, scales, use_ue8m0, stream);
}

// The four outputs of the cast-transpose quantizers, read as tensors.
struct CastTransposeOutputs {
  TensorView x_fp8, sf, xt_fp8, sft;
};

CastTransposeOutputs cast_transpose_outputs(const char* op, nb::handle x_fp8, nb::handle sf, nb::handle xt_fp8,
                                            nb::handle sft) {
  return {tensor_view(x_fp8, op, "x_fp8"), tensor_view(sf, op, "sf"), tensor_view(xt_fp8, op, "xt_fp8"),
          tensor_view(sft, op, "sft")};
}

// cast_transpose_to_fp8 or per_block_cast_transpose_to_fp8, named `op`, on the extension's arguments.
using CastTranspose = void (*)(const TensorView&, const TensorView&, const TensorView&, const TensorView&,
                               const TensorView&, bool, Stream);

void cast_transpose_py(CastTranspose cast, const char* op, nb::handle x, nb::handle x_fp8, nb::handle sf,
                       nb::handle xt_fp8, nb::handle sft, bool use_ue8m0) {
  const TensorView input = tensor_view(x, op, "x");
  const CastTransposeOutputs out = cast_transpose_outputs(op, x_fp8, sf, xt_fp8, sft);
  const Stream stream = current_stream(input.device);
  nb::gil_scoped_release released;
  cast(input, out.x_fp8, out.sf, out.xt_fp8, out.sft, use_ue8m0, stream);
}

void grouped_cast_transpose_py(nb::handle x, nb::handle ks, nb::handle x_fp8, nb::handle sf, nb::handle xt_fp8,
                               nb::handle sft, bool use_ue8m0) {
  const char* op = "grouped_cast_transpose_to_fp8";
  const TensorView input = tensor_view(x, op, "x");
  const std::vector<std::int64_t> counts = int_list_argument(ks, op, "ks");
  const CastTransposeOutputs out = cast_transpose_outputs(op, x_fp8, sf, xt_fp8, sft);
  const Stream stream = current_stream(input.device);
  nb::gil_scoped_release released;
  grouped_cast_transpose_to_fp8(input, counts, out.x_fp8, out.sf, out.xt_fp8, out.sft, use_ue8m0, stream);
}

void copy_scales_py(nb::handle sf, nb::handle out) {
  const TensorView source = tensor_view(sf, "copy_scales", "sf");
  const TensorView destination = tensor_view(out, "copy_scales", "out");
  const Stream stream = current_stream(source.device);
  nb::gil_scoped_release released;
  copy_scales(source, destination, stream);
}

}  // namespace

void register_quantize_bindings(nb::module_& module) {
  module.def(
      "per_token_cast_to_fp8",
      [](nb::handle x, nb::handle x_fp8, nb::handle sf, bool use_ue8m0) {
        quantize_py(&per_token_cast_to_fp8, {"per_token_cast_to_fp8", "x", "x_fp8"}, x, x_fp8, sf, use_ue8m0);
      },
      "x"_a.none(), "x_fp8"_a.none(), "sf"_a.none(), "use_ue8m0"_a,
      "Quantizes x [M, K] (or [G, M, K]), bfloat16 or float32, into x_fp8 (float8_e4m3fn, the shape of x) and sf "
      "(float32 [M, ceil(K/128)], any strides): one scale per 1 x 128 block.");
  module.def(
      "per_block_cast_to_fp8",
      [](nb::handle w, nb::handle w_fp8, nb::handle sf, bool use_ue8m0) {
        quantize_py(&per_block_cast_to_fp8, {"per_block_cast_to_fp8", "w", "w_fp8"}, w, w_fp8, sf, use_ue8m0);
      },
      "w"_a.none(), "w_fp8"_a.none(), "sf"_a.none(), "use_ue8m0"_a,
      "Quantizes w [N, K] (or [G, N, K]), bfloat16 or float32, into w_fp8 (float8_e4m3fn, the shape of w) and sf "
      "(float32 [ceil(N/128), ceil(K/128)], any strides): one scale per 128 x 128 block.");
  module.def(
      "cast_transpose_to_fp8",
      [](nb::handle x, nb::handle x_fp8, nb::handle sf, nb::handle xt_fp8, nb::handle sft, bool use_ue8m0) {
        cast_transpose_py(&cast_transpose_to_fp8, "cast_transpose_to_fp8", x, x_fp8, sf, xt_fp8, sft, use_ue8m0);
      },
      "x"_a.none(), "x_fp8"_a.none(), "sf"_a.none(), "xt_fp8"_a.none(), "sft"_a.none(), "use_ue8m0"_a,
      "Quantizes x [M, K], bfloat16 or float32, read once, into x_fp8 (float8_e4m3fn [M, K]) and sf (float32 "
      "[M, ceil(K/128)]) as per_token_cast_to_fp8(x), and into xt_fp8 (float8_e4m3fn [K, M]) and sft (float32 "
      "[K, ceil(M/128)]) as per_token_cast_to_fp8(x.t()); sf and sft with any strides.");
  module.def(
      "per_block_cast_transpose_to_fp8",
      [](nb::handle x, nb::handle x_fp8, nb::handle sf, nb::handle xt_fp8, nb::handle sft, bool use_ue8m0) {
        cast_transpose_py(&per_block_cast_transpose_to_fp8, "per_block_cast_transpose_to_fp8", x, x_fp8, sf, xt_fp8,
                          sft, use_ue8m0);
      },
      "x"_a.none(), "x_fp8"_a.none(), "sf"_a.none(), "xt_fp8"_a.none(), "sft"_a.none(), "use_ue8m0"_a,
      "Quantizes x [N, K], bfloat16 or float32, read once, into x_fp8 (float8_e4m3fn [N, K]) and sf (float32 "
      "[ceil(N/128), ceil(K/128)]) as per_block_cast_to_fp8(x), and into xt_fp8 (float8_e4m3fn [K, N]) and "
      "sft (float32 [ceil(K/128), ceil(N/128)]) as per_block_cast_to_fp8(x.t()); or each matrix of a stack "
      "x [G, N, K] so, every output with a leading G.");
  module.def("grouped_cast_transpose_to_fp8", &grouped_cast_transpose_py, "x"_a.none(), "ks"_a.none(),
             "x_fp8"_a.none(), "sf"_a.none(), "xt_fp8"_a.none(), "sft"_a.none(), "use_ue8m0"_a,
             "Quantizes x [sum(ks), H] as cast_transpose_to_fp8, expert g owning the ks[g] rows (possibly 0) after "
             "those of the experts before it, each expert's rows padded with zero rows to p_g, ks[g] rounded up to a "
             "multiple of 128, in the outputs (P rows in all): x_fp8 [P, H], sf [P, ceil(H/128)], xt_fp8 "
             "float8_e4m3fn [P * H], expert g's [H, p_g] block at element sum(p[:g]) * H, and sft float32 "
             "[H, P/128].");
  module.def("copy_scales", &copy_scales_py, "sf"_a.none(), "out"_a.none(),
             "Copies float32 scales sf [M, KB] (or [G, M, KB]) into out, of the same shape and any layout.");
  register_quantize_int8_bindings(module);
}

}  // namespace fgemm::python
