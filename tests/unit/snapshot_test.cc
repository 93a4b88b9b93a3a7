// submit --snapshot: the gitignore matcher (util/ignore_rules.h), sizes (util/byte_size.h), the pure decisions
// (submit/snapshot_rules.h), listing and copying a tree (submit/snapshot.h, in a temporary folder, git faked), and
// submit_request's job that starts in its snapshot.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include <filesystem>

#include "render/render.h"
#include "submit/snapshot.h"
#include "submit/submit_request.h"
#include "test_util.h"
#include "util/byte_size.h"
#include "util/error.h"
#include "util/file.h"
#include "util/ignore_rules.h"

namespace snapshot_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
namespace fs = std::filesystem;

namespace {

struct GlobCase {
  const char* pattern;
  const char* path;
  bool match;
};

// A runner with no git repository anywhere: every git command fails as `git rev-parse` outside one does.
ProcessResult no_git(const std::vector<std::string>&) { return {128, "", "fatal: not a git repository"}; }

void put(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  REQUIRE(write_file_atomic(path.string(), text));
}

// Each of `items` followed by NUL, as git's -z lists end them.
std::string nul_list(std::initializer_list<std::string> items) {
  std::string out;
  for (const auto& i : items) out += i + '\0';
  return out;
}

std::vector<std::string> paths_of(const SnapshotSource& s) {
  std::vector<std::string> out;
  for (const auto& e : s.entries) out.push_back(e.path);
  return out;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A snapshot job of `site` (its example account) from `src`, which gets a train.py, into `job_dir`.
SubmitRequest snapshot_job(const fs::path& src, const std::string& site, const fs::path& job_dir) {
  put(src / "train.py", "print(1)\n");
  SubmitRequest r;
  r.request.site = site;
  r.request.account = test::sites().get(site).account.example;
  r.request.command = {"python", "train.py"};
  r.request.snapshot = true;
  r.job_dir = job_dir.string();
  return r;
}

// Runs `f` with the working directory `dir`, as submit runs in the user's.
template <class F>
auto in_dir(const fs::path& dir, F f) {
  struct Back {
    fs::path old = fs::current_path();
    ~Back() { fs::current_path(old); }
  } back;
  fs::current_path(dir);
  return f();
}

}  // namespace

TEST_SUITE_BEGIN("snapshot");

TEST_CASE("glob_match: *, ?, classes and ** as gitignore reads them") {
  const GlobCase cases[] = {
      {"a", "a", true},          {"a", "b", false},           {"a", "ab", false},         {"*", "abc", true},
      {"*", "", true},           {"*", "a/b", false},         {"*.py", "x.py", true},     {"*.py", "d/x.py", false},
      {"a*c", "abbc", true},     {"a*c", "ab/c", false},      {"?", "a", true},           {"?", "/", false},
      {"?", "", false},          {"a?c", "abc", true},        {"[ab]", "a", true},        {"[ab]", "c", false},
      {"[a-c]x", "bx", true},    {"[a-c]x", "dx", false},     {"[!a-c]", "d", true},      {"[!a-c]", "a", false},
      {"[^a]", "b", true},       {"[]]", "]", true},          {"[", "[", true},           {"[a", "[a", true},
      {"\\*", "*", true},        {"\\*", "a", false},         {"**/x", "x", true},        {"**/x", "a/b/x", true},
      {"**/x", "a/xx", false},   {"a/**", "a/b", true},       {"a/**", "a/b/c", true},    {"a/**", "a", false},
      {"a/**/b", "a/b", true},   {"a/**/b", "a/x/y/b", true}, {"a/**/b", "a/xb", false},  {"**", "a/b", true},
      {"d/*.py", "d/x.py", true}, {"d/*.py", "d/e/x.py", false}, {"*/x", "d/x", true},     {"*/x", "d/e/x", false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.pattern);
    CAPTURE(c.path);
    CHECK(glob_match(c.pattern, c.path) == c.match);
  }
}

TEST_CASE("IgnoreRules: anchoring, folders only, negation, the last match wins, a nested file's base") {
  IgnoreRules r;
  r.add_file("", "# a comment\n\n*.log\n!keep.log\n/build\nout/\ndocs/*.tmp\ntrailing   \n\\#hash\n\\!bang\n");
  r.add_file("sub", "local.txt\n/only-here\n");
  CHECK(r.ignored("x.log", false));
  CHECK(r.ignored("d/e/x.log", false));  // no slash: at any depth
  CHECK_FALSE(r.ignored("keep.log", false));
  CHECK_FALSE(r.ignored("d/keep.log", false));
  CHECK(r.ignored("build", false));
  CHECK(r.ignored("build", true));
  CHECK_FALSE(r.ignored("d/build", true));  // a leading slash anchors it at its file's folder
  CHECK(r.ignored("out", true));
  CHECK(r.ignored("d/out", true));
  CHECK_FALSE(r.ignored("out", false));  // a trailing slash: folders only
  CHECK(r.ignored("docs/a.tmp", false));
  CHECK_FALSE(r.ignored("x/docs/a.tmp", false));  // an inner slash anchors too
  CHECK(r.ignored("trailing", false));            // trailing spaces dropped
  CHECK(r.ignored("#hash", false));
  CHECK(r.ignored("!bang", false));
  CHECK(r.ignored("sub/local.txt", false));
  CHECK(r.ignored("sub/deep/local.txt", false));
  CHECK_FALSE(r.ignored("local.txt", false));  // sub's rules hold under sub only
  CHECK(r.ignored("sub/only-here", false));
  CHECK_FALSE(r.ignored("sub/deep/only-here", false));
  CHECK_FALSE(r.ignored("readme.md", false));
  CHECK(r.ignored_with_parents("out/deep/file.py"));  // inside a left-out folder
  CHECK_FALSE(r.ignored_with_parents("src/file.py"));
  CHECK(IgnoreRules().empty());
}

TEST_CASE("IgnoreRules: a later pattern takes back an earlier one, and the other way round") {
  IgnoreRules r;
  r.add_pattern("*.ckpt");
  r.add_pattern("!best.ckpt");
  CHECK(r.ignored("a.ckpt", false));
  CHECK_FALSE(r.ignored("best.ckpt", false));
  r.add_pattern("best.ckpt");
  CHECK(r.ignored("best.ckpt", false));
}

TEST_CASE("parse_byte_size and format_bytes") {
  CHECK(parse_byte_size("4096") == 4096u);
  CHECK(parse_byte_size("1K") == 1024u);
  CHECK(parse_byte_size("256M") == (256u << 20));
  CHECK(parse_byte_size("256MiB") == (256u << 20));
  CHECK(parse_byte_size("2gb") == (std::uint64_t{2} << 30));
  CHECK(parse_byte_size("1.5G") == (std::uint64_t{3} << 29));
  CHECK(parse_byte_size(" 10 M ") == (10u << 20));
  CHECK(parse_byte_size("1T") == (std::uint64_t{1} << 40));
  for (const char* bad : {"", "M", "12X", "1..2M", "1MM", "-1", "1Mx", "."}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_byte_size(bad).has_value());
  }
  CHECK(format_bytes(0) == "0 B");
  CHECK(format_bytes(1023) == "1023 B");
  CHECK(format_bytes(1536) == "1.5 KiB");
  CHECK(format_bytes(256u << 20) == "256 MiB");
  CHECK(format_bytes(std::uint64_t{3} << 30) == "3.0 GiB");
}

