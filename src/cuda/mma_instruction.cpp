#include "cuda/mma_instruction.hpp"

#include <sstream>

#include "fgemm/error.hpp"

namespace fgemm::cuda {
namespace {

struct MmaRow {
  MmaType type;
  const char* ptx_types;     // .dtype.atype.btype of the instruction
  int k;                     // K of one instruction: 32 bytes of a K-major row
  const char* register_type; // of the accumulators
  const char* constraint;    // their asm constraint
  bool scales_inputs;        // takes the imm-scale-a/b operands (negation), and the 16-bit types their transposes
  bool sparse_small_n;       // INT8: N in {8, 16, 24} and then multiples of 16 only
};

constexpr MmaRow kMmaTable[] = {
    {MmaType::E4m3F32, "f32.e4m3.e4m3", 32, "float", "+f", true, false},
    {MmaType::Bf16F32, "f32.bf16.bf16", 16, "float", "+f", true, false},
    {MmaType::F16F32, "f32.f16.f16", 16, "float", "+f", true, false},
    {MmaType::S8S32, "s32.s8.s8", 32, "int32_t", "+r", false, true},
};

const MmaRow& row_of(MmaType type) {
  for (const MmaRow& row : kMmaTable)
    if (row.type == type) return row;
  throw Error(ErrorKind::Runtime, "fgemm: no wgmma row for this type");
}

bool is_16_bit(MmaType type) { return type == MmaType::Bf16F32 || type == MmaType::F16F32; }

}  // namespace

bool mma_n_is_valid(MmaType type, int n) {
  if (n < 8 || n > 256 || n % 8 != 0) return false;
  return !row_of(type).sparse_small_n || n <= 24 || n % 16 == 0;
}

std::string mma_struct_source(MmaType type, int n, bool transpose_a, bool transpose_b) {
  const MmaRow& row = row_of(type);
  if (!mma_n_is_valid(type, n))
    throw Error(ErrorKind::InvalidValue, "fgemm: wgmma ." + std::string(row.ptx_types) + " has no N = " +
                                             std::to_string(n));
  if ((transpose_a || transpose_b) && !is_16_bit(type))
    throw Error(ErrorKind::InvalidValue,
                "fgemm: wgmma ." + std::string(row.ptx_types) + " reads K-major operands only");
  const int regs = n / 2;
  std::ostringstream operands, constraints;
  for (int i = 0; i < regs; ++i) {
    operands << (i ? ", " : "") << "%" << i;
    constraints << (i ? ", " : "") << "\"" << row.constraint << "\"(d[" << i << "])";
  }
  // After the scale-d predicate: no negation of A and B (1, 1), and for 16-bit types their transposes.
  std::string immediates;
  if (row.scales_inputs) immediates = ", 1, 1";
  if (is_16_bit(type)) immediates += std::string(", ") + (transpose_a ? "1" : "0") + ", " + (transpose_b ? "1" : "0");
  std::ostringstream out;
  out << "namespace fgemm::sm90 {\n"
      << "struct Wgmma {\n"
      << "  static constexpr uint32_t N = " << n << ";\n"
      << "  static constexpr uint32_t K = " << row.k << ";\n"
      << "  using Accumulator = " << row.register_type << ";\n"
      << "  __device__ __forceinline__ static void mma(" << row.register_type << " (&d)[" << regs
      << "], uint64_t desc_a, uint64_t desc_b, bool accumulate) {\n"
      << "    asm volatile(\n"
      << "        \"{\\n.reg .pred p;\\nsetp.ne.b32 p, %" << regs + 2 << ", 0;\\n\"\n"
      << "        \"wgmma.mma_async.sync.aligned.m64n" << n << "k" << row.k << "." << row.ptx_types << " {"
      << operands.str() << "}, %" << regs << ", %" << regs + 1 << ", p" << immediates << ";\\n}\\n\"\n"
      << "        : " << constraints.str() << "\n"
      << "        : \"l\"(desc_a), \"l\"(desc_b), \"r\"(static_cast<uint32_t>(accumulate)));\n"
      << "  }\n"
      << "};\n"
      << "}  // namespace fgemm::sm90\n";
  return out.str();
}

}  // namespace fgemm::cuda
