#include "schedulers/flux/dialect.h"

#include <fmt/core.h>

#include <algorithm>
#include <regex>

#include "schedulers/slurm/dialect.h"
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

namespace {

// "ƒ" (U+0192) in UTF-8: the f58 prefix Flux prints in a UTF-8 locale, "f" in any other (or with
// FLUX_F58_FORCE_ASCII); flux reads both (flux-core src/common/libutil/fluid.c).
constexpr std::string_view k_f58_utf8 = "\xc6\x92";

// flux jobs' format: the plain f58 id, the state (before the job is inactive) or its result (after: flux-jobs(1)
// `status`), the exit code (`returncode`; -N for a shell killed by signal N) and why it ended.
constexpr const char* k_flux_jobs_format = "{id.f58plain}|{status}|{returncode}|{inactive_reason}";

// A duration as flux batch's -t takes it (RFC 23 FSD: a number and s, m, h or d): whole minutes where it can.
std::string flux_duration(long seconds) {
  return seconds % 60 == 0 ? fmt::format("{}m", seconds / 60) : fmt::format("{}s", seconds);
}

}  // namespace

std::vector<TemplateValue> FluxDialect::template_values(const BatchRequest& r, const ScriptPlace&) const {
  std::vector<TemplateValue> out = {{"agent_cores", std::to_string(r.workers_per_node * r.threads_per_worker)}};
  if (r.gpus_per_node > 0) {
    out.push_back({"node_gpu_options", " -g " + std::to_string(r.gpus_per_node)});
    out.push_back({"task_gpu_options", " -g 1"});
  }
  return out;
}

SchedulerDialect::HostedLaunch FluxDialect::hosted_launch(const BatchRequest& r, const SchedulerDialect&) const {
  HostedLaunch out;
  out.notes = {
      "Flux in this Slurm allocation: `srun flux start` runs one Flux broker on each of the job's nodes (the instance",
      "is the allocation; flux-start(1)); its initial program, `flux run`, starts one task per worker, each a rank that",
      "`hpclaunch exec` reads from FLUX_TASK_RANK. -l prefixes each line with the rank; -o exit-on-error ends the",
      "step when one rank fails."};
  std::string gpus = r.gpus_per_node > 0 ? " -g 1" : "";
  out.prefix = fmt::format(
      "srun --nodes={} --ntasks={} --ntasks-per-node=1 --cpus-per-task={} flux start \\\n"
      "  flux run -N {} -n {} -c {}{} -l -o exit-on-error \"$HPCLAUNCH\" exec --",
      r.nodes, r.nodes, r.cpus_per_node, r.nodes, r.ntasks, r.threads_per_worker, gpus);
  return out;
}

std::vector<std::string> FluxDialect::directives(const BatchRequest& p, const ScriptPlace& place) const {
  if (place.array)
    throw Error("--array", fmt::format("flux batch has no job arrays, and {}'s profile does not say `arrays: false`",
                                       p.site.name),
                fmt::format("add `arrays: false` to {}'s profile, so that submit sends each task as a job of its own",
                            p.site.name));
  // One slot per node, each the node's cores (flux batch's -c counts cores, not hardware threads) and GPUs: the
  // batch job's `flux run` lines then place their tasks in these slots (flux-batch(1), "Batch job options").
  const int threads = std::max(1, p.site.node.threads_per_core);
  std::vector<std::string> d = {
      fmt::format("-N {}", p.nodes),
      fmt::format("-n {}", p.nodes),
      fmt::format("-c {}", std::max(1, p.cpus_per_node / threads)),
  };
  if (p.gpus_per_node > 0 && p.site.gpu.style == GpuStyle::gpus_per_slot) d.push_back(fmt::format("-g {}", p.gpus_per_node));
  if (!p.partition.empty()) d.push_back("--queue=" + p.partition);
  if (!p.account.empty()) d.push_back("--setattr=system.bank=" + p.account);  // = -B/--bank (flux-batch(1))
  if (p.time_s > 0) d.push_back("-t " + flux_duration(p.time_s));
  d.push_back("--job-name=" + p.job_name);
  d.push_back("--cwd=" + place.workdir);
  // stderr goes to the same file when --error is not given (flux-batch(1), --output).
  d.push_back("--output=" + place.job_dir + "/output.log");
  for (const auto& x : p.directives) d.push_back(x);
  if (!p.container_image.empty())
    for (const auto& x : p.site.container.directives) d.push_back(replace_all(x, "{image}", p.container_image));
  return d;
}

