#include "jit/process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "fgemm/error.hpp"

extern char** environ;

namespace fgemm::jit {

bool is_executable_file(const std::string& path) {
  std::error_code error;
  return std::filesystem::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

ProcessResult run_process(const std::vector<std::string>& argv) {
  // Close-on-exec, so that children other threads start meanwhile do not hold the pipe open.
  int pipe_ends[2];
  if (pipe2(pipe_ends, O_CLOEXEC) != 0)
    throw Error(ErrorKind::Runtime,
                "fgemm: cannot create a pipe to run " + argv[0] + ": " + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDERR_FILENO);
  std::vector<char*> arguments;
  for (const std::string& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
  arguments.push_back(nullptr);
  pid_t child = 0;
  const int spawn_error = posix_spawn(&child, argv[0].c_str(), &actions, nullptr, arguments.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_ends[1]);
  if (spawn_error != 0) {
    close(pipe_ends[0]);
    throw Error(ErrorKind::Runtime, "fgemm: cannot run " + argv[0] + ": " + std::strerror(spawn_error));
  }

  ProcessResult result;
  char buffer[4096];
  for (;;) {
    const ssize_t count = read(pipe_ends[0], buffer, sizeof(buffer));
    if (count > 0)
      result.output.append(buffer, static_cast<std::size_t>(count));
    else if (count == 0 || errno != EINTR)
      break;
  }
  close(pipe_ends[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) continue;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::string find_cuda_tool(const std::string& name) {
  std::vector<std::string> directories;
  if (const char* cuda_home = std::getenv("CUDA_HOME"); cuda_home != nullptr && *cuda_home != '\0')
    directories.push_back(std::string(cuda_home) + "/bin");
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::istringstream entries(path);
    for (std::string entry; std::getline(entries, entry, ':');)
      if (!entry.empty()) directories.push_back(entry);
  }
  directories.push_back("/usr/local/cuda/bin");
  for (const std::string& directory : directories)
    if (is_executable_file(directory + "/" + name)) return directory + "/" + name;
  return "";
}

TemporaryDirectory::TemporaryDirectory() {
  std::string pattern = (std::filesystem::temp_directory_path() / "fgemm-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr)
    throw Error(ErrorKind::Runtime,
                "fgemm: cannot create a temporary directory " + pattern + ": " + std::strerror(errno));
  path_ = pattern;
}

TemporaryDirectory::~TemporaryDirectory() {
  std::error_code ignored;  // a directory that cannot be removed is left behind, not worth a failure
  std::filesystem::remove_all(path_, ignored);
}

void write_file(const std::string& path, const void* data, std::size_t size) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  file.close();
  if (!file) throw Error(ErrorKind::Runtime, "fgemm: cannot write " + path);
}

}  // namespace fgemm::jit
