#include "cli/remote_cli.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "dialect/dialect.h"
#include "remote/far_side.h"
#include "remote/session.h"
#include "site/registry.h"
#include "submit/binary_arch.h"
#include "submit/snapshot.h"
#include "submit/snapshot_rules.h"
#include "util/command.h"
#include "util/error.h"
#include "util/environment.h"
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

// A private folder for what is sent (mkdtemp under $TMPDIR), removed with everything in it when the call ends.
class LaptopStage {
 public:
  LaptopStage() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/hpclaunch-remote-XXXXXX";
    if (!::mkdtemp(pattern.data())) throw failure(pattern, std::string("cannot make a folder: ") + std::strerror(errno));
    m_path = pattern;
  }
  ~LaptopStage() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  LaptopStage(const LaptopStage&) = delete;
  LaptopStage& operator=(const LaptopStage&) = delete;
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

// submit --snapshot --remote: the snapshot taken here (this machine's code, as submit would take it, less the far
// profile's excludes, which are not known here), its record and its files as a tar in `dir`, sent with the call.
void take_snapshot_here(const SnapshotAsk& ask, const std::string& dir, RemoteCall* call) {
  JobRequest request;  // submit's flags, read as submit reads them (no profile: the far one is not known here)
  request.snapshot = true;
  request.snapshot_exclude = ask.exclude;
  request.snapshot_max_size = ask.max_size;
  const SnapshotSettings settings = snapshot_settings(request, SiteProfile{});
  // `dir` as the job directory: outside the tree, so nothing of it is left out.
  SnapshotSource source = list_snapshot(settings, fs::current_path().string(), dir, run_capture);
  for (const auto& w : source.warnings) fmt::print(stderr, "hpclaunch: warning: {}\n", w);
  if (source.entries.empty()) throw Error("--snapshot", "no files to copy from " + source.root, "submit from the code's folder");
  std::string list;
  for (const auto& e : source.entries) list += e.path + '\0';
  const std::string list_path = dir + "/files", tar_path = dir + "/" + k_snapshot_upload,
                    origin_path = dir + "/" + k_snapshot_origin_upload;
  if (!write_file_atomic(list_path, list) ||
      !write_file_atomic(origin_path, prepared_origin_json(source, host_name().empty() ? "localhost" : host_name())))
    throw failure(dir, std::string("cannot write the snapshot to send: ") + std::strerror(errno));
  ProcessResult tar = run_capture({"tar", "-C", source.root, "--null", "--no-recursion", "-T", list_path, "-cf", tar_path});
  if (tar.exit_code != 0) command_failed({"tar", "-cf", tar_path}, tar, "check that tar (GNU) is installed here");
  call->uploads.push_back({origin_path, k_snapshot_origin_upload});
  call->uploads.push_back({tar_path, k_snapshot_upload});
}

}  // namespace

std::optional<int> run_if_remote(const Command& c, const Args& args, const std::string& version_line) {
  if (!c.remote) return std::nullopt;
  std::optional<RemoteFlag> flag = take_remote_flag(args);
  if (!flag) return std::nullopt;
  SshTarget target = remote_target(flag->value, login_host_of);
  const std::string token = new_submit_token();
  RemoteCall call = plan_remote_call(c.name, flag->rest, token);
  // The snapshot is taken before anything is sent, so that its refusals (too large, unreadable) come first.
  std::optional<LaptopStage> stage;
  if (call.snapshot) take_snapshot_here(*call.snapshot, stage.emplace().path(), &call);
  RemoteSession session(ssh_settings_from_environment(), target, flag->value);
  session.ensure_launcher(version_line, launcher_for);
  return session.run(call, token);
}

}  // namespace hpclaunch
