#include "remote/session.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include <fmt/core.h>

#include "util/command.h"
#include "util/error.h"
#include "util/file.h"
#include "util/strings.h"

extern char** environ;

namespace hpclaunch {

namespace {

// ssh's own failures (no connection, refused key, lost connection) end it with 255; the far command's status
// passes through otherwise.
constexpr int k_ssh_failed = 255;
// How often submit is sent again after a lost connection (the token makes every try the same submission).
constexpr int k_submit_tries = 4;

std::string last_line(const std::string& text) {
  std::vector<std::string> lines = split(std::string(trim(text)), '\n');
  return lines.empty() ? std::string("ssh said nothing") : std::string(trim(lines.back()));
}

// What the user can try by hand when ssh fails.
std::string try_by_hand(const SshTarget& t) {
  return fmt::format("check that `ssh {}{} true` works from here", t.port ? fmt::format("-p {} ", t.port) : "",
                     ssh_destination(t));
}

}  // namespace

int run_passing_through(const std::vector<std::string>& argv, const std::string& stdin_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, stdin_path.empty() ? "/dev/null" : stdin_path.c_str(),
                                   O_RDONLY, 0);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  std::fflush(stdout);
  std::fflush(stderr);
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return 127;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string new_submit_token() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  unsigned char bytes[16] = {};
  in.read(reinterpret_cast<char*>(bytes), sizeof bytes);
  if (in.gcount() != sizeof bytes) throw failure("/dev/urandom", "cannot read 16 random bytes for a submit token");
  std::string token;
  for (unsigned char b : bytes) token += fmt::format("{:02x}", b);
  return token;
}

SshSettings ssh_settings_from_environment() {
  SshSettings s;
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  const char* tmp = std::getenv("TMPDIR");
  s.control_dir = ssh_control_dir(runtime ? runtime : "", tmp ? tmp : "", getuid());
  if (mkdir(s.control_dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw failure(s.control_dir, std::string("cannot make the ssh connection's folder: ") + std::strerror(errno),
                  "set XDG_RUNTIME_DIR to a folder of yours");
  struct stat st {};
  if (lstat(s.control_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
      (st.st_mode & 077) != 0)
    throw failure(s.control_dir, "the ssh connection's folder is not a folder of yours that only you may enter",
                  "remove it (hpclaunch makes it again, mode 0700) or set XDG_RUNTIME_DIR");
  if (const char* config = std::getenv("HPCLAUNCH_SSH_CONFIG"); config && *config) s.config_file = config;
  int tty = open("/dev/tty", O_RDWR | O_CLOEXEC);
  s.batch = !ssh_may_prompt(tty >= 0, capture_environment());  // else ssh would wait for an answer nobody can give
  if (tty >= 0) close(tty);
  return s;
}

std::vector<std::string> RemoteSession::argv(const std::string& script) const {
  return ssh_argv(m_settings, m_target, far_command(script));
}

std::string RemoteSession::far_run_capture(const std::string& script, const char* what) {
  ProcessResult r = run_capture(argv(script));
  if (r.exit_code == k_ssh_failed || r.exit_code == 127)
    throw failure("--remote " + m_shown, fmt::format("cannot reach it to {}: {}", what, last_line(r.err)),
                  try_by_hand(m_target));
  if (r.exit_code != 0)
    throw failure("--remote " + m_shown,
                  fmt::format("{} failed there (exit {}): {}", what, r.exit_code, last_line(r.err)));
  return r.out;
}

void RemoteSession::send(const std::string& local, const std::string& script, const std::string& what) {
  int rc = run_passing_through(argv(script), local);
  if (rc != 0)
    throw failure("--remote " + m_shown, fmt::format("cannot send {} there (ssh exit {})", what, rc),
                  try_by_hand(m_target));
}

void RemoteSession::ensure_launcher(const std::string& local_version_line,
                                    const std::function<std::string(const std::string& arch)>& launcher_for) {
  std::string why;
  FarSide far = parse_probe(far_run_capture(probe_script(), "ask its architecture"), &why);
  if (far.arch.empty()) throw failure("--remote " + m_shown, why, "the far side must be a Linux login node");
  if (!needs_launcher_copy(far, local_version_line)) return;
  const std::string launcher = launcher_for(far.arch);
  send(launcher, install_script(), "the launcher");
  fmt::print(stderr, "hpclaunch: copied {} ({}) to {}:~/.cache/hpclaunch/bin/hpclaunch (it had {})\n", launcher,
             far.arch, m_shown, far.launcher_version.empty() ? "none" : far.launcher_version);
}

int RemoteSession::run(const RemoteCall& call, const std::string& token) {
  for (const auto& u : call.uploads) {
    if (access(u.local.c_str(), R_OK) != 0)
      throw Error(u.local, std::string("cannot read it to send it: ") + std::strerror(errno), "nothing was sent");
    send(u.local, upload_script(token, u.far), u.local);
  }
  int rc = 0;
  if (!call.downloads.empty()) {
    ProcessResult r = run_capture(argv(run_script(call, token)));
    for (const auto& d : call.downloads) {
      if (r.exit_code != 0) break;
      ProcessResult page = run_capture(argv(fetch_script(token, d.far)));
      if (page.exit_code != 0 || !write_file_atomic(d.local, page.out))
        throw failure(d.local, "cannot bring the far file back: " + last_line(page.err + std::strerror(errno)));
    }
    fmt::print("{}", laptop_output(r.out, call, token));
    fmt::print(stderr, "{}", r.err);
    rc = r.exit_code;
  } else {
    for (int attempt = 1;; ++attempt) {
      rc = run_passing_through(argv(run_script(call, token)));
      if (rc != k_ssh_failed || call.submit_token.empty() || attempt == k_submit_tries) break;
      fmt::print(stderr, "hpclaunch: the connection to {} was lost during submit; asking again with the same submit "
                         "token {}, which submits once\n", m_shown, call.submit_token);
      std::this_thread::sleep_for(std::chrono::seconds(attempt));
    }
  }
  if (!call.uploads.empty() || !call.downloads.empty()) run_capture(argv(cleanup_script(token)));
  return rc;
}

}  // namespace hpclaunch
