#include "cli/remote_cli.h"

#include <unistd.h>

#include <filesystem>

#include "dialect/dialect.h"
#include "remote/far_side.h"
#include "remote/session.h"
#include "site/registry.h"
#include "submit/binary_arch.h"
#include "util/command.h"
#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace {

namespace fs = std::filesystem;

// A site's login_host, "" when VALUE names no site or its profile has none.
std::string login_host_of(const std::string& value) {
  SiteRegistry sites = load_sites({}, scheduler_checks());
  const SiteProfile* p = sites.find(value);
  return p ? p->login_host : "";
}

bool is_static_for(const std::string& path, const std::string& arch) {
  std::optional<std::string> bytes = read_file(path);
  if (!bytes) return false;
  return elf_arch(*bytes) == arch && elf_is_static(*bytes);
}

// A launcher to copy to a far side of `arch`: $HPCLAUNCH_REMOTE_LAUNCHERS/hpclaunch-ARCH, the install tree's
// PREFIX/libexec/hpclaunch/hpclaunch-ARCH, or this very binary when it is a static one of that architecture.
std::string launcher_for(const std::string& arch) {
  std::vector<std::string> places;
  if (const char* dir = std::getenv("HPCLAUNCH_REMOTE_LAUNCHERS"); dir && *dir)
    places.push_back((fs::path(dir) / ("hpclaunch-" + arch)).string());
  const fs::path self = self_executable();
  places.push_back((self.parent_path().parent_path() / "libexec" / "hpclaunch" / ("hpclaunch-" + arch)).string());
  for (const auto& p : places)
    if (access(p.c_str(), R_OK) == 0) return p;
  if (is_static_for(self.string(), arch)) return self.string();
  throw Error("--remote", "the far side is " + arch + " and has no hpclaunch of this version, and there is no " + arch +
                              " launcher here to copy there",
              "build the static one (docs/install.md, \"The static binary\"; for aarch64 as t0725 does) and put it at " +
                  places.front());
}

}  // namespace

std::optional<int> run_if_remote(const Command& c, const Args& args, const std::string& version_line) {
  if (!c.remote) return std::nullopt;
  std::optional<RemoteFlag> flag = take_remote_flag(args);
  if (!flag) return std::nullopt;
  SshTarget target = remote_target(flag->value, login_host_of);
  RemoteSession session(ssh_settings_from_environment(), target, flag->value);
  session.ensure_launcher(version_line, launcher_for);
  const std::string token = new_submit_token();
  return session.run(plan_remote_call(c.name, flag->rest, token), token);
}

}  // namespace hpclaunch
