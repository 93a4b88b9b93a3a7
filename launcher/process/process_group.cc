#include "process/process_group.h"

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
#include <algorithm>
#include <cstring>
#include <filesystem>

#include "util/error.h"
#include "util/file.h"
#include "util/line_splitter.h"
#include "util/strings.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace bp = boost::process;

namespace hpclaunch {

namespace {

// Runs in the child between fork and exec; everything it uses was made before fork.
struct ChildSetup : bp::extend::handler {
  pid_t parent;
  const std::vector<int>* forwarded = nullptr;
  const cpu_set_t* cpus = nullptr;
  int fds[3] = {-1, -1, -1};  // what becomes stdin, stdout, stderr; -1: ours
  template <class Executor>
  void on_exec_setup(Executor&) const {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(128 + SIGKILL);  // we died before prctl
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    for (int sig : *forwarded) ::signal(sig, SIG_DFL);  // even where we were started ignoring them
    if (cpus && ::sched_setaffinity(0, sizeof *cpus, cpus) != 0) ::_exit(127);
    for (int i = 0; i < 3; ++i)
      if (fds[i] >= 0 && ::dup2(fds[i], i) < 0) ::_exit(127);
    // Our sockets and the other children's pipes must not leak into this child.
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

// A pipe whose read end we watch; both ends close-on-exec (the child gets its end by dup2).
std::pair<int, int> make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw failure("pipe", std::strerror(errno));
  return {fds[0], fds[1]};
}

}  // namespace

std::string resolve_command(const std::string& cmd, const std::string& who) {
  if (cmd.find('/') != std::string::npos) {
    if (::access(cmd.c_str(), X_OK) != 0) throw Error(who, "command '" + cmd + "' is not an executable file");
    return cmd;
  }
  auto path = bp::search_path(cmd);
  if (path.empty()) throw Error(who, "command '" + cmd + "' not found on PATH", "check the command after --");
  return path.string();
}

struct ProcessGroup::Child {
  Child(asio::io_context& io, const ProcessSpec& s) : spec(s), pipes{asio::posix::stream_descriptor(io),
                                                                      asio::posix::stream_descriptor(io)} {}
  ~Child() {
    for (int fd : files)
      if (fd >= 0) ::close(fd);
    for (int fd : dups)
      if (fd >= 0) ::close(fd);
  }
  ProcessSpec spec;
  int pid = -1;
  bool exited = false;
  std::unique_ptr<asio::steady_timer> drain_timer;  // exit_after_output: reports the exit if the output lingers
  int open_streams = 0;
  asio::posix::stream_descriptor pipes[2];  // read ends: stdout, stderr (tee: both in the first)
  LineSplitter splitters[2];
  int files[2] = {-1, -1};
  int dups[2] = {-1, -1};  // ProcessSpec::dup_fd, our copies
  char buf[2][8192];
};

ProcessGroup::ProcessGroup(asio::io_context& io, ProcessGroupConfig config, OnExit on_exit, OnIdle on_idle)
    : m_io(io),
      m_config(std::move(config)),
      m_on_exit(std::move(on_exit)),
      m_on_idle(std::move(on_idle)),
      m_sigchld(io, SIGCHLD),
      m_kill_timer(io) {
  watch_sigchld();
}

ProcessGroup::~ProcessGroup() { kill_all(); }

std::vector<int> ProcessGroup::start(const std::vector<ProcessSpec>& specs) {
  m_stopping = false;
  std::vector<int> pids;
  for (const auto& spec : specs) {
    std::string exe;
    try {
      exe = resolve_command(spec.argv.at(0), m_config.who);
    } catch (const Error&) {
      kill_all();
      throw;
    }
    auto c = std::make_shared<Child>(m_io, spec);
    ChildSetup setup;
    setup.parent = ::getpid();
    setup.forwarded = &forwarded_signals();
    int child_ends[3] = {-1, -1, -1};  // closed here once the child has them
    auto pipe_to = [&](int stream) {
      auto [r, w] = make_pipe();
      c->pipes[stream].assign(r);
      ++c->open_streams;
      child_ends[stream + 1] = w;
      return w;
    };
    if (spec.null_stdin) setup.fds[0] = child_ends[0] = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    switch (spec.output) {
      case ProcessSpec::Output::inherit: break;
      case ProcessSpec::Output::file: setup.fds[1] = setup.fds[2] = spec.fd; break;
      case ProcessSpec::Output::tee:
        c->files[0] = ::fcntl(spec.fd, F_DUPFD_CLOEXEC, 3);
        setup.fds[1] = setup.fds[2] = pipe_to(0);
        break;
      case ProcessSpec::Output::lines:
        c->files[0] = open_log(spec.out_file);
        c->files[1] = open_log(spec.err_file);
        for (int s = 0; s < 2; ++s)
          if (spec.dup_fd[s] >= 0 && !spec.dup_filters[s].empty()) c->dups[s] = ::fcntl(spec.dup_fd[s], F_DUPFD_CLOEXEC, 3);
        setup.fds[1] = pipe_to(0);
        setup.fds[2] = pipe_to(1);
        break;
    }
    bp::environment env = spec.env_on_top ? bp::environment(boost::this_process::environment()) : bp::environment();
    for (const auto& [k, v] : spec.env) env[k] = v;
    std::vector<std::string> args(spec.argv.begin() + 1, spec.argv.end());
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    for (int cpu : spec.cpus)
      if (cpu >= 0 && cpu < CPU_SETSIZE) CPU_SET(cpu, &cpus);
    if (!spec.cpus.empty()) setup.cpus = &cpus;
    std::error_code ec;
    bp::child child(bp::exe = exe, bp::args = args, env, setup, ec);
    for (int fd : child_ends)
      if (fd >= 0) ::close(fd);
    if (ec) {
      kill_all();
      throw failure(m_config.who, fmt::format("cannot start '{}': {}", exe, ec.message()));
    }
    c->pid = child.id();
    child.detach();
    ::setpgid(c->pid, c->pid);  // also here, so a signal sent right away reaches the group
    m_guard.add(c->pid);
    m_children[c->pid] = c;
    pids.push_back(c->pid);
    for (int stream = 0; stream < 2; ++stream)
      if (c->pipes[stream].is_open()) read(c, stream);
  }
  reap();  // a child may have exited before its pid was known
  return pids;
}

void ProcessGroup::watch_sigchld() {
  m_sigchld.async_wait([this](boost::system::error_code ec, int) {
    if (ec || m_closed) return;
    reap();
    if (!m_closed) watch_sigchld();
  });
}

void ProcessGroup::reap() {
  std::vector<int> pids;
  for (const auto& [pid, c] : m_children)
    if (!c->exited) pids.push_back(pid);
  for (int pid : pids) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) != pid) continue;
    auto c = m_children[pid];
    c->exited = true;
    ::kill(-pid, SIGKILL);  // what the child left behind in its group
    ProcessExit e{c->spec.id, pid, WIFEXITED(status) ? WEXITSTATUS(status) : 0,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0};
    if (!m_config.exit_after_output) {
      m_on_exit(e);
    } else {
      m_unreported.push_back({pid, e});
      // A process the child left in a session of its own may hold its pipes open: the exit is reported after
      // k_drain_wait all the same, without the lines that process still writes.
      c->drain_timer = std::make_unique<asio::steady_timer>(m_io, k_drain_wait);
      c->drain_timer->async_wait([this, pid](boost::system::error_code ec) {
        if (!ec) report_exit(pid);
      });
    }
    if (!e.ok() && m_config.stop_others_on_failure && !m_stopping) stop(m_config.grace);
    maybe_gone(pid);
  }
}

