#include <fmt/core.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/json_output.h"
#include "cli/sites_survey.h"
#include "dialect/dialect.h"
#include "site/profile_yaml.h"
#include "survey/site_check.h"
#include "survey/site_learn.h"
#include "util/error.h"
#include "util/file.h"
#include "util/command.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

std::string current_user() {
  if (const char* u = std::getenv("USER"); u && *u) return u;
  if (const passwd* pw = ::getpwuid(::getuid())) return pw->pw_name;
  return "root";
}

// The scheduler on this machine, for `learn`: the first whose commands are here, innermost first (a Flux that
// runs in Slurm allocations before the Slurm).
Scheduler local_scheduler() {
  std::vector<std::string> tried;
  for (const SchedulerDialect* d : all_dialects()) {
    std::vector<std::string> probe = d->presence_command();
    if (probe.empty()) continue;
    if (run_capture(probe).exit_code == 0) return d->kind();
    tried.push_back(join(probe, " "));
  }
  throw failure("sites learn", "no scheduler's commands run here (tried: " + join(tried, "; ") + ")",
                "run it on the cluster's login node, where the scheduler's commands are");
}

std::string today() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

}  // namespace

int sites_check(const SiteRegistry& sites, const std::string& name, bool json) {
  const SiteProfile& profile = sites.get(name, "sites check");
  ClusterInfo cluster = survey_cluster(profile.scheduler, current_user(), run_capture);
  std::vector<CheckRow> rows = check_profile(profile, cluster);
  if (json) {
    fmt::print("{}\n", check_json(profile.name, rows).dump());
  } else {
    fmt::print("{}", format_check(rows));
    fmt::print(stderr, "hpclaunch: {} against {} ({}): {}\n", profile.name, to_string(cluster.scheduler),
               join(cluster.commands, "; "),
               has_fatal(rows) ? "mismatches that would fail or misplace a job (FAIL rows)" : "no mismatch that fails a job");
  }
  return has_fatal(rows) ? k_exit_failure : 0;
}

int sites_learn(const std::string& name, const std::string& output) {
  Scheduler scheduler = local_scheduler();
  ClusterInfo cluster = survey_cluster(scheduler, current_user(), run_capture);
  std::vector<std::string> notes;
  SiteProfile profile = learn_profile(name, cluster, today(), &notes);
  std::string text = "# Learned by `hpclaunch sites learn " + name + "` from the scheduler; check it with `hpclaunch sites check " +
                     name + " --site-file FILE`.\n" + profile_to_yaml(profile);
  for (const auto& n : notes) fmt::print(stderr, "hpclaunch: note: {}\n", n);
  if (output.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  std::error_code ec;
  if (std::filesystem::exists(output, ec))
    throw Error("--output", "'" + output + "' exists", "give a new file name, or remove it first");
  if (write_file_atomic(output, text)) {
    fmt::print(stderr, "hpclaunch: wrote {}; use it with --site-file {} --site {}\n", output, output, name);
    return 0;
  }
  throw failure(output, "cannot write the profile", "check the directory and its permissions");
}

}  // namespace hpclaunch
