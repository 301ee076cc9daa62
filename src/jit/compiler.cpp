#include "jit/compiler.hpp"

#include <cctype>
#include <chrono>
#include <cstdlib>

#include "core/log.hpp"
#include "fgemm/error.hpp"
#include "jit/compiler_backends.hpp"
#include "jit/environment.hpp"
#include "jit/sass_dump.hpp"

namespace fgemm::jit {
namespace {

bool is_identifier(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

void validate(const KernelSpec& spec) {
  if (!is_identifier(spec.name))
    throw Error(ErrorKind::InvalidValue,
                "fgemm: a kernel's name must be a C identifier, got \"" + spec.name + "\"");
  if (spec.source.empty())
    throw Error(ErrorKind::InvalidValue, "fgemm: kernel '" + spec.name + "' has an empty source");
  if (spec.dynamic_smem_bytes < 0)
    throw Error(ErrorKind::InvalidValue, "fgemm: kernel '" + spec.name +
                                             "' must have dynamic_smem_bytes >= 0, got " +
                                             std::to_string(spec.dynamic_smem_bytes));
}

}  // namespace

const char* to_string(Compiler compiler) { return compiler == Compiler::Nvrtc ? "nvrtc" : "nvcc"; }

Compiler compiler_from_environment() {
  // FGEMM_JIT_COMPILER: the compiler of the kernels, "nvrtc" (the default) or "nvcc".
  const char* value = std::getenv("FGEMM_JIT_COMPILER");
  if (value == nullptr || std::string(value).empty() || std::string(value) == "nvrtc") return Compiler::Nvrtc;
  if (std::string(value) == "nvcc") return Compiler::Nvcc;
  throw Error(ErrorKind::InvalidValue,
              std::string("fgemm: FGEMM_JIT_COMPILER must be \"nvrtc\" or \"nvcc\", got \"") + value + "\"");
}

Toolchain find_toolchain(Compiler compiler) {
  Toolchain toolchain = compiler == Compiler::Nvrtc ? nvrtc_toolchain() : nvcc_toolchain();
  // FGEMM_JIT_LINE_INFO: compile with line information, so that compute-sanitizer and the profilers name the
  // kernel headers' lines. A flag of the toolchain, and so of the kernels' cache key.
  if (environment_flag("FGEMM_JIT_LINE_INFO")) toolchain.flags.push_back("-lineinfo");
  return toolchain;
}

CompileResult compile(const KernelSpec& spec, const Toolchain& toolchain,
                      const std::vector<EmbeddedHeader>& headers) {
  validate(spec);
  const auto start = std::chrono::steady_clock::now();
  CompilerOutput output = toolchain.compiler == Compiler::Nvrtc ? compile_with_nvrtc(spec, toolchain, headers)
                                                                : compile_with_nvcc(spec, toolchain, headers);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  if (!output.succeeded)
    throw Error(ErrorKind::Runtime, "fgemm: compiling kernel '" + spec.name + "' with " +
                                        to_string(toolchain.compiler) + " failed:\n" + output.log);
  debug_log("compiled " + spec.name + " with " + toolchain.version + " in " +
            std::to_string(elapsed.count()) + " s");

  CompileResult result;
  result.ptxas = parse_ptxas_stats(output.log, spec.name);
  result.cubin = std::move(output.cubin);
  result.log = std::move(output.log);
  // FGEMM_PTXAS_VERBOSE: print the registers, spills, stack and shared memory of each compiled kernel.
  if (environment_flag("FGEMM_PTXAS_VERBOSE"))
    detail::log(detail::LogLevel::Debug, "fgemm jit: " + spec.name + ": " + to_string(result.ptxas));
  // FGEMM_DUMP_SASS: print the SASS of each compiled kernel (needs the toolkit's cuobjdump).
  if (environment_flag("FGEMM_DUMP_SASS")) dump_sass(spec.name, result.cubin);
  return result;
}

CompileResult compile(const KernelSpec& spec, Compiler compiler) {
  return compile(spec, find_toolchain(compiler));
}

}  // namespace fgemm::jit
