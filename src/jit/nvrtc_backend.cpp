// NVRTC compiles in process: the sources and headers are passed as strings.
#include <filesystem>
#include <memory>

#include "driver/nvrtc.hpp"
#include "fgemm/error.hpp"
#include "jit/compiler_backends.hpp"
#include "jit/environment.hpp"

namespace fgemm::jit {
namespace {

void check(const driver::Nvrtc& nvrtc, driver::nvrtcResult result, const char* what) {
  if (result != driver::NVRTC_SUCCESS)
    throw Error(ErrorKind::Runtime,
                std::string("fgemm: ") + what + " failed: " + nvrtc.nvrtcGetErrorString(result));
}

struct ProgramDeleter {
  const driver::Nvrtc* nvrtc;
  void operator()(driver::NvrtcProgramState* program) const { nvrtc->nvrtcDestroyProgram(&program); }
};
using Program = std::unique_ptr<driver::NvrtcProgramState, ProgramDeleter>;

std::string program_log(const driver::Nvrtc& nvrtc, driver::nvrtcProgram program) {
  std::size_t size = 0;
  check(nvrtc, nvrtc.nvrtcGetProgramLogSize(program, &size), "nvrtcGetProgramLogSize");
  std::string log(size, '\0');
  check(nvrtc, nvrtc.nvrtcGetProgramLog(program, log.data()), "nvrtcGetProgramLog");
  log.resize(log.find('\0') == std::string::npos ? log.size() : log.find('\0'));
  return log;
}

}  // namespace

Toolchain nvrtc_toolchain() {
  const driver::Nvrtc& nvrtc = driver::nvrtc();
  std::error_code no_size;
  const auto library_bytes = std::filesystem::file_size(nvrtc.path, no_size);
  Toolchain toolchain;
  toolchain.compiler = Compiler::Nvrtc;
  // The library's size tells apart patch releases, which nvrtcVersion does not.
  toolchain.version = "NVRTC " + std::to_string(nvrtc.major) + "." + std::to_string(nvrtc.minor) + " (" +
                      std::to_string(no_size ? 0 : library_bytes) + " bytes)";
  toolchain.flags = {"-arch=sm_90a", "-std=c++17", "-default-device", "-Xptxas=-v"};
  // NVRTC 12.9 and newer keep a cache of their own where a driver is installed, and a hit skips ptxas,
  // whose report fgemm reads; fgemm's disk cache serves the same purpose.
  if (nvrtc.major > 12 || (nvrtc.major == 12 && nvrtc.minor >= 9)) toolchain.flags.push_back("--no-cache");
  return toolchain;
}

CompilerOutput compile_with_nvrtc(const KernelSpec& spec, const Toolchain& toolchain,
                                  const std::vector<EmbeddedHeader>& headers) {
  const driver::Nvrtc& nvrtc = driver::nvrtc();
  std::vector<const char*> header_texts;
  std::vector<const char*> header_names;
  for (const EmbeddedHeader& header : headers) {
    header_texts.push_back(header.text);
    header_names.push_back(header.name);
  }
  driver::nvrtcProgram created = nullptr;
  check(nvrtc,
        nvrtc.nvrtcCreateProgram(&created, spec.source.c_str(), (spec.name + ".cu").c_str(),
                                 static_cast<int>(headers.size()), header_texts.data(), header_names.data()),
        "nvrtcCreateProgram");
  const Program program(created, ProgramDeleter{&nvrtc});

  std::vector<const char*> options;
  std::string command = "NVRTC";
  for (const std::string& flag : toolchain.flags) {
    options.push_back(flag.c_str());
    command += " " + flag;
  }
  debug_log("compiling " + spec.name + ": " + command);
  const driver::nvrtcResult compiled =
      nvrtc.nvrtcCompileProgram(program.get(), static_cast<int>(options.size()), options.data());

  CompilerOutput output;
  output.log = program_log(nvrtc, program.get());
  if (compiled != driver::NVRTC_SUCCESS) {
    output.log += std::string("\n") + nvrtc.nvrtcGetErrorString(compiled);
    return output;
  }
  std::size_t size = 0;
  check(nvrtc, nvrtc.nvrtcGetCUBINSize(program.get(), &size), "nvrtcGetCUBINSize");
  output.cubin.resize(size);
  check(nvrtc, nvrtc.nvrtcGetCUBIN(program.get(), output.cubin.data()), "nvrtcGetCUBIN");
  output.succeeded = true;
  return output;
}

}  // namespace fgemm::jit
