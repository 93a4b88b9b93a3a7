#include "dialect/dialect.h"

#include <fmt/core.h>

#include <algorithm>

#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

std::string SchedulerDialect::template_path() const {
  std::string name = to_string(kind());
  return "launcher/schedulers/" + name + "/" + name + ".sh.mustache";
}

MemoryAsk SchedulerDialect::memory_request(const SiteProfile&, const Queue*, int) const { return {}; }

std::optional<std::pair<std::vector<std::string>, int>> SchedulerDialect::split_task_ref(const std::string&) const {
  return std::nullopt;
}

std::vector<std::string> SchedulerDialect::default_account_command(const std::string&) const { return {}; }

std::string SchedulerDialect::parse_default_account(std::string_view) const { return {}; }

namespace {

// Every scheduler's dialect, by id: the scheduler folders', then the registered ones (register_dialect).
std::vector<const SchedulerDialect*>& dialects() {
  static std::vector<const SchedulerDialect*> known = {
#define HPCLAUNCH_SCHEDULER(name, dialect, backend) &dialect(),
#include "hpclaunch_schedulers.def"
#undef HPCLAUNCH_SCHEDULER
  };
  return known;
}

}  // namespace

const SchedulerDialect& dialect_for(Scheduler scheduler) {
  auto i = static_cast<size_t>(scheduler);
  if (i >= dialects().size())  // an id is only made by the registry, which gives each a dialect
    throw Error("scheduler", "id " + std::to_string(i) + " has no dialect", "register it with register_scheduler");
  return *dialects()[i];
}

bool SchedulerDialect::nests_in_any() const {
  const std::vector<std::string> outer = nests_in();
  return std::find(outer.begin(), outer.end(), "*") != outer.end();
}

namespace {

// How many schedulers `d` nests in, through those it nests in (0: none, outermost); `seen` breaks a cycle.
int nesting_depth(const SchedulerDialect* d, std::vector<const SchedulerDialect*>& seen) {
  if (std::find(seen.begin(), seen.end(), d) != seen.end()) return 0;
  seen.push_back(d);
  const std::vector<std::string> outer = d->nests_in();
  const bool any = d->nests_in_any();
  int depth = 0;
  for (const SchedulerDialect* o : dialects()) {
    if (o == d) continue;
    bool named = std::find(outer.begin(), outer.end(), to_string(o->kind())) != outer.end();
    if (named || (any && !o->nests_in_any()))
      depth = std::max(depth, 1 + nesting_depth(o, seen));
  }
  seen.pop_back();
  return depth;
}

}  // namespace

std::vector<const SchedulerDialect*> all_dialects() {
  std::vector<std::pair<int, const SchedulerDialect*>> ranked;
  for (const SchedulerDialect* d : dialects()) {
    std::vector<const SchedulerDialect*> seen;
    ranked.emplace_back(nesting_depth(d, seen), d);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first > b.first;
    return std::string_view(to_string(a.second->kind())) < std::string_view(to_string(b.second->kind()));
  });
  std::vector<const SchedulerDialect*> out;
  for (const auto& [depth, d] : ranked) out.push_back(d);
  return out;
}

Scheduler register_dialect(const std::string& name, const SchedulerDialect& dialect) {
  Scheduler id = add_scheduler_name(name);
  dialects().push_back(&dialect);
  return id;
}

bool SchedulerDialect::offers(LaunchMode mode) const {
  const std::vector<LaunchMode> mine = launchers();
  return std::find(mine.begin(), mine.end(), mode) != mine.end() || guest_for(mode) != nullptr;
}

const SchedulerDialect* SchedulerDialect::guest_for(LaunchMode mode) const {
  const std::string me = to_string(kind());
  for (const SchedulerDialect* d : all_dialects()) {
    if (d == this) continue;
    const std::vector<std::string> hosts = d->nests_in();
    const std::vector<LaunchMode> brought = d->hosted_launchers();
    if (std::find(hosts.begin(), hosts.end(), me) != hosts.end() &&
        std::find(brought.begin(), brought.end(), mode) != brought.end())
      return d;
  }
  return nullptr;
}

bool SchedulerDialect::writes(GpuStyle style) const {
  const std::vector<GpuStyle> mine = gpu_styles();
  return style == GpuStyle::none || std::find(mine.begin(), mine.end(), style) != mine.end();
}

std::string launcher_needs(LaunchMode mode) {
  std::vector<std::string> starters;
  for (const SchedulerDialect* d : all_dialects())
    if (d->offers(mode)) starters.push_back(to_string(d->kind()));
  return std::string(to_string(mode)) + (starters.empty() ? " is started by no scheduler" : " needs " + join_or(starters));
}

std::string launcher_refusal(Scheduler scheduler, LaunchMode mode) {
  return dialect_for(scheduler).offers(mode) ? "" : launcher_needs(mode);
}

std::string gpu_style_refusal(Scheduler scheduler, GpuStyle style) {
  const SchedulerDialect& dialect = dialect_for(scheduler);
  if (dialect.writes(style)) return "";
  std::vector<std::string> takes;
  for (GpuStyle s : dialect.gpu_styles()) takes.push_back(to_string(s));
  takes.push_back(to_string(GpuStyle::none));
  return fmt::format("{} writes no {} request (it writes {})", to_string(scheduler), to_string(style), join_or(takes));
}

