// `hpclaunch completion bash|zsh|fish`: prints a completion script made from the command table and every
// command's --help (cli/completion.h), e.g. `source <(hpclaunch completion bash)`.
#include <fmt/core.h>

#include "cli/cli_util.h"
#include "cli/completion.h"
#include "cli/help_text.h"
#include "site/launchers.h"
#include "util/error.h"

namespace hpclaunch {

int cmd_completion(const Args& args) {
  CLI::App app("Print a shell completion script for hpclaunch (installed by `cmake --install` too).", "completion");
  std::string shell;
  app.add_option("SHELL", shell, "bash, zsh or fish")->required();
  app.footer("bash: source <(hpclaunch completion bash)   zsh: hpclaunch completion zsh > ~/.zfunc/_hpclaunch\n"
             "fish: hpclaunch completion fish > ~/.config/fish/completions/hpclaunch.fish");
  if (!parse_or_throw(app, args)) return 0;
  const std::vector<std::string> launchers = names_of(launch_mode_names());  // every one a site may offer
  if (shell == "bash") fmt::print("{}", bash_completion(command_docs(), launchers, HPCLAUNCH_VERSION));
  else if (shell == "zsh") fmt::print("{}", zsh_completion(command_docs(), launchers, HPCLAUNCH_VERSION));
  else if (shell == "fish") fmt::print("{}", fish_completion(command_docs(), launchers, HPCLAUNCH_VERSION));
  else throw Error("completion", "unknown shell '" + shell + "'", "give bash, zsh or fish");
  return 0;
}

}  // namespace hpclaunch