TEST_CASE("snapshot_settings: the request over the profile; excludes from both; a bad size names its flag") {
  SiteProfile site;
  site.name = "s";
  JobRequest req;
  CHECK_FALSE(snapshot_settings(req, site).on);
  site.snapshot = true;
  site.snapshot_exclude = {"*.ckpt"};
  site.snapshot_max_size = "1G";
  SnapshotSettings s = snapshot_settings(req, site);
  CHECK(s.on);
  CHECK(s.max_bytes == (std::uint64_t{1} << 30));
  CHECK(s.max_origin == "site s's snapshot_max_size");
  req.snapshot = false;
  req.snapshot_exclude = {"data/"};
  req.snapshot_max_size = "10M";
  s = snapshot_settings(req, site);
  CHECK_FALSE(s.on);
  CHECK(s.exclude == std::vector<std::string>{"*.ckpt", "data/"});
  CHECK(s.max_bytes == (10u << 20));
  CHECK(s.max_origin == "--snapshot-max-size");
  CHECK(snapshot_settings(JobRequest{}, SiteProfile{}).max_bytes == k_default_snapshot_max_bytes);
  req.snapshot_max_size = "lots";
  CHECK(error_of([&] { snapshot_settings(req, site); }).find("--snapshot-max-size: 'lots' is not a size") != std::string::npos);
}

