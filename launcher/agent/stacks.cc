#include "agent/stacks.h"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "agent/stack_text.h"
#include "util/command.h"
#include "util/file.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

std::string find_in(const std::vector<std::string>& dirs, const std::string& name) {
  for (const auto& d : dirs) {
    if (d.empty()) continue;
    fs::path p = fs::path(d) / name;
    if (::access(p.c_str(), X_OK) == 0) return p.string();
  }
  return "";
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::optional<ProcStat> stat_of(int pid) {
  auto text = read_file(fmt::format("/proc/{}/stat", pid));
  return text ? parse_proc_stat(*text) : std::nullopt;
}

// The worker and the other processes of its group (at most 8), the worker first.
std::vector<int> group_members(int pgid) {
  std::vector<int> out{pgid};
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    int pid = std::stoi(name);
    if (pid == pgid) continue;
    auto st = stat_of(pid);
    if (st && st->pgrp == pgid) out.push_back(pid);
  }
  std::sort(out.begin() + 1, out.end());
  if (out.size() > 8) out.resize(8);
  return out;
}

bool is_python(int pid, const ProcStat& st) {
  std::error_code ec;
  std::string exe = fs::read_symlink(fmt::format("/proc/{}/exe", pid), ec).filename().string();
  return st.comm.starts_with("python") || exe.starts_with("python");
}

// The source line `file:line`, stripped: what a hang's one line quotes.
std::string source_line(const Frame& f) {
  if (f.file.empty() || f.line <= 0) return "";
  std::ifstream in(f.file);
  std::string line;
  for (int n = 0; n < f.line && std::getline(in, line);) ++n;
  if (!in) return "";
  auto b = line.find_first_not_of(" \t");
  return b == std::string::npos ? "" : trimmed(line.substr(b));
}

ProcessResult run_tool(const StackTools& tools, std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"timeout", "-k", "2", std::to_string(tools.timeout_s)});
  return run_capture(argv);
}

}  // namespace

StackTools find_stack_tools(const std::vector<std::string>& dirs_first, const std::string& path) {
  std::vector<std::string> dirs = dirs_first;
  for (auto& d : split(path, ':')) dirs.push_back(d);
  StackTools t;
  t.py_spy = find_in(dirs, "py-spy");
  t.eu_stack = find_in(dirs, "eu-stack");
  t.gdb = find_in(dirs, "gdb");
  return t;
}

WorkerStacks capture_worker_stacks(int pid, const StackTools& tools) {
  WorkerStacks out;
  for (int p : group_members(pid)) {
    auto st = stat_of(p);
    if (!st) continue;
    std::string wchan = trimmed(read_file(fmt::format("/proc/{}/wchan", p)).value_or(""));
    std::string state = state_words(st->state);
    if (!wchan.empty() && wchan != "0") state += " in " + wchan;
    out.text += fmt::format("== pid {} ({}), {}{}\n", p, st->comm, state, p == pid ? ", the worker" : "");
    const std::string id = std::to_string(p);
    const bool python = is_python(p, *st) && !tools.py_spy.empty();
    std::string label;
    std::vector<std::string> argv;
    if (python) {
      // --nonblocking: read its memory without pausing it (a stopped or hung process as it is).
      label = "py-spy dump";
      argv = {tools.py_spy, "dump", "--nonblocking", "--full-filenames", "--pid", id};
    } else if (!tools.eu_stack.empty()) {
      label = "eu-stack -s -i";
      argv = {tools.eu_stack, "-p", id, "-s", "-i"};
    } else if (!tools.gdb.empty()) {
      // debuginfod off: a node without the network would wait on it until the timeout.
      label = "gdb: thread apply all bt";
      argv = {tools.gdb, "-p", id, "-batch", "-nx", "-q", "-iex", "set debuginfod enabled off", "-ex",
              "set pagination off", "-ex", "thread apply all bt"};
    }
    std::optional<Frame> frame;
    if (argv.empty()) {
      out.text += "-- no py-spy, eu-stack or gdb on this node: the kernel's state only\n";
      std::string kstack = read_file(fmt::format("/proc/{}/stack", p)).value_or("");
      if (!kstack.empty()) out.text += kstack + "\n";
    } else {
      auto r = run_tool(tools, argv);
      out.text += "-- " + label + "\n" + r.out + (r.exit_code ? r.err : "") + "\n";
      frame = python ? innermost_python_frame(r.out) : innermost_native_frame(r.out);
      if (p == pid) out.waits_for_peers = waits_for_peers(r.out);
    }
    if (p == pid) {
      out.state = state;
      out.stopped_or_blocked = st->state == 'T' || st->state == 'D';
    }
    if (frame && out.frame.empty()) out.frame = frame_words(*frame, source_line(*frame));
  }
  if (out.frame.empty() && !out.state.empty()) out.frame = "the process " + out.state;
  return out;
}

}  // namespace hpclaunch
