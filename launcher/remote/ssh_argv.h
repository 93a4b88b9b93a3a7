// The ssh command lines of `--remote` (docs/remote.md), pure: what the target means, where the shared connection's
// socket lives, and the argv of each ssh run. One connection serves a whole session: the first ssh becomes the
// master (ControlMaster=auto) and stays ControlPersist seconds after the last command, so a password or 2FA
// prompt comes once. The effects (running them) are in remote/session.h.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

// `--remote [USER@]HOST[:PORT]`.
struct SshTarget {
  std::string user;  // "" : ssh's own choice (the config's User, else the local name)
  std::string host;
  int port = 0;      // 0: ssh's own choice
};

// The target `text` names, or nullopt with `why` set. HOST is a name, an IPv4 address or a bracketed IPv6 one
// ([::1]:2222); nothing in either part may start with '-' (ssh would read an option) or hold a space or a quote.
std::optional<SshTarget> parse_ssh_target(std::string_view text, std::string* why);
// "USER@HOST" or "HOST": ssh's destination argument.
std::string ssh_destination(const SshTarget& t);

struct SshSettings {
  std::string control_dir;   // the folder of the shared connection's socket (mode 0700, ours)
  std::string config_file;   // ssh -F FILE; "" for the user's own ~/.ssh/config
  bool batch = false;        // BatchMode=yes: no prompt at all (nothing to prompt on: no terminal)
  int persist_s = 600;       // ControlPersist: how long the master outlives the last command
};

// The folder for the connection sockets: $XDG_RUNTIME_DIR/hpclaunch-ssh when that path leaves room for a socket's
// name (a unix socket path holds at most 107 bytes, and ssh's %C and its temporary suffix take 58), else
// TMP/hpclaunch-ssh-UID. `runtime_dir` "" when XDG_RUNTIME_DIR is unset.
std::string ssh_control_dir(const std::string& runtime_dir, const std::string& tmp_dir, unsigned uid);

// ssh's argv that runs `far_command` (one string, given to the far side's login shell) on `t` over the shared
// connection.
std::vector<std::string> ssh_argv(const SshSettings& s, const SshTarget& t, const std::string& far_command);
// ssh's argv that asks the master to end (`ssh -O exit`): closes the session's connection.
std::vector<std::string> ssh_exit_argv(const SshSettings& s, const SshTarget& t);

}  // namespace hpclaunch
