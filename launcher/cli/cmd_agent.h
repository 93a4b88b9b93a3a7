// `hpclaunch agent`'s and the torchrun face's command line, read with CLI11 (torchrun's flags, with hyphens or
// underscores); what they mean is decided by resolve_agent_options (agent/agent_options.h).
#pragma once
#include <string>

#include "agent/agent_options.h"
#include "cli/commands.h"

namespace hpclaunch {

// Fills `flags` from `args`. Throws Error naming the flag; returns false (with `help` filled) when --help was asked.
bool parse_agent_flags(const Args& args, AgentFace face, AgentFlags* flags, std::string* help);

}  // namespace hpclaunch
