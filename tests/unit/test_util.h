// Helpers the unit tests share.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "util/error.h"

namespace hpclaunch::test {

// The message of the hpclaunch::Error `f` throws, or "(no error)".
template <class F>
std::string error_of_call(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// A temporary directory `base` (removed at the end) and XDG_STATE_HOME below it, so that a test's submissions
// never reach the user's job index.
struct TempState {
  std::filesystem::path base;
  std::string old_state;
  explicit TempState(const std::string& name)
      : base(std::filesystem::temp_directory_path() / ("hpclaunch-" + name + "-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(base);
    std::filesystem::create_directories(base);
    if (const char* s = std::getenv("XDG_STATE_HOME")) old_state = s;
    ::setenv("XDG_STATE_HOME", (base / "state").c_str(), 1);
  }
  ~TempState() {
    if (old_state.empty()) ::unsetenv("XDG_STATE_HOME");
    else ::setenv("XDG_STATE_HOME", old_state.c_str(), 1);
    std::filesystem::remove_all(base);
  }
};

}  // namespace hpclaunch::test