// One --dependency per job (flux-batch(1) takes it more than once; all must be met): afterok, afterany and
// afternotok are Flux's words as they are Slurm's (flux-core doc/man1/common/job-dependencies.rst).
std::vector<std::string> FluxDialect::dependency_options(const std::vector<Dependency>& after) const {
  std::vector<std::string> out;
  for (const auto& d : after) out.push_back("--dependency=" + to_string(d));
  return out;
}

std::string FluxDialect::task_job_id(const std::string& array_id, int task) const {
  return slurm_task_job_id(array_id, task);
}

std::optional<std::pair<std::vector<std::string>, int>> FluxDialect::split_task_ref(const std::string& ref) const {
  return split_slurm_task_ref(ref);
}

std::optional<std::string> flux_plain_id(std::string_view word) {
  static const std::regex k_f58("[1-9A-HJ-NP-Za-km-z]{1,11}");
  std::string_view digits;
  if (word.starts_with(k_f58_utf8)) digits = word.substr(k_f58_utf8.size());
  else if (word.starts_with("f")) digits = word.substr(1);
  else return std::nullopt;
  if (!std::regex_match(digits.begin(), digits.end(), k_f58)) return std::nullopt;
  return "f" + std::string(digits);
}

std::string parse_flux_batch_answer(const ProcessResult& answer) {
  throw_if_refused("flux batch", answer);
  std::string out(trim(answer.out));
  if (auto id = flux_plain_id(out)) return *id;
  throw failure("flux batch", "answered '" + out + "', which holds no job id", "check the scheduler with `flux jobs -a`");
}

std::vector<std::string> flux_jobs_command(const std::vector<std::string>& ids) {
  std::vector<std::string> argv = {"flux", "jobs", "-a", "-n", "-o", k_flux_jobs_format};
  argv.insert(argv.end(), ids.begin(), ids.end());
  return argv;
}

namespace {

// flux-jobs(1) STATES and RESULTS: DEPEND, PRIORITY, SCHED wait; RUN, CLEANUP run; an inactive job's result is
// COMPLETED, FAILED, CANCELED or TIMEOUT.
std::optional<JobState> flux_state(const std::string& status, const std::string& code, const std::string& reason) {
  JobState s;
  s.raw = status;
  long long rc = 0;
  const bool has_code = parse_int(code, &rc);
  if (status == "DEPEND" || status == "PRIORITY" || status == "SCHED") {
    s.phase = Phase::pending;
    if (status == "DEPEND") s.reason = "Dependency";
  } else if (status == "RUN" || status == "CLEANUP") {
    s.phase = Phase::running;
  } else if (status == "COMPLETED" || status == "FAILED" || status == "CANCELED" || status == "TIMEOUT") {
    s.phase = status == "COMPLETED" ? Phase::completed
              : status == "FAILED"  ? Phase::failed
              : status == "CANCELED" ? Phase::cancelled
                                     : Phase::timeout;
    if (has_code) s.exit_code = static_cast<int>(rc);
    // "Exit 3" says no more than the exit code; an exception or a signal says why.
    if (!reason.empty() && reason != "Exit " + code && status != "COMPLETED") s.reason = reason;
  } else {
    return std::nullopt;
  }
  return s;
}

}  // namespace

std::map<std::string, JobState> parse_flux_jobs(std::string_view out) {
  std::map<std::string, JobState> jobs;
  for (const auto& line : split(out, '\n')) {
    auto fields = split(line, '|');
    if (fields.size() < 3) continue;
    auto id = flux_plain_id(trim(fields[0]));
    if (!id) continue;
    std::string reason;  // the rest of the line: a reason may hold '|'
    for (size_t i = 3; i < fields.size(); ++i) reason += (i > 3 ? "|" : "") + fields[i];
    if (auto s = flux_state(std::string(trim(fields[1])), std::string(trim(fields[2])), std::string(trim(reason))))
      jobs[*id] = *s;
  }
  return jobs;
}

bool flux_unknown_job(const ProcessResult& r) {
  if (r.exit_code == 0 || r.exit_code == 127) return false;
  std::string text = r.err + r.out;
  if (text.empty()) return false;
  for (const auto& line : split(text, '\n')) {
    if (trim(line).empty()) continue;
    // flux-jobs: "JobID ƒX unknown"; flux-cancel: "ƒX: job is inactive", "unknown job id"; flux-job kill: "kill ƒX:
    // job is not running".
    if (line.find("unknown") == std::string::npos && line.find("job is inactive") == std::string::npos &&
        line.find("job is not running") == std::string::npos)
      return false;
  }
  return true;
}

const SchedulerDialect& flux_dialect() {
  static const FluxDialect dialect;
  return dialect;
}

}  // namespace hpclaunch
