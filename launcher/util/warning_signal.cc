#include "util/warning_signal.h"

#include <csignal>
#include <cstring>
#include <map>

#include "util/strings.h"

namespace hpclaunch {

namespace {

// The signals a job may ask for before its limit: those a program can catch, by name and number.
const std::map<std::string, int>& catchable() {
  static const std::map<std::string, int> k = {{"HUP", SIGHUP}, {"INT", SIGINT}, {"QUIT", SIGQUIT},
                                               {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"TERM", SIGTERM},
                                               {"ALRM", SIGALRM}, {"CONT", SIGCONT}, {"URG", SIGURG}};
  return k;
}

}  // namespace

bool parse_catchable_signal(std::string_view text, int* number, std::string* err) {
  std::string sig(trim(text));
  if (sig.rfind("SIG", 0) == 0) sig = sig.substr(3);
  long long n = 0;
  if (parse_int(sig, &n)) {
    for (const auto& [name, v] : catchable())
      if (v == n) {
        *number = v;
        return true;
      }
  } else if (auto it = catchable().find(sig); it != catchable().end()) {
    *number = it->second;
    return true;
  }
  std::vector<std::string> names;
  for (const auto& [name, _] : catchable()) names.push_back(name);
  *err = "'" + sig + "' is not a signal a job can catch" + did_you_mean(sig, names);
  return false;
}

bool parse_warning_signal(std::string_view text, std::string* name, int* seconds, std::string* err) {
  if (text.rfind("B:", 0) == 0) text.remove_prefix(2);
  size_t at = text.find('@');
  std::string sig(text.substr(0, at));
  long long secs = 120;
  if (at != std::string_view::npos) {
    if (!parse_int(text.substr(at + 1), &secs) || secs < 1 || secs > 65535) {
      *err = "'" + std::string(text.substr(at + 1)) + "' is not a number of seconds (1-65535)";
      return false;
    }
  }
  int number = 0;
  if (!parse_catchable_signal(sig, &number, err)) return false;
  for (const auto& [n, v] : catchable())
    if (v == number) sig = n;
  *name = sig;
  *seconds = static_cast<int>(secs);
  return true;
}

}  // namespace hpclaunch
