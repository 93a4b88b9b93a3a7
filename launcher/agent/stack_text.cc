#include "agent/stack_text.h"

#include <fmt/core.h>

#include <regex>
#include <sstream>
#include <vector>

namespace hpclaunch {

namespace {

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool python_library(const std::string& file) {
  if (file.empty() || file[0] == '<') return true;  // <string>, <frozen ...>: code made at run time, not a file
  for (const char* part : {"/site-packages/", "/dist-packages/", "/lib/python3", "<frozen "})
    if (file.find(part) != std::string::npos) return true;
  return false;
}

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool native_library(const std::string& file) {
  // The program's own code: a source file by absolute path outside /usr (glibc's ../sysdeps, ./nptl and the C++
  // headers in /usr/include are the system's).
  return file.empty() || file[0] != '/' || file.rfind("/usr/", 0) == 0;
}

std::vector<Frame> python_main_frames(std::string_view dump) {
  // Thread 5075 (idle): "MainThread"
  //     wait (threading.py:331)       <- innermost first
  //     main (/home/u/train.py:57)
  static const std::regex thread(R"(^Thread (0x[0-9a-fA-F]+|\d+) .*)");
  static const std::regex frame(R"(^\s+(.+) \((.+):(\d+)\)\s*$)");
  std::vector<Frame> out;
  bool in_thread = false;
  for (const auto& line : lines_of(dump)) {
    std::smatch m;
    if (std::regex_match(line, thread)) {
      if (in_thread) break;  // the first thread py-spy lists is the main one
      in_thread = true;
      continue;
    }
    if (in_thread && std::regex_match(line, m, frame))
      out.push_back(Frame{m[1], m[2], std::stoi(m[3]), python_library(m[2])});
  }
  return out;
}

std::vector<Frame> native_main_frames(std::string_view bt) {
  // Thread 1 (Thread 0x7f.. (LWP 123) "hpclaunch-train"):
  // #0  0x00007f.. in clock_nanosleep@GLIBC_2.2.5 () from /lib/x86_64-linux-gnu/libc.so.6
  // #2  0x000055.. in hpctrain::step (...) at /src/trainer/ddp.cc:120
  static const std::regex thread(R"(^Thread (\d+) .*)");
  static const std::regex frame(R"(^#\d+\s+(?:0x[0-9a-fA-F]+ in )?(\S+) ?\(.*?\)(?: at (\S+):(\d+)| from (\S+))?.*$)");
  // Thread 1's block; a backtrace of one thread (no "Thread" headers) is taken whole.
  std::vector<Frame> out;
  bool any_header = false, in_main = false;
  for (const auto& line : lines_of(bt)) {
    std::smatch m;
    if (std::regex_match(line, m, thread)) {
      any_header = true;
      in_main = m[1] == "1";
      continue;
    }
    if ((any_header && !in_main) || !std::regex_match(line, m, frame)) continue;
    Frame f;
    f.function = m[1];
    if (m[2].matched) {
      f.file = m[2];
      f.line = std::stoi(m[3]);
    } else if (m[4].matched) {
      f.file = m[4];
    }
    f.library = !m[2].matched || native_library(f.file);
    out.push_back(f);
  }
  return out;
}


std::vector<Frame> eu_stack_main_frames(std::string_view text) {
  // PID 30385 - process
  // TID 30385:                       <- the main thread: its TID is the PID, listed first
  // #3  0x000055e314c860ba step
  //     /work/main/trainer/loop.cc:213:63
  static const std::regex tid(R"(^TID (\d+):\s*$)");
  static const std::regex frame(R"(^#\d+\s+0x[0-9a-fA-F]+ (.+?)(?: - \S+)?\s*$)");
  static const std::regex source(R"(^\s+(\S+?):(\d+)(?::\d+)?\s*$)");
  std::vector<Frame> out;
  bool in_main = false;
  for (const auto& line : lines_of(text)) {
    std::smatch m;
    if (std::regex_match(line, m, tid)) {
      if (in_main) break;
      in_main = true;
      continue;
    }
    if (!in_main) continue;
    if (std::regex_match(line, m, frame)) {
      out.push_back(Frame{m[1], "", 0, true});
    } else if (!out.empty() && out.back().line == 0 && std::regex_match(line, m, source)) {
      out.back().file = m[1];
      out.back().line = std::stoi(m[2]);
      out.back().library = native_library(out.back().file);
    }
  }
  return out;
}

std::vector<Frame> native_frames(std::string_view text) {
  return text.find("\nTID ") != std::string_view::npos || text.rfind("TID ", 0) == 0 ? eu_stack_main_frames(text)
                                                                                      : native_main_frames(text);
}

std::optional<Frame> innermost_of(const std::vector<Frame>& frames) {
  for (const auto& f : frames)
    if (!f.library) return f;
  if (frames.empty()) return std::nullopt;
  return frames.front();
}

}  // namespace

std::optional<Frame> innermost_python_frame(std::string_view dump) { return innermost_of(python_main_frames(dump)); }

std::optional<Frame> innermost_native_frame(std::string_view stacks) { return innermost_of(native_frames(stacks)); }

bool waits_for_peers(std::string_view stacks) {
  // Markers of torch.distributed's collectives, c10d and its backends, and autograd's backward, where DDP's
  // gradient allreduce runs and waits.
  static const char* markers[] = {"distributed_c10d.py", "all_reduce", "allreduce", "all_gather", "allgather",
                                  "reduce_scatter", "broadcast", "barrier", "_engine_run_backward", "run_backward",
                                  "c10d::", "gloo::", "nccl"};
  std::vector<Frame> frames = python_main_frames(stacks);
  if (frames.empty()) frames = native_frames(stacks);
  for (const auto& f : frames)
    for (const char* m : markers)
      if (f.function.find(m) != std::string::npos || f.file.find(m) != std::string::npos) return true;
  return false;
}

std::optional<ProcStat> parse_proc_stat(std::string_view stat) {
  // "123 (python3 x) S 1 123 ...": the name may hold spaces and parentheses, so the fields start after the last ')'.
  auto open = stat.find('(');
  auto close = stat.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  ProcStat s;
  s.comm = std::string(stat.substr(open + 1, close - open - 1));
  std::istringstream in{std::string(stat.substr(close + 1))};
  std::string state;
  if (!(in >> state >> s.ppid >> s.pgrp) || state.size() != 1) return std::nullopt;
  s.state = state[0];
  return s;
}

std::string state_words(char state) {
  switch (state) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "in uninterruptible wait (I/O)";
    case 'T': return "stopped (SIGSTOP or a debugger)";
    case 't': return "stopped by a debugger";
    case 'Z': return "a zombie";
    default: return fmt::format("in state {}", state);
  }
}

std::string frame_words(const Frame& f, std::string_view code) {
  if (f.file.empty() || f.line == 0)
    return f.file.empty() ? f.function : fmt::format("{} ({})", f.function, base_name(f.file));
  std::string where = fmt::format("{}:{}", base_name(f.file), f.line);
  if (!code.empty()) return fmt::format("{} `{}`", where, code);
  return fmt::format("{} ({})", where, f.function);
}

}  // namespace hpclaunch
