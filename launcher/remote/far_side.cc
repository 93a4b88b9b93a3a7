#include "remote/far_side.h"

#include <fmt/core.h>

#include <algorithm>

#include "util/error.h"
#include "util/shell.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// The far side's folders, as sh expressions (expanded there, so never quoted).
constexpr const char* k_far_cache = "${XDG_CACHE_HOME:-$HOME/.cache}/hpclaunch";

std::string call_dir(const std::string& token) { return fmt::format("{}/remote/{}", k_far_cache, token); }

std::string base_name(const std::string& path) {
  std::string name = path.substr(path.find_last_of('/') + 1);
  return name.empty() || name == "." || name == ".." ? "file" : name;
}

// An option of `names` that takes a file: "--spec X", "--spec=X", and for a short name "-oX" too. Returns the
// value's index in args (the same index when it is glued to the name), or npos; `glued` says which.
struct FileOption {
  size_t at;
  std::string value;
  std::string name;
};
std::vector<FileOption> file_options(const std::vector<std::string>& args, const std::vector<std::string>& names) {
  std::vector<FileOption> found;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    for (const auto& n : names) {
      if (a == n && i + 1 < args.size()) {
        found.push_back({i + 1, args[i + 1], n});
        ++i;
        break;
      }
      if (n.size() > 2 && a.starts_with(n + "=")) {
        found.push_back({i, a.substr(n.size() + 1), n});
        break;
      }
      if (n.size() == 2 && a.size() > 2 && a.starts_with(n) && a[2] != '=') {
        found.push_back({i, a.substr(2), n});
        break;
      }
    }
  }
  return found;
}

// The words of `args`, with each found option's value replaced by its far name in the call's folder.
std::vector<FarWord> with_far_files(const std::string& command, const std::vector<std::string>& args,
                                    const std::vector<FileOption>& files, const std::vector<std::string>& far_names) {
  std::vector<FarWord> words = {{command}};
  for (size_t i = 0; i < args.size(); ++i) {
    auto it = std::find_if(files.begin(), files.end(), [&](const FileOption& f) { return f.at == i; });
    if (it == files.end()) {
      words.push_back({args[i]});
      continue;
    }
    const std::string& far = far_names[static_cast<size_t>(it - files.begin())];
    if (args[i] != it->value || i == 0 || args[i - 1] != it->name) words.push_back({it->name});  // was glued
    words.push_back({far, true});
  }
  return words;
}

// Takes submit's snapshot options out of `args` (before `--`) into `ask`; true when --snapshot was among them.
// --no-snapshot stays: the far side reads it.
bool take_snapshot_options(std::vector<std::string>* args, SnapshotAsk* ask) {
  bool on = false;
  std::vector<std::string> kept;
  for (size_t i = 0; i < args->size(); ++i) {
    const std::string& a = (*args)[i];
    if (a == "--") {
      kept.insert(kept.end(), args->begin() + static_cast<long>(i), args->end());
      break;
    }
    if (a == "--snapshot") {
      on = true;
    } else if ((a == "--snapshot-exclude" || a == "--snapshot-max-size") && i + 1 < args->size()) {
      (a == "--snapshot-exclude" ? ask->exclude.emplace_back() : ask->max_size) = (*args)[++i];
    } else if (a.starts_with("--snapshot-exclude=")) {
      ask->exclude.push_back(a.substr(19));
    } else if (a.starts_with("--snapshot-max-size=")) {
      ask->max_size = a.substr(20);
    } else {
      kept.push_back(a);
    }
  }
  *args = kept;
  return on;
}

}  // namespace

std::string far_command(const std::string& script) { return "sh -c " + shell_quote(script); }

std::string probe_script() {
  return fmt::format("uname -m; l={}/bin/hpclaunch; if [ -x \"$l\" ]; then \"$l\" --version 2>/dev/null; fi; :",
                     k_far_cache);
}

FarSide parse_probe(std::string_view out, std::string* why) {
  std::vector<std::string> lines = split(std::string(out), '\n');
  while (!lines.empty() && trim(lines.back()).empty()) lines.pop_back();
  FarSide far;
  if (lines.empty() || trim(lines[0]).empty() || trim(lines[0]).find(' ') != std::string::npos) {
    *why = fmt::format("the far side's `uname -m` answered '{}'", lines.empty() ? std::string() : lines[0]);
    return far;
  }
  far.arch = std::string(trim(lines[0]));
  if (lines.size() > 1 && lines[1].starts_with("hpclaunch ")) far.launcher_version = std::string(trim(lines[1]));
  why->clear();
  return far;
}

