// Helpers the unit tests share.
#pragma once
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "site/registry.h"
#include "util/error.h"

namespace hpclaunch::test {

// The built-in site profiles, read once for every test that asks.
inline const SiteRegistry& sites() {
  static const SiteRegistry reg = builtin_sites();
  return reg;
}

// A `squeue -O JobArrayID:40|,State:24|,Reason:200|,exit_code:12|` line as the test cluster's squeue 22.05.8 writes
// it (each field padded and ended by '|'; the exit code as a wait status: exit 3 is 768).
inline std::string squeue_line(const std::string& id, const std::string& state, const std::string& reason, int status) {
  auto pad = [](std::string s, size_t n) { return s + std::string(n > s.size() ? n - s.size() : 0, ' ') + "|"; };
  return pad(id, 40) + pad(state, 24) + pad(reason, 200) + pad(std::to_string(status), 12) + "\n";
}

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