void ProcessGroup::read(const std::shared_ptr<Child>& c, int stream) {
  c->pipes[stream].async_read_some(asio::buffer(c->buf[stream]), [this, c, stream](boost::system::error_code ec, size_t n) {
    std::string_view data(c->buf[stream], n);
    auto emit_line = [&](std::string_view line) { emit(*c, stream, line); };
    if (n > 0 && c->spec.output == ProcessSpec::Output::tee) {
      // The file and the terminal get the same bytes; a closed terminal must not stop the child.
      write_all(c->files[0], data);
      write_all(STDOUT_FILENO, data);
    } else if (n > 0) {
      c->splitters[stream].feed(data, emit_line);
    }
    if (!ec) return read(c, stream);
    c->splitters[stream].finish(emit_line);
    boost::system::error_code ignored;
    c->pipes[stream].close(ignored);
    --c->open_streams;
    maybe_gone(c->pid);
  });
}

void ProcessGroup::emit(Child& c, int stream, std::string_view line) {
  std::string text = std::string(line) + "\n";
  if (c.files[stream] >= 0) write_all(c.files[stream], text);
  if (stream == 0 ? c.spec.console_out : c.spec.console_err) write_all(stream == 0 ? 1 : 2, c.spec.prefix + text);
  if (c.dups[stream] >= 0 && contains_any(line, c.spec.dup_filters[stream])) write_all(c.dups[stream], c.spec.prefix + text);
  if (m_config.on_line) m_config.on_line(c.spec.id, stream, line);
}

