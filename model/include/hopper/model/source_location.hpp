// A call site in a kernel body or a test, as the model's reports name it: file:line (function).
// Taken with default arguments at the call (GCC's and Clang's __builtin_FILE / __builtin_LINE /
// __builtin_FUNCTION, what std::source_location is made of in C++20).
#pragma once
#include <cstring>
#include <string>

namespace hopper::model {

struct src_loc {
  const char* file = nullptr;
  unsigned line = 0;
  const char* function = nullptr;

  static constexpr src_loc current(const char* f = __builtin_FILE(), unsigned l = __builtin_LINE(),
                                   const char* fn = __builtin_FUNCTION()) {
    return src_loc{f, l, fn};
  }
  bool known() const { return file != nullptr; }
  // " at dir/file.hpp:123 (function)", or empty when unknown: the file with its last directory.
  std::string at() const {
    if (!known()) return {};
    const char* base = file;
    const char* slash = std::strrchr(file, '/');
    if (slash) {
      const char* prev = slash;
      while (prev > file && *(prev - 1) != '/') --prev;
      base = prev;
    }
    std::string r = std::string(" at ") + base + ":" + std::to_string(line);
    if (function && *function) {  // the name without template arguments
      const char* lt = std::strchr(function, '<');
      r += " (" + (lt ? std::string(function, size_t(lt - function)) : std::string(function)) + ")";
    }
    return r;
  }
};

}  // namespace hopper::model
