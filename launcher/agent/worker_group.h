// The workers of one node (TorchElastic's multiprocessing part): starts them with Boost.Process, each in its
// own process group and killed if the agent dies (parent-death signal); notices every exit at once (SIGCHLD on
// the io_context, no polling); prefixes their output line by line and writes optional per-rank files; stops
// them with a signal, then SIGKILL after the grace period.
#pragma once
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange under C++20
#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "agent/orphan_guard.h"
#include "agent/worker_env.h"

namespace hpclaunch {

namespace asio = boost::asio;

struct WorkerSpec {
  int local_rank = 0;
  int rank = 0;
  std::vector<std::string> argv;
  EnvMap env;
  std::string prefix;       // "[n1:3] "
  bool console_out = true;  // copy stdout to the agent's stdout
  bool console_err = true;
  std::string out_file;     // "": none
  std::string err_file;
  std::vector<int> cpus;    // bound to these CPUs (--numa-binding); empty: the agent's
};

struct WorkerExit {
  int local_rank = 0;
  int rank = 0;
  int exit_code = 0;  // when signal == 0
  int signal = 0;
  bool ok() const { return signal == 0 && exit_code == 0; }
};

// The executable `cmd` names (PATH lookup); throws Error naming it if there is none.
std::string resolve_command(const std::string& cmd);

class WorkerGroup {
 public:
  using OnExit = std::function<void(const WorkerExit&)>;
  using OnIdle = std::function<void()>;  // every worker exited and its output is drained

  WorkerGroup(asio::io_context& io, OnExit on_exit, OnIdle on_idle);
  ~WorkerGroup();
  // Throws Error when a command cannot be started (the ones already started are killed).
  void start(const std::vector<WorkerSpec>& specs);
  // Sends `sig` to every running worker's process group.
  void signal(int sig);
  // Sends `sig` now and SIGKILL to what is left after `grace`; OnIdle follows once all are gone.
  void stop(std::chrono::milliseconds grace, int sig = SIGTERM);
  // Kills everything at once (the agent is going away).
  void kill_all();
  // Stops watching for exits (the agent is done); the workers must be gone.
  void close();
  bool idle() const { return m_workers.empty(); }

 private:
  struct Worker;
  void watch_sigchld();
  void reap();
  void read(const std::shared_ptr<Worker>& w, int stream);
  void emit(Worker& w, int stream, std::string_view line);
  void maybe_gone(int pid);

  asio::io_context& m_io;
  OrphanGuard m_guard;  // first: forked before the agent opens its sockets
  OnExit m_on_exit;
  OnIdle m_on_idle;
  asio::signal_set m_sigchld;
  asio::steady_timer m_kill_timer;
  std::map<int, std::shared_ptr<Worker>> m_workers;  // by pid
  bool m_closed = false;
};

}  // namespace hpclaunch
