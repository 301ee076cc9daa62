// The library's diagnostics (FGEMM_JIT_DEBUG, FGEMM_PRINT_CONFIGS, FGEMM_PTXAS_VERBOSE, FGEMM_DUMP_SASS and
// warnings): one sink, standard error by default. The Python package routes them to its "fgemm" logger.
#pragma once

#include <string>

namespace fgemm::detail {

enum class LogLevel { Debug, Info, Warning };

using LogSink = void (*)(LogLevel level, const std::string& message);

// Writes `message` (one line or several, without a final newline) to the current sink.
void log(LogLevel level, const std::string& message);

// Replaces the sink; nullptr restores standard error. Thread-safe with log().
void set_log_sink(LogSink sink);

}  // namespace fgemm::detail
