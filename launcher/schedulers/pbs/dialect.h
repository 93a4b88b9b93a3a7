// PBS Pro / OpenPBS's dialect: #PBS directives (-l walltime,select; NCI's totals), -J and PBS_ARRAY_INDEX,
// 1234[3].server for a task, -W depend=, and the readers of what qsub, qstat -f, qstat -Qf and pbsnodes -av
// answer (all pure; schedulers/pbs/backend.cc runs them).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dialect/cluster.h"
#include "dialect/dialect.h"

namespace hpclaunch {

class PbsDialect final : public SchedulerDialect {
 public:
  Scheduler kind() const override { return Scheduler::pbs; }
  // Arrays (-J) and a survey (qstat -Qf, pbsnodes -av); no requeue from the script, no warning signal, no qsub that
  // checks without queueing.
  SchedulerCapabilities capabilities() const override {
    SchedulerCapabilities c;
    c.arrays = c.survey = true;
    return c;
  }
  std::vector<LaunchMode> launchers() const override {
    return {LaunchMode::agent, LaunchMode::mpirun, LaunchMode::pals};
  }
  std::vector<GpuStyle> gpu_styles() const override { return {GpuStyle::pbs_select, GpuStyle::pbs_totals}; }
  // PALS is a site's own (Cray's), which no survey of the server shows.
  std::vector<LaunchMode> learned_launchers() const override { return {LaunchMode::agent, LaunchMode::mpirun}; }
  QueueKind queue_kind() const override { return QueueKind::queue; }
  // Open MPI's mpirun, which starts the agents here, ends them all when one exits or its node is lost.
  std::string spares_refusal() const override {
    return "PBS's agent launch starts the agents with mpirun, which ends them all when one is lost";
  }
  GpuStyle gpu_style() const override { return GpuStyle::pbs_select; }
  const InJobFace& in_job() const override;  // in_job.cc, with Cray PALS
  std::vector<std::string> presence_command() const override { return {"qstat", "--version"}; }
  MemoryAsk memory_request(const SiteProfile& site, const Queue* queue, int gpus_per_node) const override;
  std::vector<std::string> directives(const BatchRequest& r, const ScriptPlace& place) const override;
  // Its profile block: `chunk_extra`, select resources added to each chunk (Sockeye: "mem=64gb:gpu_mem=32gb"), and
  // `pals_cpu_bind`, PALS's CPU list for the ranks of a node ("list:4-7:8-11:...", Aurora) in place of
  // --depth/--cpu-bind depth, which names a whole node's CPUs (left out on a queue that shares nodes).
  std::vector<SchedulerOptionSpec> profile_options() const override;
  // `pals_cpu_list`: the block's pals_cpu_bind where the plan kept it.
  std::vector<TemplateValue> template_values(const BatchRequest& r, const ScriptPlace&) const override;
  std::vector<std::string> array_options(int count, int max_concurrent) const override;
  std::vector<std::string> dependency_options(const std::vector<Dependency>& after) const override;
  const char* array_index_variable() const override { return "PBS_ARRAY_INDEX"; }
  std::string task_job_id(const std::string& array_id, int task) const override;
  std::optional<std::pair<std::vector<std::string>, int>> split_task_ref(const std::string& ref) const override;
};

// The job id in qsub's answer ("123.server", "123[].server"). Throws Error quoting qsub when it failed.
std::string parse_qsub_answer(const ProcessResult& answer);
// `qstat -f ID` / `qstat -x -f ID` (PBS Pro/OpenPBS/Torque): job_state = Q|R|E|H|W|F|..., Exit_status.
std::optional<JobState> parse_qstat_full(std::string_view out);
// `qstat -x -f -t ID...` of many jobs (and every subjob of the arrays among them): each job's state by its id as
// qstat writes it after `Job Id:` ("123.server", "123[4].server").
std::map<std::string, JobState> parse_qstat_jobs(std::string_view out);
// The part of a PBS job id both qsub and qstat agree on: "123[4].server" -> "123[4]".
std::string pbs_id_key(const std::string& id);
// True if a failed qstat says it has no -x (Torque): a usage complaint, not a server that cannot be asked.
bool pbs_no_history(const ProcessResult& r);
// True if a failed qstat/qdel says the job id is unknown to it (forgotten, or finished without history).
bool pbs_unknown_job(const ProcessResult& r);
// "123.server" -> "123": the number PBS names a job's output file after (NAME.o123).
std::string pbs_numeric_prefix(const std::string& id);

// Unique host names of a PBS_NODEFILE's contents, in order of first appearance.
std::vector<std::string> parse_pbs_nodefile(std::string_view contents);

// One `key = value` line of qstat -f, qstat -Qf or pbsnodes -av; nullopt for any other line.
std::optional<std::pair<std::string, std::string>> pbs_field(std::string_view line);
// `pbsnodes -av`: blocks headed by the node name, `resources_available.ncpus = 64` lines.
std::vector<NodeInfo> parse_pbsnodes(std::string_view out);
// `qstat -Qf`: blocks `Queue: NAME` with `queue_type`, `resources_max.walltime`, `resources_max.nodect`;
// execution queues only.
std::vector<PartitionInfo> parse_qstat_queues(std::string_view out);

}  // namespace hpclaunch
