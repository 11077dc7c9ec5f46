// Errors: every misuse becomes an exception whose message names the routine and the argument.
#pragma once

#include <stdexcept>
#include <string>

namespace tinybatch {

/// Bad arguments detected at run time (sizes, counts, leading dimensions, null pointers).
/// Sizes that are types are checked at compile time instead.
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// A CUDA runtime, cuBLAS or cuSOLVER call failed; what() names the call and the error.
class cuda_error : public std::runtime_error {
 public:
  cuda_error(const std::string& call, int code, const std::string& text)
      : std::runtime_error(call + " failed: " + text + " (code " + std::to_string(code) + ")"),
        code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

namespace detail {
inline void require(bool ok, const char* routine, const std::string& what) {
  if (!ok) throw invalid_argument(std::string("tinybatch::") + routine + ": " + what);
}
}  // namespace detail

}  // namespace tinybatch
