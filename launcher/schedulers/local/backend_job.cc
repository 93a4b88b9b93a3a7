#include "schedulers/local/backend_job.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fmt/core.h>
#include <cstdio>
#include <optional>

#include "process/process_group.h"
#include "record/job_record.h"
#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace {

// How long the other tasks get after one failed, between SIGTERM and SIGKILL.
constexpr std::chrono::seconds k_kill_grace{10};

using ExtraEnv = std::vector<std::pair<std::string, std::string>>;

// Children on one event loop (process/process_group.h): the signals we get are passed on to them, and a stop
// signal (not USR1/USR2) means start no more. run() calls `step` at once and after each exit (take_exits), until
// it leaves nothing running.
class Runner {
 public:
  explicit Runner(ProcessGroupConfig config)
      : m_signals(m_io),
        m_group(
            m_io, std::move(config),
            [this](const ProcessExit& e) {
              m_exits.push_back(e);
              asio::post(m_io, [this] { next(); });
            },
            [this] { asio::post(m_io, [this] { next(); }); }) {
    for (int sig : forwarded_signals()) m_signals.add(sig);
    watch_signals();
  }
  ProcessGroup& group() { return m_group; }
  bool stopping() const { return m_stopping; }
  std::vector<ProcessExit> take_exits() { return std::exchange(m_exits, {}); }
  void run(std::function<void()> step) {
    m_step = std::move(step);
    next();
    m_io.run();
  }

 private:
  void watch_signals() {
    m_signals.async_wait([this](boost::system::error_code ec, int sig) {
      if (ec) return;
      if (!is_notice_signal(sig)) m_stopping = true;
      m_group.signal(sig);
      watch_signals();
    });
  }
  void next() {
    if (m_done) return;
    m_step();
    if (!m_group.idle()) return;
    m_done = true;
    m_group.close();
    boost::system::error_code ec;
    m_signals.cancel(ec);  // still ours until we return: a late signal is not the default's to take
  }

  asio::io_context m_io;
  asio::signal_set m_signals;
  ProcessGroup m_group;
  std::function<void()> m_step;
  std::vector<ProcessExit> m_exits;
  bool m_stopping = false;
  bool m_done = false;
};

int open_log(const std::string& run_dir) {
  std::string path = run_dir + "/output.log";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw failure(path, std::string("cannot write: ") + std::strerror(errno), "check the job directory");
  return fd;
}

// Starts `bash script` with `extra` in its environment, its output (both streams) to RUN_DIR/output.log, and also
// to our stdout with `tee`; RUN_DIR/state.json says it runs. Returns its pid.
int start_script(ProcessGroup& group, int id, const std::string& script, const std::string& run_dir,
                 const ExtraEnv& extra, bool tee, long long runner = 0) {
  ProcessSpec spec;
  spec.id = id;
  spec.argv = {"bash", script};
  spec.env_on_top = true;
  for (const auto& [k, v] : extra) spec.env[k] = v;
  spec.output = tee ? ProcessSpec::Output::tee : ProcessSpec::Output::file;
  spec.fd = open_log(run_dir);
  std::vector<int> pids;
  try {
    pids = group.start({spec});
  } catch (...) {
    ::close(spec.fd);
    throw;
  }
  ::close(spec.fd);
  write_local_state(run_dir, pids.at(0), -1, runner);
  return pids.at(0);
}

bool has_state(const std::string& run_dir) { return ::access((run_dir + "/state.json").c_str(), F_OK) == 0; }

}  // namespace

// JOB_DIR/state.json (record/job_record.h's LocalStateFile) for `hpclaunch status|wait|cancel`. Written by
// rename, so a reader never sees half of it.
void write_local_state(const std::string& job_dir, long long pid, int exit_code, long long runner) {
  std::string path = job_dir + "/state.json";
  LocalStateFile state{pid, exit_code < 0 ? "running" : "exited", std::nullopt, runner};
  if (exit_code >= 0) state.exit_code = exit_code;
  if (write_file_atomic(path, nlohmann::json(state).dump() + "\n")) return;
  fmt::print(stderr, "hpclaunch: warning: cannot write {}: `hpclaunch status` will not know this job\n", path);
}

