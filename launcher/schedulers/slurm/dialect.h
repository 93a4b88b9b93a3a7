// Slurm's dialect: #SBATCH directives, --array and SLURM_ARRAY_TASK_ID, 1234_3 for a task, --dependency=, and
// the readers of what sbatch, squeue, sacct, scontrol and sacctmgr answer (all pure; schedulers/slurm/backend.cc runs them).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dialect/cluster.h"
#include "dialect/dialect.h"

namespace hpclaunch {

// Slurm's name for a task of an array, "1234_3", and such a name read back (the array "1234", task 3; nullopt for
// any other word): shared with the local site, which names its tasks as Slurm does.
std::string slurm_task_job_id(const std::string& array_id, int task);
std::optional<std::pair<std::vector<std::string>, int>> split_slurm_task_ref(const std::string& ref);

class SlurmDialect final : public SchedulerDialect {
 public:
  Scheduler kind() const override { return Scheduler::slurm; }
  // Arrays (--array), scontrol requeue (after ExcNodeList= to leave nodes out), sbatch --signal, sbatch --test-only,
  // and scontrol/sacctmgr to survey.
  SchedulerCapabilities capabilities() const override { return {true, true, true, true, true, true}; }
  std::vector<LaunchMode> launchers() const override { return {LaunchMode::agent, LaunchMode::srun, LaunchMode::mpirun}; }
  std::vector<GpuStyle> gpu_styles() const override { return {GpuStyle::gpus_per_node, GpuStyle::gres}; }
  GpuStyle gpu_style() const override { return GpuStyle::gres; }  // a learned profile names the GRES's type
  const InJobFace& in_job() const override;  // in_job.cc
  std::vector<std::string> presence_command() const override { return {"scontrol", "--version"}; }
  long warning_early_s() const override { return 60; }  // sbatch(1), --signal
  std::string topology_option_refusal(std::string_view option, std::string_view version) const override;
  std::vector<std::string> directives(const BatchRequest& r, const ScriptPlace& place) const override;
  // Its profile block: `rank_options`, the srun options each rank gets beside the geometry (LUMI: --cpu-bind=
  // mask_cpu:..., Frontier: --gpus-per-task=1 --gpu-bind=closest), and `whole_node_rank_options`, those that name a
  // whole node's CPUs (left out on a queue that shares nodes); only for the srun launcher, whose tasks are the ranks.
  std::vector<SchedulerOptionSpec> profile_options() const override;
  // `rank_options`: the block's rank options, and its whole-node ones where the plan kept them.
  std::vector<TemplateValue> template_values(const BatchRequest& r, const ScriptPlace&) const override;
  std::vector<std::string> array_options(int count, int max_concurrent) const override;
  std::vector<std::string> dependency_options(const std::vector<Dependency>& after) const override;
  const char* array_index_variable() const override { return "SLURM_ARRAY_TASK_ID"; }
  std::vector<std::string> default_account_command(const std::string& user) const override;
  std::string parse_default_account(std::string_view out) const override;
  std::vector<std::string> accounts_command(const std::string& user) const override;  // sacctmgr show assoc
  MemoryAsk memory_request(const SiteProfile& site, const Queue* queue, int gpus_per_node) const override;
  std::string task_job_id(const std::string& array_id, int task) const override { return slurm_task_job_id(array_id, task); }
  std::optional<std::pair<std::vector<std::string>, int>> split_task_ref(const std::string& ref) const override {
    return split_slurm_task_ref(ref);
  }
};

// The first Slurm release whose sbatch takes a block-topology option, as "24.05"; "" for an option it does not know.
std::string slurm_option_since(std::string_view option);

// The job id in `sbatch --parsable`'s answer ("123" or "123;cluster"). Throws Error quoting sbatch when it
// failed or answered no id.
std::string parse_sbatch_answer(const ProcessResult& answer);
// `sbatch --test-only`: "sbatch: Job 12 to start at ... using 4 processors on nodes n1 in partition debug" is
// an acceptance; anything else with a non-zero exit is a refusal in sbatch's words.
TestVerdict parse_sbatch_test_only(const ProcessResult& answer);
// "RUNNING" -> running, "CANCELLED by 0" -> cancelled, ... ; nullopt for a word Slurm does not use.
std::optional<Phase> slurm_phase(std::string_view state);
// `squeue -h -r -t all -j ID,ID,... -O JobArrayID,State,Reason,exit_code`: every job and array task (one a line,
// pending ones too) of the ids that slurmctld still holds, in one call; ids it has forgotten are left out.
std::vector<std::string> squeue_jobs_command(const std::vector<std::string>& ids);
// Its answer: each listed job's state with reason and exit code, by its id ("123", or "123_4" for a task).
std::map<std::string, JobState> parse_squeue_jobs(std::string_view out);
// `sacct -n -P -X -j ID,ID,... -o JobID,State,ExitCode`: what accounting remembers of jobs squeue has forgotten
// (MinJobAge), in one call.
std::vector<std::string> sacct_jobs_command(const std::vector<std::string>& ids);
// Its answer ("123|COMPLETED|0:0", "123_4|CANCELLED by 0|0:15"): each job's state by its id.
std::map<std::string, JobState> parse_sacct_jobs(std::string_view out);
// `sacct -n -P -j ID,ID,... -o JobID,Elapsed,MaxRSS,ConsumedEnergyRaw,State`: each job's allocation and its
// steps (123, 123.batch, 123.0, ...; an array task's 123_4, 123_4.batch), in one call.
std::vector<std::string> sacct_usage_command(const std::vector<std::string>& ids);
// Its answer, by job id (the part before a step's '.'): the allocation's elapsed time, the largest MaxRSS of its
// steps (and which step), its energy when measured (ConsumedEnergyRaw above 0: the allocation's, else the steps'
// sum), its number of steps; a note when steps still run (sacct has their MaxRSS only once they end) or the job has
// not started (no items then: its 00:00:00 is no elapsed time). Lines of other forms are left out.
std::map<std::string, JobUsage> parse_sacct_usage(std::string_view out);
// sacct's MaxRSS ("1234K", "56M", "1.50G", "0"; no suffix: bytes) in bytes; nullopt when empty or not a size.
std::optional<double> sacct_size(std::string_view text);
// True if a failed squeue/scontrol/scancel says the job id is unknown to it (forgotten or never there).
bool slurm_unknown_job(const ProcessResult& r);

// `scontrol show ...` output: its KEY=VALUE words, where a value may itself hold spaces (OS=Linux 6.1 #1 SMP: a
// word without a KEY= start continues the previous value). The first of a key counts.
std::map<std::string, std::string> scontrol_fields(std::string_view text);
// `scontrol show partition -o`: one partition per line.
std::vector<PartitionInfo> parse_scontrol_partitions(std::string_view out);
// `scontrol show topology` under topology/block ("BlockName=b1 BlockIndex=0 Nodes=n[1-2] BlockSize=2", one a
// line; Slurm 24.05+): the blocks. A tree topology's switches, or no topology, give none.
std::vector<BlockInfo> parse_scontrol_topology(std::string_view out);
// `sinfo --version` ("slurm-wlm 24.11.5", "slurm 22.05.8"): the release, "" for anything else.
std::string parse_slurm_version(std::string_view out);
// `scontrol show node -o`: one node per line.
std::vector<NodeInfo> parse_scontrol_nodes(std::string_view out);
// `sacctmgr -n -P show assoc user=U format=Account,QOS`: "acct|qos1,qos2" lines -> accounts and QOS, sorted.
void parse_sacctmgr_assoc(std::string_view out, std::vector<std::string>* accounts, std::vector<std::string>* qos);

}  // namespace hpclaunch
