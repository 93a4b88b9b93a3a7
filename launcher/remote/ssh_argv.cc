#include "remote/ssh_argv.h"

#include <fmt/core.h>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

std::vector<std::string> common_options(const SshSettings& s, const SshTarget& t) {
  std::vector<std::string> argv = {"ssh"};
  if (!s.config_file.empty()) argv.insert(argv.end(), {"-F", s.config_file});
  argv.insert(argv.end(), {"-o", "ControlMaster=auto", "-o", "ControlPath=" + s.control_dir + "/%C", "-o",
                           fmt::format("ControlPersist={}", s.persist_s),
                           // A connection that went away is noticed within a minute, not at TCP's timeout.
                           "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4"});
  if (s.batch) argv.insert(argv.end(), {"-o", "BatchMode=yes"});
  if (t.port) argv.insert(argv.end(), {"-p", std::to_string(t.port)});
  return argv;
}

}  // namespace

std::optional<RemoteFlag> take_remote_flag(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    const bool spaced = args[i] == "--remote", glued = args[i].rfind("--remote=", 0) == 0;
    if (!spaced && !glued) continue;
    if (spaced && (i + 1 >= args.size() || args[i + 1] == "--"))
      throw Error("--remote", "needs a value", "give USER@HOST, or a site whose profile names its login_host");
    RemoteFlag f{glued ? args[i].substr(9) : args[i + 1], {}};
    f.rest.assign(args.begin(), args.begin() + static_cast<long>(i));
    f.rest.insert(f.rest.end(), args.begin() + static_cast<long>(i + (spaced ? 2 : 1)), args.end());
    return f;
  }
  return std::nullopt;
}

SshTarget remote_target(const std::string& value, const std::function<std::string(const std::string&)>& login_host_of) {
  std::string text = value;
  if (value.find_first_of("@:.") == std::string::npos)
    if (std::string login = login_host_of(value); !login.empty()) text = login;
  std::string why;
  std::optional<SshTarget> t = parse_ssh_target(text, &why);
  if (!t)
    throw Error("--remote", "'" + text + "' is no ssh target: " + why,
                "give [USER@]HOST[:PORT], or a site whose profile names its login_host");
  return *t;
}

bool ssh_may_prompt(bool has_terminal, const Env& env) {
  if (has_terminal) return true;
  const std::string require = ascii_lower(env_get(env, "SSH_ASKPASS_REQUIRE").value_or(""));  // ssh: strcasecmp
  if (require == "force") return true;
  if (require == "never") return false;
  return env_non_empty(env, "DISPLAY") || env_non_empty(env, "WAYLAND_DISPLAY");
}

std::string ssh_control_dir(const std::string& runtime_dir, const std::string& tmp_dir, unsigned uid) {
  // sockaddr_un's sun_path: 108 bytes with the terminating NUL; "/" + %C (40) + ssh's ".XXXXXXXXXXXXXXXX" (17).
  constexpr size_t k_room = 107 - 58;
  const std::string in_runtime = runtime_dir + "/hpclaunch-ssh";
  if (!runtime_dir.empty() && runtime_dir[0] == '/' && in_runtime.size() <= k_room) return in_runtime;
  const std::string tmp = tmp_dir.empty() || tmp_dir[0] != '/' ? "/tmp" : tmp_dir;
  const std::string in_tmp = fmt::format("{}/hpclaunch-ssh-{}", tmp, uid);
  return in_tmp.size() <= k_room ? in_tmp : fmt::format("/tmp/hpclaunch-ssh-{}", uid);
}

std::vector<std::string> ssh_argv(const SshSettings& s, const SshTarget& t, const std::string& far_command) {
  std::vector<std::string> argv = common_options(s, t);
  argv.insert(argv.end(), {"--", ssh_destination(t), far_command});
  return argv;
}

}  // namespace hpclaunch
