// A group of child processes watched together (TorchElastic's multiprocessing part), for the agent's workers and
// the local site's runner and `local-srun`: each child is started with Boost.Process in its own process group and
// killed if we die (parent-death signal; the orphan guard for what it started); every exit is noticed at once
// (SIGCHLD on the io_context, no polling) and what the child left in its group is killed; output is passed
// through, teed to a file, or prefixed line by line; stopping is a signal, then SIGKILL after the grace period.
#pragma once
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange under C++20
#include <boost/asio.hpp>
#include <chrono>
#include <csignal>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "process/orphan_guard.h"
#include "process/signals.h"

namespace hpclaunch {

namespace asio = boost::asio;

struct ProcessSpec {
  int id = 0;                     // the caller's name for it (a local rank, a task): ProcessExit::id
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH
  std::map<std::string, std::string, std::less<>> env;  // the child's whole environment (util/environment.h's Env)
  bool env_on_top = false;        // true: `env` is set on top of ours instead
  bool null_stdin = false;        // else stdin is ours
  enum class Output {
    inherit,  // stdout and stderr are ours
    file,     // both go to `fd`
    tee,      // both, in the order written, to `fd` and to our stdout, as they come
    lines,    // each line whole: `prefix`ed to our stdout/stderr (console_*), as it is to out_file/err_file
  } output = Output::inherit;
  int fd = -1;                    // file, tee: a descriptor (the caller may close it once start returns)
  std::string prefix;             // "[n1:3] "
  bool console_out = true;
  bool console_err = true;
  std::string out_file;           // "": none
  std::string err_file;
  std::vector<int> cpus;          // bound to these CPUs (--numa-binding); empty: ours
  // lines: a line of stream S (0 stdout, 1 stderr) holding any of dup_filters[S] also goes, prefixed, to
  // dup_fd[S] (torchrun's --duplicate-stdout/stderr-filters: one file for all the children; the caller may close
  // it once start returns).
  std::vector<std::string> dup_filters[2];
  int dup_fd[2] = {-1, -1};
};

struct ProcessExit {
  int id = 0;
  int pid = 0;
  int exit_code = 0;  // when signal == 0
  int signal = 0;
  bool ok() const { return signal == 0 && exit_code == 0; }
  int status() const { return signal ? 128 + signal : exit_code; }  // as a shell says it
};

struct ProcessGroupConfig {
  std::string who = "hpclaunch";  // names us in errors ("hpclaunch agent")
  // As `srun --kill-on-bad-exit=1`: the first child to fail (while no stop is under way) gets the others
  // SIGTERM, then SIGKILL after `grace`, so that they do not wait for it forever in a collective.
  bool stop_others_on_failure = false;
  std::chrono::milliseconds grace{30000};
  // Output::lines: called with the child's id, the stream (0 stdout, 1 stderr) and the line (no newline) for each
  // whole line, after it is written out (the agent's hang watch counts a line as a sign of life, and its failure
  // report quotes a failed worker's last lines of stderr).
  std::function<void(int id, int stream, std::string_view line)> on_line;
  // A child's exit is reported once its output is drained too (its pipes closed, every line emitted), so that what
  // it wrote last is seen before its exit, or 2 s after its exit when something it left holds its pipes; otherwise
  // at once. The others are stopped on a failure at once either way. Exits are reported in the order they came, so
  // that a child stopped because another failed is not reported first only because its output drained sooner.
  bool exit_after_output = false;
};

// The executable `cmd` names (PATH lookup); throws Error naming it (and `who`) if there is none.
std::string resolve_command(const std::string& cmd, const std::string& who);

// What the agent's run loop asks of its workers (agent/elastic_agent.h): a ProcessGroup, or a fake in the loop's
// unit test (tests/unit/elastic_agent_test.cc). The group reports through the callbacks it was made with.
class WorkerGroup {
 public:
  virtual ~WorkerGroup() = default;
  virtual std::vector<int> start(const std::vector<ProcessSpec>& specs) = 0;
  virtual void signal(int sig) = 0;
  virtual void stop(std::chrono::milliseconds grace, int sig) = 0;
  virtual void close() = 0;
};

class ProcessGroup : public WorkerGroup {
 public:
  using OnExit = std::function<void(const ProcessExit&)>;
  using OnIdle = std::function<void()>;  // every child exited and its output is drained

  ProcessGroup(asio::io_context& io, ProcessGroupConfig config, OnExit on_exit, OnIdle on_idle);
  ~ProcessGroup() override;
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;
  // Returns the children's pids. Throws Error when one cannot be started (the ones already started are killed).
  std::vector<int> start(const std::vector<ProcessSpec>& specs) override;
  // Sends `sig` to every running child's process group.
  void signal(int sig) override;
  // Sends `sig` now (with SIGCONT, so that a stopped child gets it) and SIGKILL to what is left after `grace`;
  // OnIdle follows once all are gone.
  void stop(std::chrono::milliseconds grace, int sig) override;
  void stop(std::chrono::milliseconds grace) { stop(grace, SIGTERM); }
  // Kills everything at once (we are going away).
  void kill_all();
  // Stops watching for exits (we are done); the children must be gone.
  void close() override;
  bool idle() const { return m_children.empty(); }

 private:
  struct Child;
  void watch_sigchld();
  void reap();
  void read(const std::shared_ptr<Child>& c, int stream);
  void emit(Child& c, int stream, std::string_view line);
  void maybe_gone(int pid);
  // exit_after_output: once, when the output is drained or k_drain_wait has passed, and after the exits before it.
  void report_exit(int pid);
  static constexpr std::chrono::seconds k_drain_wait{2};

  asio::io_context& m_io;
  OrphanGuard m_guard;  // first: forked before the caller opens its sockets
  ProcessGroupConfig m_config;
  OnExit m_on_exit;
  OnIdle m_on_idle;
  asio::signal_set m_sigchld;
  asio::steady_timer m_kill_timer;
  std::map<int, std::shared_ptr<Child>> m_children;  // by pid
  struct Unreported {
    int pid;
    ProcessExit exit;
    bool ready = false;
  };
  // exit_after_output: the exits not reported yet, in the order they were reaped; `ready` once the child's output
  // is drained (or k_drain_wait passed), reported when every exit before it is.
  std::deque<Unreported> m_unreported;
  bool m_reporting = false;             // report_exit's loop runs (m_on_exit may call back into us)
  bool m_stopping = false;  // stop() was called since the last start()
  bool m_closed = false;
};

}  // namespace hpclaunch
