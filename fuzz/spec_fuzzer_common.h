// Shared body of the spec fuzzers: a parser may throw railsim::Error for bad
// input and nothing else; any other exception, crash or sanitizer report is a bug.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "railsim/core/error.h"

namespace railsim::fuzz {

template <typename Parse>
int RunParser(const uint8_t* data, size_t size, Parse parse) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    parse(text);
  } catch (const railsim::Error&) {
    // Expected for bad input.
  }
  return 0;
}

}  // namespace railsim::fuzz
