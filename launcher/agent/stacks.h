// Where a hung worker is, recorded before it is stopped: every process of its process group (the worker and what
// it started: a data loader's workers, a wrapper's child), each with the best tool the node has: py-spy for
// Python, eu-stack (else gdb) for native code, and always the kernel's state and wait channel. Effects: reads /proc and runs the
// tools under coreutils' `timeout`; what the text says is read by agent/stack_text.h.
#pragma once
#include <string>
#include <vector>

namespace hpclaunch {

struct StackTools {
  std::string py_spy;    // "" when the node has none
  std::string eu_stack;  // elfutils': reads a native process's stacks in 0.2 s, where gdb took 3 s with LibTorch
  std::string gdb;       // where eu-stack is not
  // Per tool and process. gdb reads LibTorch's symbols in about 3 s of CPU: four at once on a loaded 2-core machine
  // took more than 10.
  int timeout_s = 20;
};
// py-spy and gdb: first in `dirs_first` (the worker's Python's folder: a venv's bin), then on `path` (PATH).
StackTools find_stack_tools(const std::vector<std::string>& dirs_first, const std::string& path);

struct WorkerStacks {
  std::string text;   // every process's stacks, for the file
  std::string frame;  // the innermost frame of the worker (agent/stack_text.h's frame_words), "" if none was read
  std::string state;  // the worker's state and wait channel: "stopped (SIGSTOP or a debugger)", "sleeping in do_poll"
  bool stopped_or_blocked = false;  // the worker is stopped (T) or in an uninterruptible wait (D)
  bool waits_for_peers = false;     // its main thread waits in a collective (agent/stack_text.h)
};
// The stacks of the worker `pid` (the leader of its process group) and of the processes in its group.
WorkerStacks capture_worker_stacks(int pid, const StackTools& tools);

}  // namespace hpclaunch