TEST_CASE("snapshot_size_refusal names the size, the limit and the largest top-level entries") {
  SnapshotSettings s;
  s.max_bytes = 1000;
  std::vector<SnapshotEntry> small = {{"a.py", 10}, {"link", 0, true}};
  CHECK(snapshot_size_refusal(small, s, "/src") == "");
  std::vector<SnapshotEntry> big = {{"data/a.bin", 600}, {"data/b.bin", 600}, {"model.pt", 300}, {"x.py", 5}, {"y.py", 1}};
  CHECK(snapshot_size_refusal(big, s, "/src") ==
        "the snapshot of /src would be 1.5 KiB in 5 files, over the limit of 1000 B; largest: data/ (1.2 KiB), "
        "model.pt (300 B), x.py (5 B)");
  s.max_origin = "--snapshot-max-size";
  CHECK(snapshot_size_refusal(big, s, "/src").find("limit of 1000 B, --snapshot-max-size;") != std::string::npos);
}

TEST_CASE("porcelain_dirty: a change the snapshot keeps is dirty; an untracked job folder is not") {
  IgnoreRules ex = snapshot_excludes(SnapshotSettings{});
  CHECK_FALSE(porcelain_dirty("", ex));
  CHECK_FALSE(porcelain_dirty(nul_list({"?? hpclaunch-jobs/"}), ex));
  CHECK(porcelain_dirty(nul_list({" M train.py"}), ex));
  CHECK(porcelain_dirty(nul_list({"?? hpclaunch-jobs/", "?? new.py"}), ex));
  CHECK(porcelain_dirty(nul_list({"R  new.py", "old.py"}), ex));
  SnapshotSettings s;
  s.exclude = {"data/"};
  CHECK_FALSE(porcelain_dirty(nul_list({"?? data/"}), snapshot_excludes(s)));
  CHECK(split_nul(nul_list({"a", "b c", ""})) == std::vector<std::string>{"a", "b c"});
}

TEST_CASE("snapshot_workdir: the submit directory's place in the copy") {
  CHECK(snapshot_workdir("/j/snapshot", "/repo", "/repo") == "/j/snapshot");
  CHECK(snapshot_workdir("/j/snapshot", "/repo", "/repo/src/exp") == "/j/snapshot/src/exp");
  CHECK(snapshot_workdir("/j/snapshot", "/repo/", "/repo/src/") == "/j/snapshot/src");
  CHECK(snapshot_workdir("/j/snapshot", "/repo", "/elsewhere") == "/j/snapshot");
}

