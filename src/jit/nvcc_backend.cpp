// nvcc runs as a child process on files in a private temporary directory.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <sstream>

#include "fgemm/error.hpp"
#include "jit/compiler_backends.hpp"
#include "jit/environment.hpp"
#include "jit/process.hpp"

namespace fgemm::jit {
namespace {

std::string locate_nvcc() {
  // FGEMM_NVCC: the nvcc executable to use when FGEMM_JIT_COMPILER=nvcc.
  if (const char* path = std::getenv("FGEMM_NVCC"); path != nullptr && *path != '\0') {
    if (!is_executable_file(path))
      throw Error(ErrorKind::InvalidValue,
                  std::string("fgemm: FGEMM_NVCC must name the nvcc executable, got \"") + path + "\"");
    return path;
  }
  std::string found = find_cuda_tool("nvcc");
  if (found.empty())
    throw Error(ErrorKind::Unsupported,
                "fgemm: nvcc was not found in $CUDA_HOME/bin, on PATH or in /usr/local/cuda/bin; set "
                "FGEMM_NVCC to its path, or use NVRTC (FGEMM_JIT_COMPILER=nvrtc)");
  return found;
}

// The release lines of `nvcc --version`, asked once per executable.
std::string nvcc_version(const std::string& executable) {
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto found = versions.find(executable); found != versions.end()) return found->second;
  const ProcessResult result = run_process({executable, "--version"});
  if (result.exit_code != 0)
    throw Error(ErrorKind::Runtime, "fgemm: " + executable + " --version failed:\n" + result.output);
  std::string version;
  std::istringstream lines(result.output);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("Cuda compilation tools", 0) == 0 || line.rfind("Build ", 0) == 0)
      version += (version.empty() ? "" : "; ") + line;
  return versions[executable] = version.empty() ? result.output : version;
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) throw Error(ErrorKind::Runtime, "fgemm: cannot read " + path);
  return bytes;
}

}  // namespace

Toolchain nvcc_toolchain() {
  Toolchain toolchain;
  toolchain.compiler = Compiler::Nvcc;
  toolchain.executable = locate_nvcc();
  toolchain.version = "nvcc " + nvcc_version(toolchain.executable);
  toolchain.flags = {"-gencode=arch=compute_90a,code=sm_90a", "-cubin", "-O3", "-std=c++17", "-Xptxas=-v"};
  return toolchain;
}

CompilerOutput compile_with_nvcc(const KernelSpec& spec, const Toolchain& toolchain,
                                 const std::vector<EmbeddedHeader>& headers) {
  const TemporaryDirectory directory;
  const std::filesystem::path include_dir = std::filesystem::path(directory.path()) / "include";
  for (const EmbeddedHeader& header : headers) {
    const std::filesystem::path path = include_dir / header.name;
    std::filesystem::create_directories(path.parent_path());
    write_file(path.string(), header.text, std::char_traits<char>::length(header.text));
  }
  const std::string source = directory.path() + "/" + spec.name + ".cu";
  const std::string cubin = directory.path() + "/" + spec.name + ".cubin";
  write_file(source, spec.source.data(), spec.source.size());

  std::vector<std::string> argv = {toolchain.executable};
  argv.insert(argv.end(), toolchain.flags.begin(), toolchain.flags.end());
  argv.insert(argv.end(), {"-I" + include_dir.string(), "-o", cubin, source});
  std::string command;
  for (const std::string& argument : argv) command += (command.empty() ? "" : " ") + argument;
  debug_log("compiling " + spec.name + ": " + command);

  const ProcessResult result = run_process(argv);
  CompilerOutput output;
  output.log = result.output;
  output.succeeded = result.exit_code == 0;
  if (output.succeeded) output.cubin = read_file(cubin);
  return output;
}

}  // namespace fgemm::jit
