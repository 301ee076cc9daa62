#include "jit/ptxas_stats.hpp"

#include <cctype>
#include <sstream>
#include <vector>

#include "fgemm/error.hpp"

namespace fgemm::jit {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

bool contains(const std::string& line, const std::string& part) {
  return line.find(part) != std::string::npos;
}

bool ends_with(const std::string& line, const std::string& suffix) {
  std::string trimmed = line;
  while (!trimmed.empty() && std::isspace(static_cast<unsigned char>(trimmed.back()))) trimmed.pop_back();
  return trimmed.size() >= suffix.size() &&
         trimmed.compare(trimmed.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The number written just before `unit` in `line` ("Used 40 registers" with unit " registers" gives 40),
// or 0 where `line` does not mention `unit`.
int number_before(const std::string& line, const std::string& unit) {
  const std::size_t end = line.find(unit);
  if (end == std::string::npos) return 0;
  std::size_t begin = end;
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  return begin == end ? 0 : std::stoi(line.substr(begin, end - begin));
}

}  // namespace

PtxasStats parse_ptxas_stats(const std::string& log, const std::string& kernel_name) {
  const std::vector<std::string> lines = split_lines(log);
  const std::string entry_marker = "Compiling entry function '" + kernel_name + "'";
  std::size_t line = 0;
  while (line < lines.size() && !contains(lines[line], entry_marker)) ++line;
  if (line == lines.size())
    throw Error(ErrorKind::Runtime,
                "fgemm: the compiler reports no kernel named '" + kernel_name +
                    "' (it must be an extern \"C\" __global__ function of the source):\n" + log);

  // The entry's section runs to the next entry; the properties of functions it calls may come first.
  PtxasStats stats;
  bool in_own_properties = false;
  bool found_registers = false;
  for (++line; line < lines.size() && !contains(lines[line], "Compiling entry function"); ++line) {
    const std::string& text = lines[line];
    if (contains(text, "Function properties for ")) {
      in_own_properties = ends_with(text, "Function properties for " + kernel_name);
    } else if (in_own_properties && contains(text, " bytes stack frame")) {
      stats.stack_frame_bytes = number_before(text, " bytes stack frame");
      stats.spill_store_bytes = number_before(text, " bytes spill stores");
      stats.spill_load_bytes = number_before(text, " bytes spill loads");
      in_own_properties = false;
    } else if (contains(text, "Used ") && contains(text, " registers")) {
      stats.registers = number_before(text, " registers");
      stats.shared_memory_bytes = number_before(text, " bytes smem");
      found_registers = true;
    }
  }
  if (!found_registers)
    throw Error(ErrorKind::Runtime,
                "fgemm: the compiler log has no register count for kernel '" + kernel_name + "':\n" + log);
  return stats;
}

std::string to_string(const PtxasStats& stats) {
  return std::to_string(stats.registers) + " registers, " + std::to_string(stats.spill_store_bytes) +
         " bytes spill stores, " + std::to_string(stats.spill_load_bytes) + " bytes spill loads, " +
         std::to_string(stats.stack_frame_bytes) + " bytes stack frame, " +
         std::to_string(stats.shared_memory_bytes) + " bytes shared memory";
}

}  // namespace fgemm::jit
