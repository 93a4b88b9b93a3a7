#include "process/orphan_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

#include "process/signals.h"

namespace hpclaunch {

namespace {

[[noreturn]] void guard_main(int fd, const std::vector<int>& forwarded) {
  // Only the pipe's end ends the guard: the signals a job step or a terminal sends go to the agent.
  for (int sig : forwarded) ::signal(sig, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  // Nor does it hold the agent's output open (a reader waiting for its end).
  int null = ::open("/dev/null", O_RDWR);
  for (int std_fd = 0; std_fd < 3 && null >= 0; ++std_fd)
    if (std_fd != fd) ::dup2(null, std_fd);
  if (null > 2 && null != fd) ::close(null);
  if (fd > 3) ::syscall(SYS_close_range, 3U, static_cast<unsigned>(fd - 1), 0U);
  ::syscall(SYS_close_range, static_cast<unsigned>(fd + 1), ~0U, 0U);
  std::set<int> groups;
  for (;;) {
    std::int32_t v = 0;
    ssize_t n = ::read(fd, &v, sizeof v);
    if (n < 0 && errno == EINTR) continue;
    if (n != sizeof v) break;
    if (v > 0) groups.insert(v);
    else groups.erase(-v);
  }
  for (int g : groups) ::kill(-g, SIGKILL);
  ::_exit(0);
}

}  // namespace

OrphanGuard::OrphanGuard() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;
  const std::vector<int>& forwarded = forwarded_signals();  // made before fork: the child only reads it
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[1]);
    guard_main(fds[0], forwarded);
  }
  ::close(fds[0]);
  if (pid < 0) {
    ::close(fds[1]);
    return;
  }
  m_fd = fds[1];
  m_pid = pid;
}

OrphanGuard::~OrphanGuard() {
  if (m_fd >= 0) ::close(m_fd);
  if (m_pid > 0) {
    int status = 0;
    while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

void OrphanGuard::add(int pgid) {
  std::int32_t v = pgid;
  if (m_fd >= 0 && ::write(m_fd, &v, sizeof v) != sizeof v) {
    // The guard is gone: nothing more to tell it.
  }
}

void OrphanGuard::remove(int pgid) { add(-pgid); }

}  // namespace hpclaunch
