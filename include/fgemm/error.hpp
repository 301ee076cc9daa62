// The one exception type fgemm throws. Its kind tells bindings which language-level error to raise.
#pragma once

#include <stdexcept>
#include <string>

namespace fgemm {

enum class ErrorKind {
  InvalidValue,  // a shape, stride, alignment or value that breaks the contract (Python: ValueError)
  InvalidType,   // a wrong element type or a non-tensor argument (Python: TypeError)
  Unsupported,   // valid input this build or this machine cannot run (Python: RuntimeError)
  Runtime,       // a failure of the driver, the compiler or the system (Python: RuntimeError)
};

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace fgemm
