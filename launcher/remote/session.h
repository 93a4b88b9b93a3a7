// The effects of `--remote`: ssh run over the session's shared connection (remote/ssh_argv.h), the far launcher
// brought up to date, files sent and fetched, the command's output and exit status passed through.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "remote/far_side.h"
#include "remote/ssh_argv.h"

namespace hpclaunch {

// Runs argv with this process's stdout and stderr (and stdin from `stdin_path`, /dev/null when ""); its exit
// status (128 + signal when killed; 127 when it cannot start).
int run_passing_through(const std::vector<std::string>& argv, const std::string& stdin_path = "");

// 32 random hex digits (/dev/urandom): a submit token, and the name of a call's far folder.
std::string new_submit_token();

// The session's settings from the environment: the socket folder (made 0700 if missing; refused when it is not
// ours or others may enter it), HPCLAUNCH_SSH_CONFIG as ssh -F, BatchMode when there is no terminal to prompt on.
SshSettings ssh_settings_from_environment();

class RemoteSession {
 public:
  RemoteSession(SshSettings settings, SshTarget target, std::string shown)
      : m_settings(std::move(settings)), m_target(std::move(target)), m_shown(std::move(shown)) {}

  // Asks the far side its architecture and launcher; copies a launcher there when it differs from
  // `local_version_line`, taking it from `launcher_for(arch)` (which throws when it has none). Says so on stderr.
  void ensure_launcher(const std::string& local_version_line,
                       const std::function<std::string(const std::string& arch)>& launcher_for);
  // Sends the call's uploads, runs it (submit: again, with the same token, after a lost connection), fetches its
  // downloads, removes its far folder. Returns the far command's exit status.
  int run(const RemoteCall& call, const std::string& token);

 private:
  std::string far_run_capture(const std::string& script, const char* what);
  void send(const std::string& local, const std::string& script, const std::string& what);
  std::vector<std::string> argv(const std::string& script) const;
  SshSettings m_settings;
  SshTarget m_target;
  std::string m_shown;  // the target as the user named it
};

}  // namespace hpclaunch
