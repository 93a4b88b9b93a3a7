#include "dialect/job_state.h"

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
  if (s.array) return s.raw;
  if (s.phase == Phase::finished_unknown)
    return "finished (state unknown to scheduler" + (s.reason.empty() ? std::string() : "; " + s.reason) + ")";
  std::string out = s.raw.empty() ? to_string(s.phase) : s.raw;
  if (s.phase == Phase::pending && !s.reason.empty()) return out + " (" + s.reason + ")";
  if (s.finished() && s.exit_code && *s.exit_code != 0) out += " (exit " + std::to_string(*s.exit_code) + ")";
  if (s.finished() && !s.reason.empty() && s.reason != "NonZeroExitCode" && !s.exit_code) out += " (" + s.reason + ")";
  return out;
}

JobState summarize_tasks(const std::vector<JobState>& tasks) {
  static const Phase k_order[] = {Phase::running, Phase::pending,   Phase::completed,       Phase::failed,
                                  Phase::timeout, Phase::cancelled, Phase::finished_unknown};
  int count[7] = {};
  for (const auto& t : tasks) ++count[static_cast<int>(t.phase)];
  auto n = [&](Phase p) { return count[static_cast<int>(p)]; };
  JobState s;
  s.array = true;
  s.raw = std::to_string(tasks.size()) + " task" + (tasks.size() == 1 ? "" : "s") + ":";
  bool first = true;
  for (Phase p : k_order)
    if (n(p) > 0) {
      s.raw += (first ? " " : ", ") + std::to_string(n(p)) + " " + to_string(p);
      first = false;
    }
  const int all = static_cast<int>(tasks.size());
  if (n(Phase::pending) == all) s.phase = Phase::pending;
  else if (n(Phase::running) > 0 || n(Phase::pending) > 0) s.phase = Phase::running;
  else if (n(Phase::completed) == all) s.phase = Phase::completed;
  else if (n(Phase::failed) > 0) s.phase = Phase::failed;
  else if (n(Phase::timeout) > 0) s.phase = Phase::timeout;
  else if (n(Phase::cancelled) > 0) s.phase = Phase::cancelled;
  else s.phase = Phase::finished_unknown;
  return s;
}

}  // namespace hpclaunch
