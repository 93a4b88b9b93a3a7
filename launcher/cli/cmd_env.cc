// `hpclaunch env [--format sh|json]`: prints this task's RANK, LOCAL_RANK, WORLD_SIZE, ... MASTER_ADDR,
// MASTER_PORT, as `export` lines to eval or as one JSON object. Notes (world of one, ...) go to stderr.
#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/task_env_cli.h"
#include "util/error.h"
#include "util/shell.h"

namespace hpclaunch {

int cmd_env(const Args& args) {
  CLI::App app("Print this task's torch rendezvous variables (RANK, WORLD_SIZE, MASTER_ADDR, ...).", "env");
  std::string format = "sh";
  app.add_option("--format", format, "sh: export lines for eval (default); json: one object")
      ->check(CLI::IsMember({"sh", "json"}));
  TaskEnvCli cli;
  add_task_env_options(app, &cli);
  if (!parse_or_throw(app, args)) return 0;
  TaskEnv task = compute_task_env(capture_environment(), to_task_env_options(app, cli), system_task_env_effects());
  print_notes(task);
  if (format == "json") {
    nlohmann::ordered_json j;
    for (const auto& [name, value] : task.vars) j[name] = value;
    fmt::print("{}\n", j.dump());
  } else {
    for (const auto& [name, value] : task.vars) fmt::print("export {}={}\n", name, shell_quote(value));
  }
  return 0;
}

}  // namespace hpclaunch
