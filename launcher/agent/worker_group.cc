#include "agent/worker_group.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <signal.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <filesystem>

#include "util/line_splitter.h"
#include "util/error.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace bp = boost::process;

namespace hpclaunch {

namespace {

// Runs in the child between fork and exec.
struct ChildSetup : bp::extend::handler {
  pid_t parent;
  const cpu_set_t* cpus = nullptr;  // built before fork: nothing is allocated in the child
  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(128 + SIGKILL);  // the agent died before prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (cpus && ::sched_setaffinity(0, sizeof *cpus, cpus) != 0) ::_exit(127);
    // The agent's sockets and the other workers' pipes must not leak into this worker.
    ::syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
  }
};

int open_log(const std::string& path) {
  if (path.empty()) return -1;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw failure(path, "cannot write the log file", "check --log-dir");
  return fd;
}

void write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

}  // namespace

std::string resolve_command(const std::string& cmd) {
  if (cmd.find('/') != std::string::npos) {
    if (::access(cmd.c_str(), X_OK) != 0) throw Error("hpclaunch agent", "command '" + cmd + "' is not an executable file");
    return cmd;
  }
  auto path = bp::search_path(cmd);
  if (path.empty()) throw Error("hpclaunch agent", "command '" + cmd + "' not found on PATH", "check the command after --");
  return path.string();
}

struct WorkerGroup::Worker {
  Worker(asio::io_context& io, const WorkerSpec& s) : spec(s), pipes{bp::async_pipe(io), bp::async_pipe(io)} {}
  ~Worker() {
    for (int fd : files)
      if (fd >= 0) ::close(fd);
  }
  WorkerSpec spec;
  int pid = -1;
  bool exited = false;
  int open_streams = 2;
  bp::async_pipe pipes[2];
  LineSplitter splitters[2];
  int files[2] = {-1, -1};
  char buf[2][8192];
};

WorkerGroup::WorkerGroup(asio::io_context& io, OnExit on_exit, OnIdle on_idle)
    : m_io(io), m_on_exit(std::move(on_exit)), m_on_idle(std::move(on_idle)), m_sigchld(io, SIGCHLD), m_kill_timer(io) {
  watch_sigchld();
}

WorkerGroup::~WorkerGroup() { kill_all(); }

void WorkerGroup::start(const std::vector<WorkerSpec>& specs) {
  std::string exe = specs.empty() ? std::string() : resolve_command(specs.front().argv.at(0));
  for (const auto& spec : specs) {
    auto w = std::make_shared<Worker>(m_io, spec);
    w->files[0] = open_log(spec.out_file);
    w->files[1] = open_log(spec.err_file);
    bp::environment env;
    for (const auto& [k, v] : spec.env) env[k] = v;
    std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
    ChildSetup setup;
    setup.parent = ::getpid();
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    for (int c : spec.cpus)
      if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &cpus);
    if (!spec.cpus.empty()) setup.cpus = &cpus;
    std::error_code ec;
    bp::child c(bp::exe = exe, bp::args = args, env, bp::std_in < bp::null, bp::std_out > w->pipes[0],
                bp::std_err > w->pipes[1], setup, ec);
    if (ec) {
      kill_all();
      throw failure("hpclaunch agent", fmt::format("cannot start '{}': {}", exe, ec.message()));
    }
    w->pid = c.id();
    c.detach();
    ::setpgid(w->pid, w->pid);  // also here, so a signal sent right away reaches the group
    m_guard.add(w->pid);
    m_workers[w->pid] = w;
    read(w, 0);
    read(w, 1);
  }
  reap();  // a worker may have exited before its pid was known
}

void WorkerGroup::watch_sigchld() {
  m_sigchld.async_wait([this](boost::system::error_code ec, int) {
    if (ec || m_closed) return;
    reap();
    if (!m_closed) watch_sigchld();
  });
}

void WorkerGroup::reap() {
  std::vector<int> pids;
  for (const auto& [pid, w] : m_workers)
    if (!w->exited) pids.push_back(pid);
  for (int pid : pids) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid) continue;
    auto w = m_workers[pid];
    w->exited = true;
    ::kill(-pid, SIGKILL);  // what the worker left behind in its group
    WorkerExit e{w->spec.local_rank, w->spec.rank, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                 WIFSIGNALED(status) ? WTERMSIG(status) : 0};
    m_on_exit(e);
    maybe_gone(pid);
  }
}

void WorkerGroup::read(const std::shared_ptr<Worker>& w, int stream) {
  w->pipes[stream].async_read_some(asio::buffer(w->buf[stream]), [this, w, stream](boost::system::error_code ec, size_t n) {
    if (n > 0) {
      w->splitters[stream].feed(std::string_view(w->buf[stream], n),
                                [&](std::string_view line) { emit(*w, stream, line); });
    }
    if (!ec) return read(w, stream);
    w->splitters[stream].finish([&](std::string_view line) { emit(*w, stream, line); });
    boost::system::error_code ignored;
    w->pipes[stream].close(ignored);
    --w->open_streams;
    maybe_gone(w->pid);
  });
}

void WorkerGroup::emit(Worker& w, int stream, std::string_view line) {
  std::string text = std::string(line) + "\n";
  if (w.files[stream] >= 0) write_all(w.files[stream], text);
  if (stream == 0 ? w.spec.console_out : w.spec.console_err) write_all(stream == 0 ? 1 : 2, w.spec.prefix + text);
}

void WorkerGroup::maybe_gone(int pid) {
  auto it = m_workers.find(pid);
  if (it == m_workers.end() || !it->second->exited || it->second->open_streams > 0) return;
  m_guard.remove(pid);
  m_workers.erase(it);
  if (m_workers.empty()) {
    m_kill_timer.cancel();
    m_on_idle();
  }
}

void WorkerGroup::signal(int sig) {
  for (const auto& [pid, w] : m_workers)
    if (!w->exited) ::kill(-pid, sig);
}

void WorkerGroup::stop(std::chrono::milliseconds grace, int sig) {
  if (m_workers.empty()) return;
  signal(sig);
  m_kill_timer.expires_after(grace);
  m_kill_timer.async_wait([this](boost::system::error_code ec) {
    if (!ec) signal(SIGKILL);
  });
}

void WorkerGroup::close() {
  m_closed = true;
  boost::system::error_code ec;
  m_sigchld.cancel(ec);
  m_kill_timer.cancel();
}

void WorkerGroup::kill_all() {
  for (const auto& [pid, w] : m_workers) {
    if (w->exited) continue;
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  for (const auto& [pid, w] : m_workers) m_guard.remove(pid);
  m_workers.clear();
}

}  // namespace hpclaunch
