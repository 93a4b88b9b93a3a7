#include "submit/snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "util/file.h"
#include "util/strings.h"

namespace hpclaunch {

namespace fs = std::filesystem;

namespace {

const char* const k_exclude_fix = "make it readable, or leave it out with --snapshot-exclude PATTERN";

// `text` as a gitignore pattern that matches only itself.
std::string literal_pattern(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '?' || c == '[' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

// `path` (absolute) relative to `root`, or "" when it is not inside it.
std::string inside(const std::string& path, const std::string& root) {
  fs::path rel = fs::path(path).lexically_normal().lexically_relative(fs::path(root).lexically_normal());
  if (rel.empty() || rel == "." || *rel.begin() == "..") return "";
  return rel.string();
}

// The entry for `rel` under `root`, after checking that it can be read; nullopt for what a snapshot does not hold
// (gone since git listed it, a folder such as a submodule, a socket); `warnings` says why where it matters.
std::optional<SnapshotEntry> entry_for(const std::string& root, const std::string& rel, std::vector<std::string>* warnings) {
  const std::string path = root + "/" + rel;
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return std::nullopt;  // deleted, not yet committed: the snapshot has it deleted too
    throw Error(path, std::string("cannot be read for the snapshot: ") + std::strerror(errno), k_exclude_fix);
  }
  if (S_ISLNK(st.st_mode)) return SnapshotEntry{rel, 0, true};
  if (S_ISDIR(st.st_mode)) {
    warnings->push_back("--snapshot: " + rel + " (a git submodule) is not in the snapshot; the job sees none of it");
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) return std::nullopt;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw Error(path, std::string("cannot be read for the snapshot: ") + std::strerror(errno), k_exclude_fix);
  ::close(fd);
  return SnapshotEntry{rel, static_cast<std::uint64_t>(st.st_size), false};
}

// A git work tree's snapshot; false when `cwd` is in none (or git is not installed).
bool list_git(const CommandRunner& run, const IgnoreRules& excludes, SnapshotSource* s) {
  ProcessResult top = run({"git", "-C", s->cwd, "rev-parse", "--show-toplevel"});
  if (top.exit_code != 0) return false;
  s->git = true;
  s->root = std::string(trim(top.out));
  ProcessResult files = run({"git", "-C", s->root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"});
  if (files.exit_code != 0)
    throw failure("--snapshot", "git ls-files failed in " + s->root + ": " + std::string(trim(files.err)),
                  "fix the repository, or submit without --snapshot");
  std::vector<std::string> paths = split_nul(files.out);
  paths.erase(std::unique(paths.begin(), paths.end()), paths.end());  // a conflicted file is listed once a stage
  for (const auto& rel : paths) {
    if (excludes.ignored_with_parents(rel)) continue;
    if (auto e = entry_for(s->root, rel, &s->warnings)) s->entries.push_back(*e);
  }
  ProcessResult head = run({"git", "-C", s->root, "rev-parse", "--verify", "-q", "HEAD"});
  if (head.exit_code == 0) s->commit = std::string(trim(head.out));
  ProcessResult status = run({"git", "-C", s->root, "status", "--porcelain", "-z"});
  s->dirty = status.exit_code != 0 || porcelain_dirty(status.out, excludes) || s->commit.empty();
  return true;
}

// Every file under `dir` (relative `rel`, "" for the root) that neither the excludes nor a .gitignore names.
void walk(const std::string& root, const std::string& rel, const IgnoreRules& excludes, IgnoreRules* gitignore,
          std::vector<SnapshotEntry>* out, std::vector<std::string>* warnings) {
  const std::string dir = rel.empty() ? root : root + "/" + rel;
  if (auto text = read_file(dir + "/.gitignore")) gitignore->add_file(rel, *text);
  std::error_code ec;
  std::vector<std::pair<std::string, bool>> names;  // name, is a folder (not followed through a link)
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.emplace_back(it->path().filename().string(), it->is_directory(ec) && !it->is_symlink(ec));
  if (ec) throw Error(dir, "cannot be read for the snapshot: " + ec.message(), k_exclude_fix);
  std::sort(names.begin(), names.end());
  for (const auto& [name, is_dir] : names) {
    const std::string path = rel.empty() ? name : rel + "/" + name;
    if (excludes.ignored(path, is_dir) || gitignore->ignored(path, is_dir)) continue;
    if (is_dir) walk(root, path, excludes, gitignore, out, warnings);
    else if (auto e = entry_for(root, path, warnings)) out->push_back(*e);
  }
}

// Throws the one-line refusal of a snapshot over the settings' limit.
void check_snapshot_size(const SnapshotSource& s, const SnapshotSettings& settings) {
  if (std::string refusal = snapshot_size_refusal(s.entries, settings, s.root); !refusal.empty())
    throw Error("--snapshot", refusal, "leave some out with --snapshot-exclude PATTERN, or raise --snapshot-max-size");
}

}  // namespace

SnapshotSource list_snapshot(const SnapshotSettings& settings, const std::string& cwd, const std::string& job_dir,
                             const CommandRunner& run) {
  SnapshotSource s;
  s.cwd = fs::absolute(cwd).lexically_normal().string();
  if (s.cwd.size() > 1 && s.cwd.back() == '/') s.cwd.pop_back();
  IgnoreRules excludes = snapshot_excludes(settings);
  const std::string abs_job_dir = fs::absolute(job_dir).lexically_normal().string();
  if (!list_git(run, excludes, &s)) {
    s.root = s.cwd;
    if (std::string rel = inside(abs_job_dir, s.root); !rel.empty()) excludes.add_pattern("/" + literal_pattern(rel) + "/");
    IgnoreRules gitignore;
    walk(s.root, "", excludes, &gitignore, &s.entries, &s.warnings);
  } else if (std::string rel = inside(abs_job_dir, s.root); !rel.empty()) {
    std::erase_if(s.entries, [&](const SnapshotEntry& e) { return e.path == rel || e.path.rfind(rel + "/", 0) == 0; });
  }
  check_snapshot_size(s, settings);
  return s;
}

std::string prepared_origin_json(const SnapshotSource& source, const std::string& host) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& e : source.entries) files.push_back(e.path);
  std::string cwd = inside(source.cwd, source.root);
  return nlohmann::json{{"source", host + ":" + source.root}, {"cwd", cwd}, {"git", source.git},
                        {"commit", source.commit}, {"dirty", source.dirty}, {"files", files}}
             .dump() + "\n";
}

SnapshotSource prepared_snapshot(const std::string& dir, const SnapshotSettings& settings) {
  const std::string origin_path = dir + "/origin.json";
  std::optional<std::string> text = read_file(origin_path);
  nlohmann::json o = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
  if (!o.is_object() || !o.contains("files") || !o["files"].is_array())
    throw Error("--snapshot-prepared", origin_path + " is no prepared snapshot's record", "let submit --remote send it");
  SnapshotSource s;
  s.root = fs::absolute(dir + "/tree").lexically_normal().string();
  const std::string cwd = o.value("cwd", "");
  s.cwd = cwd.empty() ? s.root : s.root + "/" + cwd;
  s.git = o.value("git", false);
  s.commit = o.value("commit", "");
  s.dirty = o.value("dirty", false);
  s.origin = o.value("source", "");
  for (const auto& f : o["files"]) {
    const std::string rel = f.is_string() ? f.get<std::string>() : "";
    if (rel.empty() || rel[0] == '/' || fs::path(rel).lexically_normal().string().rfind("..", 0) == 0)
      throw Error("--snapshot-prepared", origin_path + " names a file outside its tree: '" + rel + "'", "let submit --remote send it");
    if (auto e = entry_for(s.root, rel, &s.warnings)) s.entries.push_back(*e);
  }
  check_snapshot_size(s, settings);
  return s;
}

void copy_snapshot(const SnapshotSource& source, const std::string& dest) {
  std::error_code ec;
  fs::create_directories(dest, ec);
  if (ec) throw failure(dest, "cannot create the snapshot: " + ec.message(), "check permissions and free space");
  for (const auto& e : source.entries) {
    const fs::path from = fs::path(source.root) / e.path, to = fs::path(dest) / e.path;
    fs::create_directories(to.parent_path(), ec);
    if (!ec) {
      if (e.symlink) fs::copy_symlink(from, to, ec);
      else if (fs::copy_file(from, to, fs::copy_options::none, ec))
        fs::permissions(to, fs::status(from, ec).permissions(), ec);
    }
    if (ec) throw failure(from.string(), "cannot be copied into the snapshot: " + ec.message(),
                          "check that it is still there and that the job directory has room");
  }
  std::string workdir = snapshot_workdir(dest, source.root, source.cwd);
  fs::create_directories(workdir, ec);  // the submit directory may hold nothing the snapshot keeps
  if (ec) throw failure(workdir, "cannot create the snapshot: " + ec.message(), "check permissions and free space");
}

SnapshotRecord snapshot_record(const SnapshotSource& source, const std::string& dest) {
  SnapshotRecord r;
  r.dir = dest;
  r.source = source.origin.empty() ? source.root : source.origin;
  r.workdir = snapshot_workdir(dest, source.root, source.cwd);
  r.git = source.git;
  r.commit = source.commit;
  r.dirty = source.dirty;
  r.files = static_cast<long long>(source.entries.size());
  for (const auto& e : source.entries) r.bytes += static_cast<long long>(e.bytes);
  return r;
}

}  // namespace hpclaunch
