#include "process/signals.h"

#include <csignal>

namespace hpclaunch {

const std::vector<int>& forwarded_signals() {
  static const std::vector<int> signals = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
  return signals;
}

bool is_notice_signal(int sig) { return sig == SIGUSR1 || sig == SIGUSR2; }

}  // namespace hpclaunch
