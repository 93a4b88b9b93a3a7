// What the fuzz targets share: the input as text, and a check of a parser's promise that stops the run like a
// crash (libFuzzer then saves the input), e.g. "what was parsed formats back to the same value".
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

inline std::string_view fuzz_text(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

#define FUZZ_CHECK(cond)                                                                   \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #cond);   \
      std::abort();                                                                        \
    }                                                                                      \
  } while (0)
