// torchrun's named-pipe watchdog (TORCHELASTIC_ENABLE_FILE_TIMER=1), as torch 2.15's FileTimerServer keeps it:
// each line a worker's FileTimerClient writes is a JSON request {"version", "pid", "scope_id", "expiration_time",
// "signal"}; a negative expiration_time releases the scope. A scope past its time (wall clock, as the client
// writes it) gets its process killed with its signal; a request with signal 0 is never reaped. Pure: lines and
// times in, what to kill out; agent/elastic_agent.cc serves the pipe and kills.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hpclaunch {

struct TimerRequest {
  int pid = 0;
  std::string scope;
  double expiration = 0;  // seconds since the epoch; < 0: release
  int signal = 0;
};

// The request in one line of the pipe; nullopt (and `error` set) for a line that is not one.
std::optional<TimerRequest> parse_timer_request(std::string_view line, std::string* error);

struct Reap {
  int pid = 0;
  int signal = 0;
  std::string scope;
  double late_s = 0;  // how far past its expiration
};

class FileTimers {
 public:
  void add(const TimerRequest& r);
  // The processes to kill at `now` (wall clock): per process, its earliest expired scope with a signal, as
  // FileTimerServer picks it; a process whose expired scopes have no signal is not reaped. Every timer of a reaped
  // process is cleared.
  std::vector<Reap> expired(double now);
  // Timers of processes that are gone (the agent's workers exited), as FileTimerServer clears them.
  void clear(int pid);
  size_t size() const { return m_timers.size(); }

 private:
  std::map<std::pair<int, std::string>, TimerRequest> m_timers;
};

}  // namespace hpclaunch
