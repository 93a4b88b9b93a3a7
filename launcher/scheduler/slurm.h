// The Slurm backend: sbatch, squeue, scontrol, scancel, sbatch --test-only. Its answer parsers are pure.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "scheduler/backend.h"

namespace hpclaunch {

class SlurmBackend final : public SchedulerBackend {
 public:
  Scheduler kind() const override { return Scheduler::slurm; }
  std::string submit(const std::string& script, const std::vector<std::string>& options,
                     const CommandRunner& run) const override;
  JobState query(const JobRecord& job, const CommandRunner& run) const override;
  std::vector<JobState> query_tasks(const JobRecord& array, const CommandRunner& run) const override;
  void cancel(const JobRecord& job, const CommandRunner& run) const override;
  std::vector<std::string> output_files(const JobRecord& job) const override;
  std::optional<TestVerdict> test_only(const std::string& script, const std::vector<std::string>& options,
                                      const CommandRunner& run) const override;
  bool has_test_only() const override { return true; }
  std::vector<std::string> array_options(int count, int max_concurrent) const override;
  std::vector<std::string> dependency_options(const std::vector<Dependency>& after) const override;
  void requeue_excluding(const std::string& job_id, const std::vector<std::string>& exclude,
                         const CommandRunner& run) const override;
};

// The job id in `sbatch --parsable`'s answer ("123" or "123;cluster"). Throws Error quoting sbatch when it
// failed or answered no id.
std::string parse_sbatch_answer(const ProcessResult& answer);
// `sbatch --test-only`: "sbatch: Job 12 to start at ... using 4 processors on nodes n1 in partition debug" is
// an acceptance; anything else with a non-zero exit is a refusal in sbatch's words.
TestVerdict parse_sbatch_test_only(const ProcessResult& answer);
// "RUNNING" -> running, "CANCELLED by 0" -> cancelled, ... ; nullopt for a word Slurm does not use.
std::optional<Phase> slurm_phase(std::string_view state);
// `squeue -h -t all -j ID -o %T`: one state word per line (first line counts); nullopt when empty.
std::optional<JobState> parse_squeue(std::string_view out);
// `squeue -h -r -t all -j ARRAY -o '%K %T'`: the state of each task it lists, by task index.
std::map<int, JobState> parse_squeue_tasks(std::string_view out);
// `scontrol show job ID`: JobState=, Reason=, ExitCode=N:S; nullopt when it holds no JobState.
std::optional<JobState> parse_scontrol_job(std::string_view out);
// True if a failed squeue/scontrol/scancel says the job id is unknown to it (forgotten or never there).
bool slurm_unknown_job(const ProcessResult& r);

}  // namespace hpclaunch
