#include "jobs/progress.h"

#include <fmt/core.h>

#include <cmath>

namespace hpclaunch {

std::string format_duration(double seconds) {
  long long s = std::llround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

std::string progress_line(const Progress& p) {
  std::string line = fmt::format("{} {}", p.job_id, describe(p.state));
  if (p.elapsed_s >= 0) line += " " + format_duration(p.elapsed_s);
  if (const auto& s = p.latest.step) {
    line += fmt::format(" step {}", s->step);
    if (p.latest.has_loss) line += fmt::format(" loss {:.4g}", s->loss);
    if (s->lr > 0) line += fmt::format(" lr {:.2e}", s->lr);
    if (s->samples_per_s > 0) line += fmt::format(" {:.0f} samples/s", s->samples_per_s);
  }
  if (const auto& v = p.latest.validation) line += fmt::format(" val {:.4g}", v->val_loss);
  if (const auto& e = p.latest.end) {
    if (e->status == "nonfinite")
      line += fmt::format(" stopped: non-finite loss at step {}", e->nonfinite_step.value_or(e->step));
    if (e->skipped_steps > 0) line += fmt::format(" ({} skipped)", e->skipped_steps);
  } else if (const auto& s = p.latest.step; s && s->skipped) {
    line += " (step skipped)";
  }
  return line;
}

std::string terminal_line(const std::string& line, size_t width, size_t previous_length) {
  std::string out = width > 1 && line.size() >= width ? line.substr(0, width - 1) : line;
  if (out.size() < previous_length) out.append(previous_length - out.size(), ' ');
  return "\r" + out;
}

}  // namespace hpclaunch