std::vector<std::string> capability_names(const SchedulerCapabilities& c) {
  static const std::pair<const char*, bool SchedulerCapabilities::*> k_names[] = {
      {"arrays", &SchedulerCapabilities::arrays},          {"requeue", &SchedulerCapabilities::requeue},
      {"exclude-nodes", &SchedulerCapabilities::exclude_nodes}, {"warning-signal", &SchedulerCapabilities::warning_signal},
      {"test-only", &SchedulerCapabilities::test_only},    {"survey", &SchedulerCapabilities::survey}};
  std::vector<std::string> out;
  for (const auto& [name, member] : k_names)
    if (c.*member) out.push_back(name);
  return out;
}

SchedulerCapabilities capabilities_of(const SiteProfile& site) {
  SchedulerCapabilities c = dialect_for(site.scheduler).capabilities();
  c.arrays = c.arrays && site.arrays;
  return c;
}

std::string schedulers_with(bool SchedulerCapabilities::*capability) {
  std::vector<std::string> names;
  for (const SchedulerDialect* d : all_dialects())
    if (d->capabilities().*capability) names.push_back(to_string(d->kind()));
  return names.empty() ? "no scheduler" : join_or(names);
}

// A profile may narrow its scheduler's capabilities, not widen them: `arrays: true` where the scheduler has none.
std::string arrays_refusal(Scheduler scheduler) {
  if (dialect_for(scheduler).capabilities().arrays) return "";
  return fmt::format("{} has no job arrays (those that have: {})", to_string(scheduler),
                     schedulers_with(&SchedulerCapabilities::arrays));
}

std::vector<SchedulerOptionSpec> profile_options_of(Scheduler scheduler) { return dialect_for(scheduler).profile_options(); }

SchedulerChecks scheduler_checks() { return {launcher_refusal, gpu_style_refusal, arrays_refusal, profile_options_of}; }

Dependency parse_dependency(const std::string& text) {
  Dependency d;
  size_t colon = text.rfind(':');
  std::string kind = colon == std::string::npos ? "ok" : text.substr(colon + 1);
  d.job_id = colon == std::string::npos ? text : text.substr(0, colon);
  static const std::pair<const char*, DependencyKind> k_kinds[] = {
      {"ok", DependencyKind::ok}, {"any", DependencyKind::any}, {"notok", DependencyKind::notok}};
  bool known = false;
  for (const auto& [word, k] : k_kinds)
    if (kind == word) d.kind = k, known = true;
  if (!known || d.job_id.empty())
    throw Error("--after", "'" + text + "' is not JOB[:ok|any|notok]",
                "e.g. --after 1234 (start once 1234 succeeded), --after 1234:any, --after 1234:notok");
  return d;
}

std::string to_string(const Dependency& d) {
  const char* word = d.kind == DependencyKind::ok ? "afterok" : d.kind == DependencyKind::any ? "afterany" : "afternotok";
  return std::string(word) + ":" + d.job_id;
}

std::string dependency_list(const std::vector<Dependency>& after) {
  std::vector<std::string> groups;
  for (DependencyKind kind : {DependencyKind::ok, DependencyKind::any, DependencyKind::notok}) {
    std::string group;
    for (const auto& d : after)
      if (d.kind == kind) group += group.empty() ? to_string(d) : ":" + d.job_id;
    if (!group.empty()) groups.push_back(group);
  }
  return join(groups, ",");
}

int field_int(const Fields& f, const std::string& key, int fallback) {
  auto it = f.find(key);
  long long v = 0;
  return it != f.end() && parse_int(it->second, &v) ? static_cast<int>(v) : fallback;
}

std::string field_text(const Fields& f, const std::string& key) {
  auto it = f.find(key);
  return it == f.end() ? std::string() : it->second;
}

std::string first_line(const ProcessResult& r) {
  std::string text(trim(r.err.empty() ? r.out : r.err));
  size_t nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

void command_failed(const std::vector<std::string>& argv, const ProcessResult& r, const std::string& fix) {
  std::string what = r.exit_code == 127 ? "not found on this machine" : "failed (exit " + std::to_string(r.exit_code) + ")";
  std::string msg = first_line(r);
  throw failure(join(argv, " "), what + (msg.empty() ? "" : ": " + msg), fix);
}

void throw_if_refused(const char* tool, const ProcessResult& answer) {
  if (answer.exit_code == 127)
    throw failure(tool, "not found on this machine (" + std::string(trim(answer.err)) + ")",
                  "run hpclaunch on the cluster's login node, or use --dry-run to only render");
  if (answer.exit_code != 0) {
    std::string msg(trim(answer.err.empty() ? answer.out : answer.err));
    size_t nl = msg.find('\n');
    if (nl != std::string::npos) msg = msg.substr(0, nl) + " ...";
    throw failure(tool, "refused the job (exit " + std::to_string(answer.exit_code) + "): " + msg,
                  "fix what the scheduler names; nothing was submitted");
  }
}

std::string SchedulerDialect::topology_option_refusal(std::string_view option, std::string_view) const {
  return fmt::format("{} is Slurm's (block topology); {} has no such option", option, to_string(kind()));
}

}  // namespace hpclaunch
