// Signal requests: see signals.h. One thread waits for the signals and only sets flags; the training loop acts on
// them between steps.
#include "signals.h"

#include <pthread.h>
#include <time.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <thread>

namespace hpctrain {
namespace {

std::atomic<bool> g_stop{false};
std::atomic<bool> g_save{false};
std::atomic<int> g_stop_signal{0};
std::atomic<long long> g_stop_at_ms{0};

// The same stop signal again within this time is the same stop passed on twice, not a second request: a Slurm step's
// processes all get scancel's SIGTERM from slurmstepd and once more from an agent that passes it on, a terminal's
// Ctrl-C reaches a launcher and its workers alike. A stuck process gets its second signal much later (Slurm's
// KillWait, 30 s by default), or from a user who means it.
constexpr long long k_same_stop_ms = 2000;

long long monotonic_ms() {  // clock_gettime is async-signal-safe
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

constexpr int k_signals[] = {SIGUSR1, SIGTERM, SIGUSR2};

sigset_t handled_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int signo : k_signals) sigaddset(&set, signo);
  return set;
}

// A second stop request: die of that signal, as if it had never been caught.
[[noreturn]] void die_of(int signo) {
  std::signal(signo, SIG_DFL);
  sigset_t one;
  sigemptyset(&one);
  sigaddset(&one, signo);
  pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
  pthread_kill(pthread_self(), signo);
  std::_Exit(128 + signo);  // not reached: the default action ends the process
}

// What the waiting thread does with a signal. Also the handler, for a thread that existed before the signals were
// blocked (a library's, started before main) and so may be the one the kernel picks: every call in it is
// async-signal-safe.
void note(int signo) {
  if (signo == SIGUSR2) {
    g_save = true;
    return;
  }
  const long long now = monotonic_ms();
  if (!g_stop.exchange(true)) {
    g_stop_signal = signo;
    g_stop_at_ms = now;
    return;
  }
  if (signo == g_stop_signal && now - g_stop_at_ms < k_same_stop_ms) return;  // the same stop, passed on twice
  die_of(signo);
}

void wait_for_signals(sigset_t set) {
  for (;;) {
    int signo = 0;
    if (sigwait(&set, &signo) == 0) note(signo);
  }
}

}  // namespace

void install_signal_handlers() {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return;
  const sigset_t set = handled_signals();
  struct sigaction action {};
  action.sa_handler = note;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signo : k_signals) sigaction(signo, &action, nullptr);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread(wait_for_signals, set).detach();
}

bool stop_requested() { return g_stop; }

bool take_save_request() { return g_save.exchange(false); }

void request_stop_for_test() { g_stop = true; }

}  // namespace hpctrain
