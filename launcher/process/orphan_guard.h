// Kills a ProcessGroup's children's process groups when we die without doing it (kill -9, OOM killer): a small
// forked guard process learns the live groups through a pipe and kills them when the pipe closes. The
// parent-death signal reaches only the children themselves; this also reaches what they started.
#pragma once
#include <set>

namespace hpclaunch {

class OrphanGuard {
 public:
  OrphanGuard();   // forks the guard; without one (fork failed) add/remove do nothing
  ~OrphanGuard();  // closes the pipe and reaps the guard
  OrphanGuard(const OrphanGuard&) = delete;
  OrphanGuard& operator=(const OrphanGuard&) = delete;
  void add(int pgid);
  void remove(int pgid);

 private:
  int m_fd = -1;
  int m_pid = -1;
};

}  // namespace hpclaunch
