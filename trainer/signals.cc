// Signal requests: see signals.h. Handlers only set flags; the training loop acts on them between steps.
#include "signals.h"

#include <csignal>

namespace hpctrain {
namespace {

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_save = 0;

void on_stop(int signo) {
  if (g_stop) {  // second request: the user means it
    std::signal(signo, SIG_DFL);
    std::raise(signo);
    return;
  }
  g_stop = 1;
}

void on_save(int) { g_save = 1; }

}  // namespace

void install_signal_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  action.sa_handler = on_save;
  sigaction(SIGUSR2, &action, nullptr);
}

bool stop_requested() { return g_stop != 0; }

bool take_save_request() {
  if (!g_save) return false;
  g_save = 0;
  return true;
}

void request_stop_for_test() { g_stop = 1; }

}  // namespace hpctrain