bool needs_launcher_copy(const FarSide& far, const std::string& local_version_line) {
  return far.launcher_version != local_version_line;
}

std::string install_script() {
  return fmt::format("set -e; d={}/bin; mkdir -p \"$d\"; t=\"$d/.hpclaunch.tmp.$$\"; "
                     "trap 'rm -f \"$t\"' EXIT; cat >\"$t\"; chmod 755 \"$t\"; "
                     "mv -f \"$t\" \"$d/hpclaunch\"; trap - EXIT",
                     k_far_cache);
}

RemoteCall plan_remote_call(const std::string& command, const std::vector<std::string>& args,
                            const std::string& token) {
  RemoteCall call;
  // The snapshot is this machine's code: taken here (the caller, SnapshotAsk) and sent; the far side would copy its
  // own directory (its home). Without --snapshot, a spec's or profile's `snapshot: true` is turned off there.
  const bool submits = command == "submit" || command == "render";
  std::vector<std::string> rest = args;
  SnapshotAsk ask;
  const bool snapshot = submits && take_snapshot_options(&rest, &ask);
  if (submits && !snapshot && (!ask.exclude.empty() || !ask.max_size.empty()))
    throw Error(ask.exclude.empty() ? "--snapshot-max-size" : "--snapshot-exclude", "given without --snapshot",
                "add --snapshot, or drop it");
  std::vector<FileOption> files;
  if (submits) files = file_options(rest, {"--spec", "--site-file"});
  if (command == "report") files = file_options(rest, {"--output", "-o"});
  std::vector<std::string> far_names;
  for (size_t i = 0; i < files.size(); ++i) {
    far_names.push_back(fmt::format("{}-{}", i, base_name(files[i].value)));
    Transfer t{files[i].value, far_names.back()};
    if (command == "report") call.downloads.push_back(t);
    else call.uploads.push_back(t);
  }
  call.far_args = with_far_files(command, rest, files, far_names);
  if (snapshot) {
    call.snapshot = ask;
    call.far_args.insert(call.far_args.begin() + 1, {{"--snapshot-prepared"}, {".", true}});
  } else if (submits) {
    call.far_args.insert(call.far_args.begin() + 1, {"--no-snapshot"});
  }
  if (command == "submit") {
    call.submit_token = token;
    call.far_args.insert(call.far_args.begin() + 1, {{"--submit-token"}, {token}});
  }
  return call;
}

std::string upload_script(const std::string& token, const std::string& name) {
  return fmt::format("set -e; r={}; mkdir -p \"$r\"; chmod 700 \"$r\"; cat >\"$r\"/{}", call_dir(token),
                     shell_quote(name));
}

std::string run_script(const RemoteCall& call, const std::string& token) {
  std::string line = fmt::format("r={}; exec {}/bin/hpclaunch", call_dir(token), k_far_cache);
  if (!call.downloads.empty()) line = fmt::format("r={}; mkdir -p \"$r\"; chmod 700 \"$r\"; exec {}/bin/hpclaunch",
                                                  call_dir(token), k_far_cache);
  // The laptop's snapshot, unpacked into the call's tree/ (again on a retry: the same files).
  if (call.snapshot)
    line = fmt::format("r={}; mkdir -p \"$r\"/tree && tar -xf \"$r\"/{} -C \"$r\"/tree && exec {}/bin/hpclaunch",
                       call_dir(token), k_snapshot_upload, k_far_cache);
  for (const auto& w : call.far_args)
    line += (w.in_call_dir ? " \"$r\"/" : " ") + shell_quote(w.text);
  return line;
}

std::string fetch_script(const std::string& token, const std::string& name) {
  return fmt::format("exec cat {}/{}", call_dir(token), shell_quote(name));
}

std::string cleanup_script(const std::string& token) { return fmt::format("rm -rf {}", call_dir(token)); }

std::string laptop_output(std::string_view out, const RemoteCall& call, const std::string& token) {
  std::vector<std::string> lines = split(out, '\n');
  for (auto& line : lines)
    for (const auto& d : call.downloads)
      if (line.ends_with("/hpclaunch/remote/" + token + "/" + d.far)) line = d.local;
  return join(lines, "\n");
}

bool is_submit_token(std::string_view text) {
  return text.size() == 32 &&
         std::all_of(text.begin(), text.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace hpclaunch
