// The ssh command lines of `--remote` (docs/remote.md), pure: what the target means, where the shared connection's
// socket lives, and the argv of each ssh run. One connection serves a whole session: the first ssh becomes the
// master (ControlMaster=auto) and stays ControlPersist seconds after the last command, so a password or 2FA
// prompt comes once. The effects (running them) are in remote/session.h.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "util/environment.h"
#include "util/ssh_target.h"

namespace hpclaunch {

// A command line's --remote: its value, and the command line without it.
struct RemoteFlag {
  std::string value;
  std::vector<std::string> rest;
};
// --remote VALUE or --remote=VALUE before any `--` (after it, the words are the job's command); nullopt when there
// is none. Throws hpclaunch::Error (exit 2) when it has no value.
std::optional<RemoteFlag> take_remote_flag(const std::vector<std::string>& args);
// The target --remote VALUE names: VALUE itself, or, when it is a plain name (no '@', ':' or '.') for which
// `login_host_of` (a site's profile) answers something, that. Throws hpclaunch::Error (exit 2, naming --remote)
// when the result is no target.
SshTarget remote_target(const std::string& value, const std::function<std::string(const std::string&)>& login_host_of);


struct SshSettings {
  std::string control_dir;   // the folder of the shared connection's socket (mode 0700, ours)
  std::string config_file;   // ssh -F FILE; "" for the user's own ~/.ssh/config
  bool batch = false;        // BatchMode=yes: no prompt at all (nothing to prompt on: !ssh_may_prompt)
  int persist_s = 600;       // ControlPersist: how long the master outlives the last command
};

// The folder for the connection sockets: $XDG_RUNTIME_DIR/hpclaunch-ssh when that path leaves room for a socket's
// name (a unix socket path holds at most 107 bytes, and ssh's %C and its temporary suffix take 58), else
// TMP/hpclaunch-ssh-UID. `runtime_dir` "" when XDG_RUNTIME_DIR is unset.
std::string ssh_control_dir(const std::string& runtime_dir, const std::string& tmp_dir, unsigned uid);

// Whether ssh can ask for a password, a key's passphrase or a 2FA code in this session: on the terminal, or, as
// OpenSSH decides it (readpass.c), through the SSH_ASKPASS program (ssh-askpass by default): with
// SSH_ASKPASS_REQUIRE=force, or with a display (DISPLAY or WAYLAND_DISPLAY) unless SSH_ASKPASS_REQUIRE=never. A
// user without a terminal (an editor's task, a notebook) but with an askpass gets the one prompt of the session
// there; with neither, ssh runs with BatchMode=yes and fails at once instead of waiting for an answer.
bool ssh_may_prompt(bool has_terminal, const Env& env);

// ssh's argv that runs `far_command` (one string, given to the far side's login shell) on `t` over the shared
// connection.
std::vector<std::string> ssh_argv(const SshSettings& s, const SshTarget& t, const std::string& far_command);

}  // namespace hpclaunch
