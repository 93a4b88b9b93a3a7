#include "scheduler/job_state.h"

namespace hpclaunch {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::pending: return "pending";
    case Phase::running: return "running";
    case Phase::completed: return "completed";
    case Phase::failed: return "failed";
    case Phase::cancelled: return "cancelled";
    case Phase::timeout: return "timeout";
    case Phase::finished_unknown: return "finished";
  }
  return "?";
}

std::string describe(const JobState& s) {
  if (s.phase == Phase::finished_unknown)
    return "finished (state unknown to scheduler" + (s.reason.empty() ? std::string() : "; " + s.reason) + ")";
  std::string out = s.raw.empty() ? to_string(s.phase) : s.raw;
  if (s.phase == Phase::pending && !s.reason.empty()) return out + " (" + s.reason + ")";
  if (s.finished() && s.exit_code && *s.exit_code != 0) out += " (exit " + std::to_string(*s.exit_code) + ")";
  if (s.finished() && !s.reason.empty() && s.reason != "NonZeroExitCode" && !s.exit_code) out += " (" + s.reason + ")";
  return out;
}

}  // namespace hpclaunch
