// Running other programs: capture a command's output (sbatch, qsub, squeue), or run one in the foreground.
#pragma once
#include <string>
#include <vector>

namespace hpclaunch {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal; 127 when the program was not found
  std::string out;
  std::string err;
};

// Runs argv (PATH lookup), feeds it nothing, returns its exit code and output. Never throws for the
// program's own failure; a program that cannot be started gives exit_code 127 and the reason in `err`.
ProcessResult run_capture(const std::vector<std::string>& argv);

// The absolute path of the running executable (/proc/self/exe).
std::string self_executable();

// "SIGTERM" for 15, "signal 99" for unknown numbers.
std::string signal_name(int sig);

}  // namespace hpclaunch
