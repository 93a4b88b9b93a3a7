#include "scheduler/local_job.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fmt/core.h>
#include <cstdio>
#include <optional>
#include <thread>

#include "record/job_record.h"
#include "util/error.h"

extern char** environ;

namespace hpclaunch {

namespace {

constexpr int k_forwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
// How long the other tasks get after one failed, between SIGTERM and SIGKILL.
constexpr std::chrono::seconds k_kill_grace{10};

// Process groups that forwarded signals go to; written before the handler is installed.
constexpr int k_max_groups = 1024;
pid_t g_groups[k_max_groups];
std::atomic<int> g_group_count{0};

// Set by a stopping signal: an array's runner starts no more tasks.
volatile sig_atomic_t g_stopping = 0;

void forward_signal(int sig) {
  if (sig != SIGUSR1 && sig != SIGUSR2) g_stopping = 1;
  int n = g_group_count.load();
  for (int i = 0; i < n; ++i)
    if (g_groups[i] > 0) ::kill(-g_groups[i], sig);
}

void install_forwarding() {
  struct sigaction sa {};
  sa.sa_handler = forward_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : k_forwarded) sigaction(sig, &sa, nullptr);
}

int status_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

// Spawns argv in a new process group with extra environment; returns its pid.
pid_t spawn(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& extra,
            int stdout_fd) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string s = *e;
    std::string key = s.substr(0, s.find('='));
    bool replaced = false;
    for (const auto& [k, _] : extra) replaced |= (k == key);
    if (!replaced) env_strings.push_back(s);
  }
  for (const auto& [k, v] : extra) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : k_forwarded) sigaddset(&defaults, sig);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, stdout_fd);
  }
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0], &actions, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw failure(argv[0], std::string("cannot start: ") + std::strerror(rc), "check that it is installed and on PATH");
  return pid;
}

void add_group(pid_t pid) {
  int n = g_group_count.load();
  for (int i = 0; i < n; ++i)
    if (g_groups[i] == 0) {  // the slot of a group that has ended
      g_groups[i] = pid;
      return;
    }
  if (n < k_max_groups) {
    g_groups[n] = pid;
    g_group_count.store(n + 1);
  }
}

// A reaped process's group gets no more signals (its id may be reused).
void remove_group(pid_t pid) {
  int n = g_group_count.load();
  for (int i = 0; i < n; ++i)
    if (g_groups[i] == pid) g_groups[i] = 0;
}

int wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  remove_group(pid);
  return status_code(status);
}

int open_log(const std::string& run_dir) {
  std::string path = run_dir + "/output.log";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw failure(path, std::string("cannot write: ") + std::strerror(errno), "check the job directory");
  return fd;
}

// Runs `bash script` with `extra` in its environment, its output to RUN_DIR/output.log and to our stdout, its
// state in RUN_DIR/state.json; returns its exit status.
int run_attached(const std::string& script, const std::string& run_dir,
                 const std::vector<std::pair<std::string, std::string>>& extra) {
  int log = open_log(run_dir);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw failure("pipe", std::strerror(errno));
  pid_t pid = spawn({"bash", script}, extra, fds[1]);
  ::close(fds[1]);
  add_group(pid);
  write_local_state(run_dir, pid, -1);
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    // The log and the terminal get the same bytes; a closed terminal must not stop the job.
    (void)!::write(log, buf, static_cast<size_t>(n));
    (void)!::write(STDOUT_FILENO, buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int code = wait_for(pid);
  ::close(log);
  write_local_state(run_dir, pid, code);
  return code;
}

bool has_state(const std::string& run_dir) { return ::access((run_dir + "/state.json").c_str(), F_OK) == 0; }

}  // namespace

