// Shell completion scripts (bash, zsh, fish) made from the command table and each command's parsed --help:
// subcommands, their options, and the values hpclaunch knows (site names, launchers, jobs, shells).
#pragma once
#include <string>
#include <vector>

#include "cli/help_model.h"

namespace hpclaunch {

// What a value (of an option, or a positional) completes to.
enum class ValueKind {
  none,         // free text: nothing to offer
  flag,         // takes no value
  file,         // a path
  site,         // a site profile's name (`hpclaunch sites`, asked when completing)
  launcher,     // agent, srun, mpirun
  job,          // a job from `hpclaunch jobs`
  file_or_job,  // plot's RUN
  shell,        // bash, zsh, fish
  command,      // an hpclaunch command (for `man`)
  sites_word,   // sites' show/check/learn, then a site
  program,      // the job's command (after --)
};

ValueKind value_kind(const std::string& command, const HelpEntry& entry);

std::string bash_completion(const std::vector<CommandDoc>& commands, const std::vector<std::string>& launchers,
                            const std::string& version);
std::string zsh_completion(const std::vector<CommandDoc>& commands, const std::vector<std::string>& launchers,
                           const std::string& version);
std::string fish_completion(const std::vector<CommandDoc>& commands, const std::vector<std::string>& launchers,
                            const std::string& version);

}  // namespace hpclaunch
