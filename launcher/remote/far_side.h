// What `--remote` runs on the far side and what travels, pure: the far shell's scripts, the answer of its probe,
// whether the laptop's launcher must be copied there, and a command's call (its far arguments, the laptop files
// that go with it, the far files that come back). The effects are in remote/session.h.
//
// Every script is run by `sh -c` (the far login shell may be csh or fish), quoted with util/shell.h's one quoter.
// The far side keeps its launcher in ${XDG_CACHE_HOME:-$HOME/.cache}/hpclaunch/bin/hpclaunch and a call's files in
// ${XDG_CACHE_HOME:-$HOME/.cache}/hpclaunch/remote/TOKEN/.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hpclaunch {

// `sh -c SCRIPT`, quoted for the far login shell.
std::string far_command(const std::string& script);

// Prints `uname -m`, then the far launcher's `--version` line (nothing when it has none).
std::string probe_script();
struct FarSide {
  std::string arch;             // "x86_64", "aarch64" (uname -m)
  std::string launcher_version; // "hpclaunch 0.1.0 (commit ...)"; "" when there is none
};
// The probe's answer; `why` set (and an empty arch) when it is not one.
FarSide parse_probe(std::string_view out, std::string* why);
// The far launcher is copied unless it prints exactly the laptop's version line: the far side then runs the same
// launcher as the laptop, whatever it had (older or newer).
bool needs_launcher_copy(const FarSide& far, const std::string& local_version_line);
// Reads the launcher from stdin into a temporary file beside the far launcher, makes it executable and renames it
// over the launcher: a dropped connection leaves the old launcher or the new one, never half of one.
std::string install_script();

// One file that travels: `local` on the laptop, `far` a name inside the call's far folder.
struct Transfer {
  std::string local;
  std::string far;
};
// A word of the far command line: `text` itself, or (in_call_dir) the path of `text` in the call's far folder.
struct FarWord {
  std::string text;
  bool in_call_dir = false;
};
// What one command run with --remote does beyond running: the far command line, the laptop files sent first
// (submit's and render's --spec and --site-file; with --snapshot the laptop's snapshot, added where it is taken) and the far files
// fetched after it (report's -o page, written on the far side and brought to the laptop's path).
// submit --snapshot over ssh: what the laptop is asked to take (its --snapshot-exclude and --snapshot-max-size),
// sent as the call's origin.json and snap.tar (submit/snapshot.h's prepared snapshot), which the far side unpacks
// into the call's tree/ and submits with --snapshot-prepared CALLDIR.
struct SnapshotAsk {
  std::vector<std::string> exclude;
  std::string max_size;  // "" when not given
};
inline constexpr const char* k_snapshot_upload = "snap.tar";
inline constexpr const char* k_snapshot_origin_upload = "origin.json";

struct RemoteCall {
  std::vector<FarWord> far_args;     // after the far launcher's path: the command's name, then its arguments
  std::vector<Transfer> uploads;     // before the command
  std::vector<Transfer> downloads;   // after it, when it succeeded
  std::string submit_token;          // submit: the far side submits this token once (remote/submit_once.h)
  std::optional<SnapshotAsk> snapshot;  // the laptop takes a snapshot and uploads it as k_snapshot_upload
};

// The call for `command` with `args` (the laptop's command line after the command's name, --remote taken out).
// `token` (32 hex digits) names the call's far folder; submit passes it as --submit-token. Local paths are kept as
// the user gave them: a relative one is relative to the laptop's working directory.
RemoteCall plan_remote_call(const std::string& command, const std::vector<std::string>& args, const std::string& token);

// The script that sends the call's uploads' file `name` (from stdin) into the call's far folder.
std::string upload_script(const std::string& token, const std::string& name);
// The script that runs the call: the far launcher with its arguments, from the far home.
std::string run_script(const RemoteCall& call, const std::string& token);
// The script that prints a far file of the call's folder (a download).
std::string fetch_script(const std::string& token, const std::string& name);
// The script that removes the call's far folder.
std::string cleanup_script(const std::string& token);

// The far output with each line that names a download's far path (".../hpclaunch/remote/TOKEN/NAME") replaced
// by its laptop path: report -o prints the page's path.
std::string laptop_output(std::string_view out, const RemoteCall& call, const std::string& token);

// Whether `text` is a submit token (32 lowercase hex digits): it names files on the far side.
bool is_submit_token(std::string_view text);

}  // namespace hpclaunch
