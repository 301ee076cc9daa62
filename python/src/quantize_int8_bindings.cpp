#include "quantize_int8_bindings.hpp"

#include "core/quantize_int8_problem.hpp"
#include "fgemm/quantize_int8.hpp"
#include "torch_tensor.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fgemm::python {
namespace {

using detail::Int8Quantizer;

// Reads the tensors (named as `quantizer`'s errors name them), then calls `quantize(input, codes, scales,
// stream)` with the stream torch uses on the input's device and the GIL released: on the CPU the work runs
// inside the call, on a GPU the first call of a shape compiles a kernel (the caller's references keep the
// tensors alive meanwhile).
template <typename Quantize>
void quantize_int8_py(Int8Quantizer quantizer, nb::handle x, nb::handle codes, nb::handle sf,
                      const Quantize& quantize) {
  const detail::Int8QuantizerNames names = detail::names_of(quantizer);
  const TensorView input = tensor_view(x, names.op, names.input);
  const TensorView output = tensor_view(codes, names.op, names.codes);
  const TensorView scales = tensor_view(sf, names.op, "sf");
  const Stream stream = current_stream(input.device);
  nb::gil_scoped_release released;
  quantize(input, output, scales, stream);
}

}  // namespace

void register_quantize_int8_bindings(nb::module_& module) {
  module.def(
      "per_token_cast_to_int8",
      [](nb::handle x, nb::handle x_int8, nb::handle sf) {
        quantize_int8_py(Int8Quantizer::PerToken, x, x_int8, sf, per_token_cast_to_int8);
      },
      "x"_a.none(), "x_int8"_a.none(), "sf"_a.none(),
      "Quantizes x [M, K] (or [G, M, K]), bfloat16, float16 or float32, into x_int8 (int8, the shape of x) and sf "
      "(float32 [M], any strides): one scale per token (row).");
  module.def(
      "per_channel_cast_to_int8",
      [](nb::handle w, nb::handle w_int8, nb::handle sf) {
        quantize_int8_py(Int8Quantizer::PerChannel, w, w_int8, sf, per_channel_cast_to_int8);
      },
      "w"_a.none(), "w_int8"_a.none(), "sf"_a.none(),
      "Quantizes w [N, K] (or [G, N, K]), bfloat16, float16 or float32, into w_int8 (int8, the shape of w) and sf "
      "(float32 [N], any strides): one scale per output channel (row).");
  module.def(
      "per_token_group_cast_to_int8",
      [](nb::handle x, nb::handle x_int8, nb::handle sf, nb::handle group_size) {
        const std::int64_t columns = int_argument(group_size, "per_token_group_cast_to_int8", "group_size");
        quantize_int8_py(Int8Quantizer::PerTokenGroup, x, x_int8, sf,
                         [columns](const TensorView& input, const TensorView& codes, const TensorView& scales,
                                   Stream stream) {
                           per_token_group_cast_to_int8(input, codes, scales, columns, stream);
                         });
      },
      "x"_a.none(), "x_int8"_a.none(), "sf"_a.none(), "group_size"_a.none(),
      "Quantizes x [M, K] (or [G, M, K]), bfloat16, float16 or float32, into x_int8 (int8, the shape of x) and sf "
      "(float32 [M, ceil(K/group_size)], any strides): one scale per 1 x group_size block, group_size 32, 64 or "
      "128.");
  module.def(
      "per_block_cast_to_int8",
      [](nb::handle w, nb::handle w_int8, nb::handle sf) {
        quantize_int8_py(Int8Quantizer::PerBlock, w, w_int8, sf, per_block_cast_to_int8);
      },
      "w"_a.none(), "w_int8"_a.none(), "sf"_a.none(),
      "Quantizes w [N, K] (or [G, N, K]), bfloat16, float16 or float32, into w_int8 (int8, the shape of w) and sf "
      "(float32 [ceil(N/128), ceil(K/128)], any strides): one scale per 128 x 128 block.");
}

}  // namespace fgemm::python
