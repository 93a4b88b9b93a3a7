#include "util/time_limit.h"

#include <fmt/core.h>

#include <vector>

#include "util/strings.h"

namespace hpclaunch {

namespace {

// sbatch's largest limit: Slurm keeps minutes in 32 bits, and its last two values mean "infinite" and "no value".
// No field may pass it, so that the sums below cannot overflow.
constexpr long k_max_seconds = 4294967293L * 60;

bool parse_fields(std::string_view text, std::vector<long>* out) {
  for (const auto& part : split(text, ':')) {
    long long v = 0;
    if (part.empty() || part[0] == '+' || part[0] == '-' || !parse_int(part, &v) || v < 0 || v > k_max_seconds)
      return false;
    out->push_back(static_cast<long>(v));
  }
  return true;
}

}  // namespace

std::optional<long> parse_time_limit(std::string_view text) {
  long days = 0;
  bool has_days = false;
  size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    long long d = 0;
    std::string_view day_part = text.substr(0, dash);
    if (day_part.empty() || day_part[0] == '+' || !parse_int(day_part, &d) || d < 0 || d > k_max_seconds / 86400)
      return std::nullopt;
    days = static_cast<long>(d);
    has_days = true;
    text = text.substr(dash + 1);
  }
  std::vector<long> f;
  if (!parse_fields(text, &f) || f.empty() || f.size() > 3) return std::nullopt;
  long seconds = 0;
  if (has_days) {
    // D-HH, D-HH:MM, D-HH:MM:SS
    seconds = days * 86400 + f[0] * 3600 + (f.size() > 1 ? f[1] * 60 : 0) + (f.size() > 2 ? f[2] : 0);
    if ((f.size() > 1 && f[1] >= 60) || (f.size() > 2 && f[2] >= 60)) return std::nullopt;
  } else if (f.size() == 1) {
    seconds = f[0] * 60;  // MM
  } else if (f.size() == 2) {
    if (f[1] >= 60) return std::nullopt;
    seconds = f[0] * 60 + f[1];  // MM:SS
  } else {
    if (f[1] >= 60 || f[2] >= 60) return std::nullopt;
    seconds = f[0] * 3600 + f[1] * 60 + f[2];  // HH:MM:SS
  }
  if (seconds <= 0 || seconds > k_max_seconds) return std::nullopt;
  return seconds;
}

std::string format_slurm_time(long seconds) {
  long d = seconds / 86400, h = seconds % 86400 / 3600, m = seconds % 3600 / 60, s = seconds % 60;
  if (d > 0) return fmt::format("{}-{:02}:{:02}:{:02}", d, h, m, s);
  return fmt::format("{:02}:{:02}:{:02}", h, m, s);
}

std::string format_pbs_time(long seconds) {
  return fmt::format("{:02}:{:02}:{:02}", seconds / 3600, seconds % 3600 / 60, seconds % 60);
}

}  // namespace hpclaunch
