// What a job directory says about its job, and which job a JOB argument names. The files a job directory holds
// each have one struct, written and read through nlohmann-json by the same code: job.json (SubmissionFile,
// written once the scheduler accepted the job), state.json (LocalStateFile, the local runner's) and plan.json
// (PlanFile, the resolved LaunchPlan as submit writes it; JobRecord takes the few fields `jobs`, `logs` and `plot`
// need).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "site/profile.h"

namespace hpclaunch {

// A scheduler in job.json and plan.json: its name in the registry (site/schedulers.h); a name it does not know is
// refused (Error naming the field). A launcher: its name in the registry (site/launchers.h); a word not there reads as agent.
void to_json(nlohmann::json& j, Scheduler s);
void from_json(const nlohmann::json& j, Scheduler& s);
void to_json(nlohmann::json& j, LaunchMode m);
void from_json(const nlohmann::json& j, LaunchMode& m);

// job.json's "snapshot" (submit --snapshot): what was copied into the job directory, from where, and at which
// commit; the job starts in `workdir`, and every run of it (a requeue, an agent's restart) there.
struct SnapshotRecord {
  std::string dir;      // JOBDIR/snapshot
  std::string source;   // the folder copied: a git work tree's top, else the submit directory
  std::string workdir;  // where the job starts: the submit directory's place in the copy
  bool git = false;     // `source` is a git work tree: its tracked files and untracked, not ignored ones
  std::string commit;   // its HEAD ("" outside git, or before the first commit)
  bool dirty = false;   // the copy differs from `commit` (uncommitted changes, untracked files)
  long long files = 0;  // files and symbolic links copied
  long long bytes = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SnapshotRecord, dir, source, workdir, git, commit, dirty, files, bytes)
// One line for `status` and the report: "commit 1a2b3c4d5e6f with uncommitted changes, 12 files (3.4 KiB) from
// /src, run in /job/snapshot/src" ("of /src (not a git work tree)" outside git).
std::string describe_snapshot(const SnapshotRecord& s);

// JOBDIR/job.json.
struct SubmissionFile {
  std::string job_id;        // "1234", "56.pbshost", "local-1732189200-4242"
  Scheduler scheduler = Scheduler::slurm;
  std::string site;
  std::string job_dir;
  std::string submitted_at;  // "20261121-104500"
  int nodes = 0;
  std::vector<std::string> after;  // what it waits for: "afterok:123", ...
  // An array on a site that takes no job arrays (the profile's `arrays: false`): each task was submitted as a job
  // of its own (JOBDIR/tasks/I, its own job.json); their ids in task order, job_id the first.
  std::vector<std::string> task_job_ids;
  // submit --snapshot: the copy of the code the job runs (absent from job.json without one).
  std::optional<SnapshotRecord> snapshot;
};
void to_json(nlohmann::json& j, const SubmissionFile& f);
void from_json(const nlohmann::json& j, SubmissionFile& f);

// JOBDIR/state.json of a job run by the local site: {"pid", "state": "running"} while it runs, then
// {"pid", "state": "exited", "exit_code"}; "runner" for a job that requeues (between two runs its script's pid is
// gone: `status` reads the job as running while its runner lives, and `cancel` stops the runner).
struct LocalStateFile {
  long long pid = 0;
  std::string state;  // "running" | "exited"
  std::optional<int> exit_code;
  long long runner = 0;  // the runner's pid; 0: not recorded
};
void to_json(nlohmann::json& j, const LocalStateFile& s);
void from_json(const nlohmann::json& j, LocalStateFile& s);

// plan.json's "array" of an array job (plan/sweep.h).
struct ArraySummary {
  int tasks = 0;
  int max_concurrent = 0;
  std::string mode;  // "array", "product", "zip"
  std::vector<std::string> keys;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ArraySummary, tasks, max_concurrent, mode, keys)

// JOBDIR/plan.json: the resolved plan (plan/plan.h's LaunchPlan) as submit writes it (plan_file in
// submit/submit_job.h); `array` only for an array job.
struct PlanEnvEntry {
  std::string name, value;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PlanEnvEntry, name, value)
// plan.json's fields that the plan (plan/plan.h's LaunchPlan) holds under the same name, each once as (type,
// name): PlanFields declares them, its JSON reads and writes them and plan_file copies them, so keeping a new plan
// field in plan.json is one line here.
#define HPCLAUNCH_PLAN_SAME_FIELDS(X)                                                                       \
  X(int, nodes) X(int, gpus_per_node) X(int, workers_per_node) X(int, ntasks) X(int, ntasks_per_node)         \
  X(int, cpus_per_task) X(int, cpus_per_node) X(int, threads_per_worker) X(std::string, job_name)             \
  X(std::string, account) X(std::string, partition) X(std::string, qos) X(std::string, constraint)            \
  X(std::string, memory) X(std::vector<std::string>, modules) X(std::string, warning_signal)                 \
  X(int, warning_seconds) X(bool, requeue) X(int, max_requeues) X(bool, preflight)                             \
  X(std::vector<std::string>, warnings)

struct PlanFields {
  // Named or shaped otherwise than in the plan (plan_file fills them).
  std::string site, site_file;
  Scheduler scheduler = Scheduler::slurm;
  LaunchMode launcher = LaunchMode::srun;
  int world_size = 0;
  long time_seconds = 0;
  std::string time;  // time_seconds as sbatch writes it
  std::string container;
  std::vector<PlanEnvEntry> env;
  std::vector<std::string> command;  // as typed
#define HPCLAUNCH_PLAN_MEMBER(type, name) type name{};
  HPCLAUNCH_PLAN_SAME_FIELDS(HPCLAUNCH_PLAN_MEMBER)
#undef HPCLAUNCH_PLAN_MEMBER
};
void to_json(nlohmann::json& j, const PlanFields& p);
void from_json(const nlohmann::json& j, PlanFields& p);
struct PlanFile : PlanFields {
  ArraySummary array;  // tasks 0: a single job, and no "array" in the file
};
void to_json(nlohmann::json& j, const PlanFile& p);
void from_json(const nlohmann::json& j, PlanFile& p);

// JOBDIR/tasks/I/task.json of an array job, written by submit: the task's values, command and environment.
struct SweepValue {
  std::string key, value;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SweepValue, key, value)
struct TaskFile {
  int task = 0;
  std::vector<SweepValue> values;
  std::vector<std::string> command;  // as the task runs it (placeholders filled in)
  std::vector<SweepValue> env;       // HPCLAUNCH_SWEEP_* of the task
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TaskFile, task, values, command, env)

// JOBDIR/excluded-nodes.json: the nodes a job leaves out of its next runs (`submit --preflight --requeue`), each
// with why and the run (SLURM_RESTART_COUNT) that found it. `hpclaunch exclude` adds to it; `status` shows it.
struct ExcludedNode {
  std::string node;
  std::string reason;
  int run = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExcludedNode, node, reason, run)
struct ExcludedNodesFile {
  std::vector<ExcludedNode> nodes;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(ExcludedNodesFile, nodes)

// JOBDIR/preflight.json, the preflight's report (`hpclaunch check`; written by trainer/probe_report.h's probe_json):
// its verdict, each node's probe and problems, the allreduce sweep's bandwidth (job-wide: every node takes part), and
// where nodes are in NVLink domains, each domain's and each rail's across them.
struct PreflightNode {
  std::string node;
  std::vector<int> ranks;
  int gpus = 0;
  double probe_seconds = 0;  // the slowest of its ranks on the same local workload
  std::vector<std::string> problems;  // empty: healthy
  std::string domain;  // its NVLink domain; "" none
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PreflightNode, node, ranks, gpus, probe_seconds, problems, domain)
struct PreflightSize {
  long long bytes = 0;
  double seconds = 0, algbw_gbs = 0, busbw_gbs = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PreflightSize, bytes, seconds, algbw_gbs, busbw_gbs)
// A group's allreduce: inside one NVLink domain (named by it) or across domains ("rail K": the K-th rank of each).
struct PreflightGroup {
  std::string name;
  std::vector<std::string> nodes;
  std::vector<int> ranks;
  long long bytes = 0;
  double seconds = 0, algbw_gbs = 0, busbw_gbs = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PreflightGroup, name, nodes, ranks, bytes, seconds, algbw_gbs, busbw_gbs)
struct PreflightReport {
  std::string backend;
  int world_size = 0;
  int expected_gpus = 0;
  bool ok = false;
  std::vector<PreflightSize> allreduce;
  std::vector<PreflightNode> nodes;
  std::vector<std::string> bad_nodes;
  double expected_busbw_gbs = 0;
  std::string busbw_shortfall;  // "" when fine or nothing was expected
  double expected_nvlink_busbw_gbs = 0;
  std::vector<PreflightGroup> nvlink_domains, across_domains;  // empty without NVLink domains
  std::vector<std::string> domain_shortfalls;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(PreflightReport, backend, world_size, expected_gpus, ok, allreduce,
                                                nodes, bad_nodes, expected_busbw_gbs, busbw_shortfall,
                                                expected_nvlink_busbw_gbs, nvlink_domains, across_domains,
                                                domain_shortfalls)
// The report in `text`. Throws Error naming `where` when the text is not such a report (a JSON object whose
// bad_nodes is a list of names).
PreflightReport parse_preflight(const std::string& text, const std::string& where);
// The bad nodes of a preflight report, each with its problems as the reason (parse_preflight's errors).
std::vector<ExcludedNode> bad_nodes_of_preflight(const std::string& text, const std::string& where, int run);
// `known` followed by the nodes of `found` it does not name yet (a node keeps its first reason).
std::vector<ExcludedNode> merge_excluded(std::vector<ExcludedNode> known, const std::vector<ExcludedNode>& found);
// JOBDIR/excluded-nodes.json; empty when the file is not there. Throws Error naming the file when it is not JSON.
ExcludedNodesFile read_excluded_nodes(const std::string& job_dir);
void write_excluded_nodes(const std::string& job_dir, const ExcludedNodesFile& file);

struct JobRecord {
  std::string dir;              // absolute job directory
  bool dir_exists = true;       // false: listed in the index but removed since
  bool submitted = false;       // job.json present (the scheduler accepted the job)
  std::string job_id;
  Scheduler scheduler = Scheduler::slurm;
  std::string site;
  std::string submitted_at;
  int nodes = 0;
  std::string job_name;         // plan.json's job_name (PBS names its output file after it)
  std::vector<std::string> command;  // plan.json's command, as typed
  std::vector<std::string> after;    // job.json's dependencies: "afterok:123", ...
  std::vector<ExcludedNode> excluded;  // excluded-nodes.json's nodes
  // The agents' words (agent/failure.h writes both): failure.json's summary, the root cause of a failed run; and
  // each hang found, restarted or not (stacks/attempt_N/hang-HOST.json), in attempt order.
  std::string failure;
  std::vector<std::string> hangs;
  // nodes.json (a job with --spares): the spares waiting now, and each place a spare took, oldest first.
  std::vector<std::string> spares;
  std::vector<std::string> replaced;
  int max_requeues = 0;              // plan.json's, 0 without --requeue: how often the local runner runs it again
  // An array job: its task count and plan.json's limit. One task of it (task_record) has `task` set, `dir` its run
  // directory JOBDIR/tasks/I, `job_id` the scheduler's name for the task, and its own values and command.
  int array_tasks = 0;
  int array_max_concurrent = 0;
  std::optional<int> task;
  std::string array_dir;             // the array's job directory, for a task
  std::string array_job_id;          // the array's job id, for a task
  std::vector<SweepValue> values;    // a task's values
  // An array whose tasks are jobs of their own (job.json's task_job_ids; a task of it keeps them): each task's id.
  std::vector<std::string> task_job_ids;
  std::optional<SnapshotRecord> snapshot;  // job.json's: the code the job runs (submit --snapshot)
  bool is_array() const { return array_tasks > 0 && !task; }
  bool per_task() const { return !task_job_ids.empty(); }
  // The id the scheduler lists this job under: a task of a real array job its array's, any other job its own.
  const std::string& listed_id() const { return task && !per_task() ? array_job_id : job_id; }
  // The jobs the scheduler holds for this one: an array whose tasks are jobs of their own, each task's id; any
  // other, `job_id` (what cancel names) or listed_id() (what a query asks for).
  std::vector<std::string> scheduler_jobs() const {
    return is_array() && per_task() ? task_job_ids : std::vector<std::string>{job_id};
  }
  std::vector<std::string> listed_ids() const {
    return is_array() && per_task() ? task_job_ids : std::vector<std::string>{listed_id()};
  }
};

// DIR/plan.json, or nullopt when there is none; throws Error naming the file when it is not a plan.
std::optional<PlanFile> read_plan_file(const std::string& dir);

// Reads DIR/job.json and DIR/plan.json. A vanished directory gives dir_exists = false, not an error; a file
// that is there but not what it should be throws Error naming it.
JobRecord read_job_record(const std::string& dir);

// The job `ref` names: an existing directory, or a job id (or directory) listed in `index`; one task of an array
// as JOB_I or JOB[I] (Slurm's and PBS's forms, JOB any of the above). Throws Error naming `ref` with the fix
// when it is none of these.
JobRecord resolve_job(const std::string& ref, const std::vector<std::string>& index);

// The scheduler's name for task `task` of the array `array_id`: Slurm 1234_3, PBS 1234[3].server, local ID_3.
std::string task_job_id(Scheduler scheduler, const std::string& array_id, int task);

// Task `task` of the array job `array` (its task.json read when there). Throws Error naming the array when it is
// not one, or has no such task.
JobRecord task_record(const JobRecord& array, int task);

// "lr=0.001 bs=64", or "task 3" for a task without values.
std::string task_label(const JobRecord& task);

}  // namespace hpclaunch