std::vector<std::pair<std::string, std::string>> local_task_env(const std::string& job_id, int nodes,
                                                                int tasks_per_node, int gpus_per_node, int rank) {
  int node = rank / tasks_per_node;
  std::string gpus;
  for (int g = 0; g < gpus_per_node; ++g) gpus += (g ? "," : "") + std::to_string(g);
  std::string nodelist = nodes == 1 ? "node0" : fmt::format("node[0-{}]", nodes - 1);
  return {
      {"HPCLAUNCH_LOCAL_JOB", "1"},
      {"HPCLAUNCH_JOB_ID", job_id},
      {"HPCLAUNCH_NODELIST", nodelist},
      {"HPCLAUNCH_NNODES", std::to_string(nodes)},
      {"HPCLAUNCH_NODE_RANK", std::to_string(node)},
      {"HPCLAUNCH_NODENAME", "node" + std::to_string(node)},
      {"HPCLAUNCH_NTASKS", std::to_string(nodes * tasks_per_node)},
      {"HPCLAUNCH_TASKS_PER_NODE", std::to_string(tasks_per_node)},
      {"HPCLAUNCH_TASK_RANK", std::to_string(rank)},
      {"HPCLAUNCH_TASK_LOCAL_RANK", std::to_string(rank % tasks_per_node)},
      {"HPCLAUNCH_GPUS", gpus},
  };
}

std::string new_local_job_id() { return fmt::format("local-{}-{}", std::time(nullptr), ::getpid()); }

AfterRun after_local_run(int exit_code, int requeues_done, int max_requeues, bool stopping) {
  if (exit_code != k_exit_requeue || stopping || max_requeues <= 0) return AfterRun::finish;
  return requeues_done < max_requeues ? AfterRun::requeue : AfterRun::out_of_requeues;
}

namespace {

// Carries out after_local_run for a run of `who` ("job ID") that ended with `code`: says what it decided, as Slurm's
// script does, and counts the requeue in *requeues. True when the script is to run again.
bool requeue_after(const std::string& who, int code, int* requeues, int max_requeues, bool stopping) {
  switch (after_local_run(code, *requeues, max_requeues, stopping)) {
    case AfterRun::finish:
      return false;
    case AfterRun::requeue:
      ++*requeues;
      fmt::print(stderr, "hpclaunch: requeueing {} (requeue {} of {}) after exit {}\n", who, *requeues, max_requeues,
                 code);
      std::fflush(stderr);
      return true;
    case AfterRun::out_of_requeues:
      fmt::print(stderr, "hpclaunch: {} used its {} requeue(s); not requeueing\n", who, max_requeues);
      std::fflush(stderr);
      return false;
  }
  return false;
}

}  // namespace

int run_local_job(const std::string& script, const std::string& job_dir, const std::string& job_id,
                  int max_requeues, const Started& started) {
  Runner runner({});
  int pid = 0, code = 0, requeues = 0;
  // A job that requeues records its runner, which lives between two runs: `status` and `cancel` ask it then.
  const long long runner_pid = max_requeues > 0 ? ::getpid() : 0;
  auto start = [&] {
    ExtraEnv env{{"HPCLAUNCH_JOB_ID", job_id}, {"HPCLAUNCH_JOB_DIR", job_dir}};
    if (requeues) env.emplace_back("HPCLAUNCH_RESTART_COUNT", std::to_string(requeues));
    pid = start_script(runner.group(), requeues, script, job_dir, env, !started, runner_pid);
  };
  runner.run([&] {
    if (!pid) {
      start();
      if (started) started();
    }
    for (const auto& e : runner.take_exits()) {
      code = e.status();
      if (requeue_after("job " + job_id, code, &requeues, max_requeues, runner.stopping())) start();
    }
  });
  write_local_state(job_dir, pid, code);
  return code;
}

