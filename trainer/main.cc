// hpclaunch-train's entry point: parse, run, and print any error once as "hpclaunch-train: error: ..." (run_main).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "loaded_nccl.h"
#include "options.h"
#include "signals.h"
#include "trainer.h"
#include "util/cli_error.h"

int main(int argc, char** argv) {
  using namespace hpctrain;
  install_signal_handlers();  // before anything slow or threaded: a warning may come at once
  return hpclaunch::run_main("hpclaunch-train", [&] {
    const Invocation inv = parse_command_line(std::vector<std::string>(argv + 1, argv + argc));
    switch (inv.command) {
      case Command::help: std::fputs(inv.help_text.c_str(), stdout); return k_exit_ok;
      case Command::version:
        std::puts(version_line("hpclaunch-train", loaded_nccl_version()).c_str());
        return k_exit_ok;
      case Command::inspect: return inspect_checkpoint(inv.files[0]);
      case Command::compare: return compare_checkpoints(inv.files[0], inv.files[1], inv.tolerance);
      case Command::train: break;
    }
    const auto getenv = [](const char* name) { return std::getenv(name); };
    TrainOptions options = inv.options;
    options.hooks = read_test_hooks(getenv);  // before connecting: a bad value exits 2 at once
    return run_training(options, read_dist_env(getenv));
  });
}