// JOB_DIR/state.json (record/job_record.h's LocalStateFile) for `hpclaunch status|wait|cancel`. Written by
// rename, so a reader never sees half of it.
void write_local_state(const std::string& job_dir, long long pid, int exit_code) {
  std::string path = job_dir + "/state.json", tmp = job_dir + "/.state.json.tmp";
  LocalStateFile state{pid, exit_code < 0 ? "running" : "exited", std::nullopt};
  if (exit_code >= 0) state.exit_code = exit_code;
  std::string text = nlohmann::json(state).dump() + "\n";
  if (std::FILE* f = std::fopen(tmp.c_str(), "w")) {
    bool ok = std::fputs(text.c_str(), f) >= 0;
    ok = (std::fclose(f) == 0) && ok;
    if (ok && std::rename(tmp.c_str(), path.c_str()) == 0) return;
  }
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

int run_local_job(const std::string& script, const std::string& job_dir, const std::string& job_id) {
  install_forwarding();
  return run_attached(script, job_dir, {{"HPCLAUNCH_JOB_ID", job_id}, {"HPCLAUNCH_JOB_DIR", job_dir}});
}

int run_local_array(const std::string& script, const std::string& job_dir, const std::string& job_id, int tasks,
                    int max_concurrent) {
  install_forwarding();
  write_local_state(job_dir, ::getpid(), -1);
  const JobRecord array = read_job_record(job_dir);
  auto task_env = [&](int i) -> std::vector<std::pair<std::string, std::string>> {
    return {{"HPCLAUNCH_JOB_ID", job_id}, {"HPCLAUNCH_JOB_DIR", job_dir}, {"HPCLAUNCH_ARRAY_TASK", std::to_string(i)}};
  };
  auto say = [&](int i, const std::string& what) {
    fmt::print(stderr, "hpclaunch: task {} ({}) {}\n", i, task_label(task_record(array, i)), what);
    std::fflush(stderr);
  };
  int worst = 0;
  if (max_concurrent <= 1) {
    for (int i = 0; i < tasks && !g_stopping; ++i) {
      const std::string dir = task_record(array, i).dir;
      if (has_state(dir)) continue;  // cancelled before it started
      say(i, "starting");
      int code = run_attached(script, dir, task_env(i));
      if (code != 0) say(i, "exited with " + std::to_string(code));
      worst = std::max(worst, code);
    }
  } else {
    std::vector<std::pair<pid_t, int>> running;  // pid, task
    int next = 0;
    while (!running.empty() || (next < tasks && !g_stopping)) {
      while (static_cast<int>(running.size()) < max_concurrent && next < tasks && !g_stopping) {
        const int i = next++;
        const std::string dir = task_record(array, i).dir;
        if (has_state(dir)) continue;
        int log = open_log(dir);
        pid_t pid = spawn({"bash", script}, task_env(i), log);
        ::close(log);
        add_group(pid);
        write_local_state(dir, pid, -1);
        running.emplace_back(pid, i);
        say(i, "started");
      }
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, 0);
      if (pid < 0) {
        if (errno == EINTR) continue;
        break;
      }
      auto it = std::find_if(running.begin(), running.end(), [&](const auto& r) { return r.first == pid; });
      if (it == running.end()) continue;
      remove_group(pid);
      const int code = status_code(status), i = it->second;
      running.erase(it);
      write_local_state(task_record(array, i).dir, pid, code);
      say(i, code == 0 ? "completed" : "exited with " + std::to_string(code));
      worst = std::max(worst, code);
    }
  }
  if (g_stopping) worst = std::max(worst, 128 + SIGTERM);
  write_local_state(job_dir, ::getpid(), worst);
  return worst;
}

int run_local_tasks(const std::vector<std::string>& argv, const std::string& job_id, int nodes,
                    int tasks_per_node, int gpus_per_node) {
  if (argv.empty()) throw Error("--", "no command to run", "put the task's command after `--`");
  int ntasks = nodes * tasks_per_node;
  std::vector<pid_t> pids;
  install_forwarding();
  for (int rank = 0; rank < ntasks; ++rank) {
    pid_t pid = spawn(argv, local_task_env(job_id, nodes, tasks_per_node, gpus_per_node, rank), -1);
    pids.push_back(pid);
    add_group(pid);
  }
  // As `srun --kill-on-bad-exit`: the first task that fails ends the others (SIGTERM, SIGKILL after a grace),
  // so they do not wait for it forever in a collective.
  int worst = 0;
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  for (size_t left = pids.size(); left > 0;) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, kill_at ? WNOHANG : 0);
    if (pid == 0) {  // ending the others: wait for them, and kill them once the grace is over
      if (std::chrono::steady_clock::now() >= *kill_at) {
        for (pid_t p : pids) ::kill(-p, SIGKILL);
        kill_at = std::chrono::steady_clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    auto it = std::find(pids.begin(), pids.end(), pid);
    if (it == pids.end()) continue;
    const int code = status_code(status);
    if (!kill_at) worst = std::max(worst, code);  // the tasks ended for a failure do not hide its code
    --left;
    if (code != 0 && !kill_at && left > 0) {
      fmt::print(stderr, "hpclaunch local-srun: task {} exited with {}: ending the other {} task(s)\n",
                 it - pids.begin(), code, left);
      for (pid_t p : pids)
        if (p != pid) ::kill(-p, SIGTERM);
      kill_at = std::chrono::steady_clock::now() + k_kill_grace;
    }
  }
  return worst;
}

}  // namespace hpclaunch
