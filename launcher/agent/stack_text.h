// Reading what the stack tools print, for a hang's one line ("in train.py:57 `next(loader)`"): py-spy's dump,
// gdb's backtrace and the kernel's /proc/PID/stat. Pure: text in, the innermost frame out; agent/stacks.cc runs
// the tools.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

struct Frame {
  std::string function;
  std::string file;  // as the tool printed it ("" when it knows none)
  int line = 0;
  bool library = false;  // in Python's library or site-packages, or a shared library without a source line
};

// The innermost frame of the main thread in `py-spy dump` output, the innermost outside Python's own library and
// site-packages when there is one (the user's line, not threading.py's wait).
std::optional<Frame> innermost_python_frame(std::string_view py_spy_dump);
// The innermost frame of the main thread in `eu-stack -p PID -s -i` (elfutils) or gdb's `thread apply all bt`
// (thread 1), the innermost with a source line in the program's own code when there is one.
std::optional<Frame> innermost_native_frame(std::string_view stacks);

// Whether the main thread of a py-spy dump, eu-stack's or gdb's backtrace waits for its peers: in a collective (c10d, gloo,
// NCCL, torch.distributed's calls) or in autograd's backward, where DDP's allreduce runs. Such a rank is one the
// others' hang holds, not the one that holds them.
bool waits_for_peers(std::string_view stacks);

// /proc/PID/stat's fields after the command name: state ("S", "T", ...), parent and process group.
struct ProcStat {
  char state = '?';
  int ppid = 0;
  int pgrp = 0;
  std::string comm;
};
std::optional<ProcStat> parse_proc_stat(std::string_view stat);
// "sleeping", "stopped (SIGSTOP or a debugger)", ... for /proc's state letter.
std::string state_words(char state);

// "train.py:57 `next(loader)`", "ddp.cc:120 (hpctrain::Trainer::step)", "train (no source line)": file's base
// name, line and the source text (`code`, "" when it could not be read) or the function.
std::string frame_words(const Frame& f, std::string_view code);

}  // namespace hpclaunch
