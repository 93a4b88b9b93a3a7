// Flux's dialect (flux-core, LLNL: El Capitan, Tuolumne, RZAdams): `# flux:` directives for flux batch (a slot per
// node: -N, -n, -c, -g), no job arrays (a site says `arrays: false`: a job per task), --dependency=afterok:ID, f58
// job ids ("fA1b2C3"), and the readers of what flux batch and flux jobs answer (all pure; schedulers/flux/backend.cc
// runs them). Facts and their sources: schedulers/flux/README.md.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dialect/dialect.h"

namespace hpclaunch {

class FluxDialect final : public SchedulerDialect {
 public:
  Scheduler kind() const override { return Scheduler::flux; }
  // None of the record's: no arrays (a job per task), no requeue or warning signal from hpclaunch, no check without
  // queueing, no survey (README.md).
  SchedulerCapabilities capabilities() const override { return {}; }
  std::vector<LaunchMode> launchers() const override { return {LaunchMode::agent, LaunchMode::flux}; }
  std::vector<GpuStyle> gpu_styles() const override { return {GpuStyle::gpus_per_slot}; }
  QueueKind queue_kind() const override { return QueueKind::queue; }  // flux batch -q/--queue
  GpuStyle gpu_style() const override { return GpuStyle::gpus_per_slot; }
  const InJobFace& in_job() const override;  // in_job.cc
  // Flux runs as a job inside a Slurm allocation (`srun flux start`), and then its face is asked first.
  std::vector<std::string> nests_in() const override { return {"slurm"}; }
  // Inside a Slurm allocation (a site whose profile allows `flux`): `srun flux start` makes a Flux instance of the
  // job's nodes, one broker per node, and `flux run` starts the ranks in it (flux-start(1), "Slurm").
  std::vector<LaunchMode> hosted_launchers() const override { return {LaunchMode::flux}; }
  HostedLaunch hosted_launch(const BatchRequest& r, const SchedulerDialect& host) const override;
  // The agents are the tasks of one `flux run`, which ends the others 30 s after one exits (flux-shell-options(7),
  // exit-timeout): the agents that are left could not wait for a spare.
  std::string spares_refusal() const override {
    return "Flux's agent launch is one flux run, which ends every agent 30 s after one exits (exit-timeout)";
  }
  // Answers only where a Flux instance does (flux-getattr(1): `rank` is every broker's attribute).
  std::vector<std::string> presence_command() const override { return {"flux", "getattr", "rank"}; }
  std::vector<std::string> directives(const BatchRequest& r, const ScriptPlace& place) const override;
  // flux run's sizes: `agent_cores` (an agent's task: its node's workers' cores), and `node_gpu_options` and
  // `task_gpu_options` (` -g N`, ` -g 1`; none on a job without GPUs, whose tasks then see none).
  std::vector<TemplateValue> template_values(const BatchRequest& r, const ScriptPlace&) const override;
  // flux batch has no arrays (flux submit --cc is not for batch jobs): none, and directives() refuses an array.
  std::vector<std::string> array_options(int, int) const override { return {}; }
  std::vector<std::string> dependency_options(const std::vector<Dependency>& after) const override;
  const char* array_index_variable() const override { return nullptr; }
  // A task of a job per task is named as Slurm's (JOB_I: f58 ids hold no '_').
  std::string task_job_id(const std::string& array_id, int task) const override;
  std::optional<std::pair<std::vector<std::string>, int>> split_task_ref(const std::string& ref) const override;
};

// A Flux job id as hpclaunch keeps it: the f58 form with the ASCII prefix ("ƒ2bcW" and "f2bcW" -> "f2bcW"), which
// every flux command reads as the same id; nullopt for a word that is no f58 id.
std::optional<std::string> flux_plain_id(std::string_view word);
// The job id in flux batch's answer (its f58 id, one line). Throws Error quoting flux batch when it refused.
std::string parse_flux_batch_answer(const ProcessResult& answer);
// `flux jobs -a -n -o FORMAT ID...`: one batched query of many jobs, in any state.
std::vector<std::string> flux_jobs_command(const std::vector<std::string>& ids);
// Its answer, a line per job it knows: each job's state by its plain f58 id.
std::map<std::string, JobState> parse_flux_jobs(std::string_view out);
// True if a failed flux jobs/cancel/job kill said only that job ids are unknown or inactive (forgotten or ended).
bool flux_unknown_job(const ProcessResult& r);

}  // namespace hpclaunch
