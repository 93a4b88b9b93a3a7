// hpclaunch-train's progress for the agent's hang watch (docs/agent.md, "Hangs"): the step just done, written to
// HPCLAUNCH_PROGRESS_FILE at most once a second, as hpclaunch.progress.step() does for Python. No variable: nothing.
#pragma once
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace hpctrain {

class ProgressFile {
 public:
  explicit ProgressFile(const char* path) : m_path(path ? path : "") {}
  void step(int64_t step) {
    if (m_path.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (m_written && now - m_last < std::chrono::seconds(1)) return;
    m_written = true;
    m_last = now;
    // In place, not renamed: the agent reads the file's time; a half-written number reads as no step.
    if (std::FILE* f = std::fopen(m_path.c_str(), "w")) {
      std::fprintf(f, "%lld", static_cast<long long>(step));
      std::fclose(f);
    }
  }

 private:
  std::string m_path;
  bool m_written = false;
  std::chrono::steady_clock::time_point m_last;
};

}  // namespace hpctrain