int run_local_array(const std::string& script, const std::string& job_dir, const std::string& job_id, int tasks,
                    int max_concurrent, const Started& started) {
  Runner runner({});
  write_local_state(job_dir, ::getpid(), -1);
  if (started) started();
  const JobRecord array = read_job_record(job_dir);
  auto say = [&](int i, const std::string& what) {
    fmt::print(stderr, "hpclaunch: task {} ({}) {}\n", i, task_label(task_record(array, i)), what);
    std::fflush(stderr);
  };
  // One at a time, its output streamed here too (and its end recorded once that output is drained), or up to
  // max_concurrent at once, each writing its log itself.
  const bool attached = max_concurrent <= 1 && !started;
  const int slots = std::max(1, max_concurrent);
  int worst = 0, next = 0, running = 0;
  std::vector<int> requeues(static_cast<size_t>(tasks), 0);
  auto start_task = [&](int i) {
    ExtraEnv env{{"HPCLAUNCH_JOB_ID", job_id}, {"HPCLAUNCH_JOB_DIR", job_dir}, {"HPCLAUNCH_ARRAY_TASK", std::to_string(i)}};
    if (requeues[i]) env.emplace_back("HPCLAUNCH_RESTART_COUNT", std::to_string(requeues[i]));
    start_script(runner.group(), i, script, task_record(array, i).dir, env, attached);
  };
  runner.run([&] {
    if (attached && !runner.group().idle()) return;
    for (const auto& e : runner.take_exits()) {
      const std::string who = fmt::format("task {} ({})", e.id, task_label(task_record(array, e.id)));
      if (requeue_after(who, e.status(), &requeues[e.id], array.max_requeues, runner.stopping())) {
        start_task(e.id);
        continue;
      }
      --running;
      write_local_state(task_record(array, e.id).dir, e.pid, e.status());
      if (!attached || !e.ok()) say(e.id, e.ok() ? "completed" : "exited with " + std::to_string(e.status()));
      worst = std::max(worst, e.status());
    }
    while (running < slots && next < tasks && !runner.stopping()) {
      const int i = next++;
      const std::string dir = task_record(array, i).dir;
      if (has_state(dir)) continue;  // cancelled before it started
      if (attached) say(i, "starting");
      start_task(i);
      ++running;
      if (!attached) say(i, "started");
    }
  });
  if (runner.stopping()) worst = std::max(worst, 128 + SIGTERM);
  write_local_state(job_dir, ::getpid(), worst);
  return worst;
}

void run_detached(const std::string& job_dir, const std::function<int(const Started&)>& run) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw failure(job_dir, std::string("cannot start the job's runner: pipe: ") + std::strerror(errno));
  std::fflush(nullptr);
  const int log = open_log(job_dir);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::setsid();  // no terminal's signals, and the submitting process may end
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    // Whoever reads the submit's output (a pipe) must see its end now, not when the job ends: nothing of the
    // submitting process's stays open here but the pipe that says the job started.
    if (fds[1] > 3) ::syscall(SYS_close_range, 3U, static_cast<unsigned>(fds[1] - 1), 0U);
    ::syscall(SYS_close_range, static_cast<unsigned>(fds[1] + 1), ~0U, 0U);
    int code = 1;
    try {
      code = run([&] {
        const char ok = 1;
        if (::write(fds[1], &ok, 1) != 1) {
          // The submitting process is gone: the job runs all the same.
        }
        ::close(fds[1]);
      });
    } catch (const std::exception& e) {
      fmt::print(stderr, "hpclaunch: error: {}\n", e.what());
    }
    std::fflush(nullptr);
    ::_exit(code);  // the submitting process's exit handlers are not this one's
  }
  ::close(log);
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    throw failure(job_dir, std::string("cannot start the job's runner: fork: ") + std::strerror(errno));
  }
  char ok = 0;
  ssize_t n;
  do n = ::read(fds[0], &ok, 1);
  while (n < 0 && errno == EINTR);
  ::close(fds[0]);
  if (n != 1)
    throw failure(job_dir, "the job's runner ended before the job started", "its output.log says why");
}

int run_local_tasks(const std::vector<std::string>& argv, const std::string& job_id, int nodes,
                    int tasks_per_node, int gpus_per_node, bool kill_on_bad_exit) {
  if (argv.empty()) throw Error("--", "no command to run", "put the task's command after `--`");
  const int ntasks = nodes * tasks_per_node;
  Runner runner({"hpclaunch local-srun", kill_on_bad_exit, k_kill_grace, {}});
  int worst = 0, left = ntasks;
  bool started = false, failed = false;
  runner.run([&] {
    if (!started) {
      started = true;
      std::vector<ProcessSpec> specs(ntasks);
      for (int rank = 0; rank < ntasks; ++rank) {
        specs[rank].id = rank;
        specs[rank].argv = argv;
        specs[rank].env_on_top = true;
        for (const auto& [k, v] : local_task_env(job_id, nodes, tasks_per_node, gpus_per_node, rank)) specs[rank].env[k] = v;
      }
      runner.group().start(specs);
    }
    for (const auto& e : runner.take_exits()) {
      --left;
      if (failed) continue;  // the tasks ended for a failure do not hide its code
      worst = std::max(worst, e.status());
      if (e.ok() || !kill_on_bad_exit) continue;
      failed = true;  // the group ends the others (stop_others_on_failure)
      if (left > 0)
        fmt::print(stderr, "hpclaunch local-srun: task {} exited with {}: ending the other {} task(s)\n", e.id,
                   e.status(), left);
    }
  });
  return worst;
}

}  // namespace hpclaunch