TEST_CASE("outside git: every file but what .gitignore files, the excludes and job folders name; copied with modes and links") {
  test::TempState t("snapshot-walk");
  const fs::path src = t.base / "src";
  put(src / "train.py", "print(1)\n");
  put(src / "run.sh", "#!/bin/sh\n");
  fs::permissions(src / "run.sh", fs::perms(0755));
  put(src / ".gitignore", "*.log\n/cache/\n");
  put(src / "a.log", "x");
  put(src / "cache/c.bin", "x");
  put(src / "lib/util.py", "x");
  put(src / "lib/.gitignore", "gen.py\n");
  put(src / "lib/gen.py", "x");
  put(src / "data/big.bin", "x");
  put(src / "hpclaunch-jobs/old/job.sh", "x");
  put(src / "myjobs/j1/job.sh", "x");
  put(src / ".git/config", "x");
  fs::create_symlink("train.py", src / "link.py");
  SnapshotSettings settings;
  settings.on = true;
  settings.exclude = {"data/"};
  SnapshotSource s = list_snapshot(settings, (src / "lib").string(), (src / "myjobs/j1").string(), no_git);
  CHECK(paths_of(s) == std::vector<std::string>{".gitignore", "util.py"});  // outside git: the submit directory
  s = list_snapshot(settings, src.string(), (src / "myjobs/j1").string(), no_git);
  CHECK_FALSE(s.git);
  CHECK(s.commit.empty());
  CHECK(s.root == src.string());
  CHECK(paths_of(s) == std::vector<std::string>{".gitignore", "lib/.gitignore", "lib/util.py", "link.py", "run.sh", "train.py"});
  const fs::path dest = t.base / "job/snapshot";
  copy_snapshot(s, dest.string());
  CHECK(read_file((dest / "train.py").string()) == "print(1)\n");
  CHECK((fs::status(dest / "run.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK(fs::is_symlink(dest / "link.py"));
  CHECK(fs::read_symlink(dest / "link.py") == "train.py");
  CHECK_FALSE(fs::exists(dest / "a.log"));
  SnapshotRecord r = snapshot_record(s, dest.string());
  CHECK(r.files == 6);
  CHECK(r.workdir == dest.string());
  CHECK(describe_snapshot(r).rfind("not a git work tree; 6 files (", 0) == 0);
  settings.max_bytes = 5;
  CHECK(error_of([&] { list_snapshot(settings, src.string(), (t.base / "job").string(), no_git); })
            .find("--snapshot: the snapshot of " + src.string() + " would be") != std::string::npos);
}

TEST_CASE("a prepared snapshot (submit --remote's, taken on the laptop): its record and files as they were sent") {
  test::TempState t("snapshot-prepared");
  const fs::path laptop = t.base / "laptop";
  put(laptop / "train.py", "print(1)\n");
  put(laptop / "sub/run.sh", "x");
  SnapshotSettings settings;
  settings.on = true;
  SnapshotSource taken = list_snapshot(settings, (laptop / "sub").string(), (t.base / "stage").string(), no_git);
  // What the laptop sends: origin.json and the files, here put where the far side unpacks them (tree/).
  const fs::path far = t.base / "call";
  put(far / "origin.json", prepared_origin_json(taken, "laptop1"));
  put(far / "tree/run.sh", "x");
  SnapshotSource s = prepared_snapshot(far.string(), settings);
  CHECK(s.root == (far / "tree").string());
  CHECK(s.cwd == s.root);  // outside git the snapshot is the submit directory's, and the job starts at its top
  CHECK(paths_of(s) == std::vector<std::string>{"run.sh"});
  CHECK(s.origin == "laptop1:" + (laptop / "sub").string());
  const fs::path dest = t.base / "job/snapshot";
  copy_snapshot(s, dest.string());
  CHECK(read_file((dest / "run.sh").string()) == "x");
  SnapshotRecord r = snapshot_record(s, dest.string());
  CHECK(r.source == "laptop1:" + (laptop / "sub").string());
  CHECK(r.files == 1);
  // A git tree's commit, dirtiness and start folder come with it.
  SnapshotSource git = taken;
  git.git = true;
  git.commit = "0123abcd";
  git.dirty = true;
  git.root = laptop.string();
  git.cwd = (laptop / "sub").string();
  git.entries = {{"sub/run.sh", 1, false}};
  put(far / "origin.json", prepared_origin_json(git, "laptop1"));
  put(far / "tree/sub/run.sh", "x");
  s = prepared_snapshot(far.string(), settings);
  CHECK(s.git);
  CHECK(s.commit == "0123abcd");
  CHECK(s.dirty);
  CHECK(s.cwd == (far / "tree/sub").string());
  CHECK(snapshot_record(s, dest.string()).workdir == (dest / "sub").string());
  // A record naming a file outside its tree, or none at all, is refused naming the folder.
  put(far / "origin.json", R"({"files": ["../../etc/passwd"]})");
  CHECK(error_of([&] { prepared_snapshot(far.string(), settings); }).find("names a file outside its tree") != std::string::npos);
  CHECK(error_of([&] { prepared_snapshot((t.base / "nothing").string(), settings); })
            .find("is no prepared snapshot's record") != std::string::npos);
  settings.max_bytes = 0;
  put(far / "origin.json", prepared_origin_json(git, "laptop1"));
  CHECK(error_of([&] { prepared_snapshot(far.string(), settings); }).rfind("--snapshot: ", 0) == 0);
}

TEST_CASE("in a git tree: git's list of files, its commit, and whether the tree differs") {
  test::TempState t("snapshot-git");
  const fs::path repo = t.base / "repo";
  put(repo / "train.py", "x");
  put(repo / "src/model.py", "xy");
  put(repo / "data/d.bin", "xyz");
  std::vector<std::vector<std::string>> asked;
  auto git = [&](const std::vector<std::string>& argv) -> ProcessResult {
    asked.push_back(argv);
    if (argv[3] == "rev-parse" && argv[4] == "--show-toplevel") return {0, repo.string() + "\n", ""};
    if (argv[3] == "ls-files")  // deleted.py: tracked, deleted in the work tree
      return {0, nul_list({"data/d.bin", "deleted.py", "src/model.py", "src/model.py", "train.py"}), ""};
    if (argv[3] == "rev-parse") return {0, "0123456789abcdef0123456789abcdef01234567\n", ""};
    return {0, nul_list({" M train.py"}), ""};  // status
  };
  SnapshotSettings settings;
  settings.exclude = {"data/"};
  SnapshotSource s = list_snapshot(settings, (repo / "src").string(), (t.base / "job").string(), git);
  CHECK(s.git);
  CHECK(s.root == repo.string());
  CHECK(s.commit == "0123456789abcdef0123456789abcdef01234567");
  CHECK(s.dirty);
  CHECK(paths_of(s) == std::vector<std::string>{"src/model.py", "train.py"});
  REQUIRE(asked.size() == 4);
  CHECK(asked[1] == std::vector<std::string>{"git", "-C", repo.string(), "ls-files", "-z", "--cached", "--others",
                                             "--exclude-standard"});
  SnapshotRecord r = snapshot_record(s, "/j/snapshot");
  CHECK(r.workdir == "/j/snapshot/src");
  CHECK(r.bytes == 3);
  CHECK(describe_snapshot(r) == "commit 0123456789ab with uncommitted changes; 2 files (3 B) from " + repo.string() +
                                    ", run in /j/snapshot/src");
}

TEST_CASE("submit_request with a snapshot: the job starts in it, job.json records it, a refusal leaves nothing") {
  test::TempState t("snapshot-submit");
  const fs::path src = t.base / "src";
  SubmitRequest r = snapshot_job(src, "perlmutter", t.base / "job");
  auto run = [&](const std::vector<std::string>& argv) -> ProcessResult {
    if (argv[0] == "git") return no_git(argv);
    return {0, "4242\n", ""};
  };
  Submission s = in_dir(src, [&] { return submit_request(r, run); });
  CHECK(s.script.find("#SBATCH --chdir=" + r.job_dir + "/snapshot\n") != std::string::npos);
  CHECK(read_file(r.job_dir + "/snapshot/train.py") == "print(1)\n");
  REQUIRE(s.record.snapshot.has_value());
  CHECK(s.record.snapshot->workdir == r.job_dir + "/snapshot");
  CHECK(s.record.snapshot->source == src.string());
  CHECK(read_job_record(r.job_dir).snapshot->files == 1);

  r.job_dir = (t.base / "job2").string();
  r.request.snapshot_max_size = "4";
  CHECK(error_of([&] { in_dir(src, [&] { return submit_request(r, run); }); }).find("over the limit of 4 B") != std::string::npos);
  CHECK_FALSE(fs::exists(r.job_dir));
  r.request.snapshot_max_size.clear();
  auto refuse = [&](const std::vector<std::string>& argv) -> ProcessResult {
    if (argv[0] == "git") return no_git(argv);
    return {1, "", "sbatch: error: Batch job submission failed: Invalid account"};
  };
  CHECK_FALSE(error_of([&] { in_dir(src, [&] { return submit_request(r, refuse); }); }).empty());
  CHECK_FALSE(fs::exists(r.job_dir));
  r.request.snapshot = false;  // the profile's default: none
  r.dry_run = true;
  CHECK(in_dir(src, [&] { return submit_request(r, run); }).script.find("#SBATCH --chdir=" + src.string() + "\n") !=
        std::string::npos);
}

TEST_CASE("an array on a site without arrays (Gadi): one snapshot in the array's directory, every task's job in it") {
  test::TempState t("snapshot-per-task");
  const fs::path src = t.base / "src";
  SubmitRequest r = snapshot_job(src, "gadi", t.base / "job");
  r.request.array.count = 2;
  int submitted = 0;
  auto run = [&](const std::vector<std::string>& argv) -> ProcessResult {
    if (argv[0] == "git") return no_git(argv);
    return {0, std::to_string(1001 + submitted++) + ".gadi-pbs\n", ""};
  };
  Submission s = in_dir(src, [&] { return submit_request(r, run); });
  REQUIRE(s.per_task);
  CHECK(s.task_job_ids.size() == 2);
  CHECK(read_file(r.job_dir + "/snapshot/train.py") == "print(1)\n");
  CHECK_FALSE(fs::exists(r.job_dir + "/tasks/0/snapshot"));
  CHECK(read_file(r.job_dir + "/tasks/1/job.sh")->find("\ncd " + r.job_dir + "/snapshot || exit 1\n") != std::string::npos);
  REQUIRE(read_job_record(r.job_dir).snapshot.has_value());
  CHECK(read_job_record(r.job_dir).snapshot->dir == r.job_dir + "/snapshot");
}

TEST_CASE("every scheduler's script starts a snapshot job in its copy (PBS too, instead of $PBS_O_WORKDIR)") {
  RenderContext ctx{"/opt/hpclaunch", "/j/snapshot/exp", "/j", {}};
  ctx.snapshot = true;
  const std::vector<std::pair<std::string, std::string>> starts = {{"perlmutter", "#SBATCH --chdir=/j/snapshot/exp\n"},
                                                                   {"sockeye-pbs", "\ncd /j/snapshot/exp || exit 1\n"},
                                                                   {"local", "\ncd /j/snapshot/exp || exit 1\n"},
                                                                   {"el-capitan", "# flux: --cwd=/j/snapshot/exp\n"}};
  for (const auto& entry : starts) {
    const std::string& site = entry.first;  // not a structured binding: CAPTURE's lambda takes it (clang)
    const std::string& start = entry.second;
    CAPTURE(site);
    JobRequest r;
    r.site = site;
    r.command = {"python", "train.py"};
    const SiteProfile& p = test::sites().get(site);
    if (p.account.required) r.account = p.account.example;
    std::string script = render_script(make_plan(r, p), ctx);
    CHECK(script.find(start) != std::string::npos);
    CHECK(script.find("PBS_O_WORKDIR") == std::string::npos);
  }
  ctx.snapshot = false;
  JobRequest r;
  r.site = "sockeye-pbs";
  r.command = {"python", "train.py"};
  r.account = test::sites().get("sockeye-pbs").account.example;
  CHECK(render_script(make_plan(r, test::sites().get("sockeye-pbs")), ctx).find("\ncd \"$PBS_O_WORKDIR\" || exit 1\n") !=
        std::string::npos);
}

TEST_SUITE_END();

}  // namespace snapshot_test
