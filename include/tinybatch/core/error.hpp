// Errors: every misuse becomes an exception whose message names the routine and the argument.
#pragma once

#include <stdexcept>
#include <string>
#include <type_traits>

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
inline void require(bool ok, const char* routine, const char* what) {
  if (!ok) throw invalid_argument(std::string("tinybatch::") + routine + ": " + what);
}
/// With the message built only on failure: every call runs its argument checks, and their
/// messages built eagerly (a dozen heap strings) cost as much as solving a few hundred 2 x 2
/// systems (0.1 - 0.2 us a call, 2 - 5% of a 128 KiB batch at n = 2).
template <class F>
  requires std::is_invocable_r_v<std::string, F>
void require(bool ok, const char* routine, F&& what) {
  if (!ok) throw invalid_argument(std::string("tinybatch::") + routine + ": " + what());
}
}  // namespace detail

}  // namespace tinybatch