void ProcessGroup::report_exit(int pid) {
  auto u = std::find_if(m_unreported.begin(), m_unreported.end(), [pid](const Unreported& x) { return x.pid == pid; });
  if (u == m_unreported.end() || u->ready) return;  // reported already, or waiting for an earlier exit
  u->ready = true;
  if (auto it = m_children.find(pid); it != m_children.end() && it->second->drain_timer) it->second->drain_timer->cancel();
  // In the order of the exits: a child stopped because another failed must not be reported first, only because its
  // output drained sooner (the first failure reported is the root cause).
  if (m_reporting) return;
  m_reporting = true;
  while (!m_unreported.empty() && m_unreported.front().ready) {
    ProcessExit e = m_unreported.front().exit;
    m_unreported.pop_front();
    m_on_exit(e);
  }
  m_reporting = false;
}

void ProcessGroup::maybe_gone(int pid) {
  auto it = m_children.find(pid);
  if (it == m_children.end() || !it->second->exited || it->second->open_streams > 0) return;
  if (m_config.exit_after_output) {
    report_exit(pid);  // once; it may stop the others: `it` is looked up again
    it = m_children.find(pid);
    if (it == m_children.end()) return;
  }
  m_guard.remove(pid);
  m_children.erase(it);
  if (m_children.empty()) {
    m_kill_timer.cancel();
    m_on_idle();
  }
}

void ProcessGroup::signal(int sig) {
  for (const auto& [pid, c] : m_children)
    if (!c->exited) ::kill(-pid, sig);
}

void ProcessGroup::stop(std::chrono::milliseconds grace, int sig) {
  if (m_children.empty()) return;
  m_stopping = true;
  signal(sig);
  if (sig != SIGKILL && sig != SIGCONT) signal(SIGCONT);  // a stopped child acts on `sig` only once continued
  m_kill_timer.expires_after(grace);
  m_kill_timer.async_wait([this](boost::system::error_code ec) {
    if (!ec) signal(SIGKILL);
  });
}

void ProcessGroup::close() {
  m_closed = true;
  boost::system::error_code ec;
  m_sigchld.cancel(ec);
  m_kill_timer.cancel();
}

void ProcessGroup::kill_all() {
  for (const auto& [pid, c] : m_children) {
    if (c->exited) continue;
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
  }
  for (const auto& [pid, c] : m_children) m_guard.remove(pid);
  m_children.clear();
  m_unreported.clear();
}

}  // namespace hpclaunch
