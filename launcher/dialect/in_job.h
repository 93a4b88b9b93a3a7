// What a scheduler says inside one of its jobs, read from a given environment (pure, as submitit's JobEnvironment):
// whether this is its job, the job's and its array's ids, the nodes, this node's rank, the restart count, the GPUs
// given, the first node's address, whether its launch step signals the workers itself, and what it cannot do.
// One face per scheduler beside its dialect (schedulers/NAME/in_job.cc; PBS's with Cray PALS),
// reached as SchedulerDialect::in_job(); the MPI launchers that run under any of them (Open MPI, MPICH/PMI) are in
// mpi_in_job.h. The runtime (ranks, rendezvous, GPU binding), the agent, `exclude`, `check` and `sites learn` ask
// them: nothing else reads a scheduler's variables.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/environment.h"
#include "util/error.h"

namespace hpclaunch {

class SchedulerDialect;  // dialect/dialect.h

// Reads a whole file (PBS_NODEFILE); an effect, injected so tests need no files.
using FileReader = std::function<std::string(const std::string& path)>;
// Runs a command and returns what it printed (Flux's `flux hostlist local`); throws Error naming the command when it
// cannot be run or fails. An effect, injected as FileReader is.
using CommandReader = std::function<std::string(const std::vector<std::string>& argv)>;

// Where a task's numbers came from: a scheduler's launch step (srun), an MPI launcher (Open MPI, PMI, Cray PALS:
// one that may put every rank on one host), a scheduler's batch script (its one task), a runner that runs inside
// anything and names its own job (local-srun), or no launcher at all (`shell`: a world of one, the default, which a
// face's own launcher must never leave).
enum class RankKind { step, mpi, batch, runner, shell };
// The source itself: its kind, and its name as `hpclaunch env` prints it ("slurm", "open-mpi", "pals"), which each
// face gives its own.
struct RankSource {
  RankKind kind = RankKind::shell;
  std::string name = "shell";
  bool operator==(const RankSource&) const = default;
};

// One task's numbers, as its launcher gave them.
struct TaskRanks {
  RankSource source;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  int node_rank = 0;  // GROUP_RANK; -1 when the launcher does not say and it cannot be derived
  int num_nodes = 1;  // GROUP_WORLD_SIZE; -1 likewise
  std::string job_id;  // the scheduler's or launcher's job id; empty if none
  std::string note;    // why the numbers are what they are, when that is not obvious (world of one)
};

// A task of an array job: the array's id and this task's index.
struct JobArrayTask {
  std::string array_id;
  int index = 0;
};

class InJobFace {
 public:
  virtual ~InJobFace() = default;
  virtual const char* name() const = 0;  // "slurm", "pbs", "local": JobEnvironment's source
  // Whether this process runs inside one of its jobs (its batch script, or a task started within).
  virtual bool inside(const Env& env) const = 0;
  // Its id of the job ("" when it names none); the array's id and this task's index, outside an array nullopt.
  virtual std::string job_id(const Env& env) const = 0;
  virtual std::optional<JobArrayTask> array_task(const Env& env) const = 0;
  // The job's nodes in order (the first runs the batch script); empty when the environment names none. Throws Error
  // naming the variable when the list is malformed or its file cannot be read.
  virtual std::vector<std::string> job_nodes(const Env& env, const FileReader& read_file) const = 0;
  // The nodes of this launch (a Slurm step's), else job_nodes.
  virtual std::vector<std::string> step_nodes(const Env& env, const FileReader& read_file) const;
  // For a scheduler that names its job's nodes in no variable (Flux: `flux hostlist local`): the command that prints
  // them, and its output read (pure; by default hostlists, `node[1-3] gpu7`, as words). Empty (every built-in face):
  // job_nodes reads the environment. The runtime runs the command (job_nodes_of below), so the face stays pure.
  virtual std::vector<std::string> node_list_command(const Env&) const { return {}; }
  virtual std::vector<std::string> parse_node_list(std::string_view out) const;
  // How many nodes the job has and which of them this is, when the scheduler says (a task per node); nullopt when
  // only the launcher knows (mpirun under PBS: the MPI ranks tell).
  virtual std::optional<int> node_count(const Env& env) const = 0;
  virtual std::optional<int> node_rank(const Env& env) const = 0;
  virtual std::string node_name(const Env& env) const = 0;  // "" when it names none
  // How often the job was requeued and started again (0 on its first run, and where the scheduler does not say).
  virtual int restart_count(const Env&) const { return 0; }
  // The node's GPU ids as the scheduler gave them ("0,1,2,3"), nullopt when it names none (CUDA_VISIBLE_DEVICES,
  // read before any face, is the launcher's or the cgroup's).
  virtual std::optional<std::string> gpu_list(const Env& env) const = 0;
  // How many GPUs this node was given: the scheduler's count, else its list's, else CUDA_VISIBLE_DEVICES's.
  virtual std::optional<int> gpu_count(const Env& env) const;
  // True when the scheduler gave each task its own GPUs already, so --gpu-bind local-rank must not index its list.
  virtual bool gpus_bound_per_task(const Env&) const { return false; }
  // Whether the launch step passes a signal to every process of the step itself (srun), so that the agent must
  // not pass it on to its workers a second time.
  virtual bool step_signals_workers(const Env&) const { return false; }
  // The address every node reaches node 0 on when no profile rule applies (the local site: 127.0.0.1, its node
  // names do not resolve); nullopt: the rule's host from the node list.
  virtual std::optional<std::string> default_master_addr(const Env&) const { return std::nullopt; }
  // This task's numbers from the scheduler's own launcher (srun, Cray PALS, local-srun); nullopt when it was not
  // started by one. Throws Error (naming the variables) when they are present but inconsistent.
  virtual std::optional<TaskRanks> launcher_ranks(const Env&) const { return std::nullopt; }
  // The batch script itself, no launcher: a world of one if the job has one task slot, an Error (start it under
  // the launcher) if it has more.
  virtual TaskRanks batch_ranks(const Env& env, const FileReader& read_file) const = 0;
};

// The job's nodes as `face` gives them: by its node_list_command, run through `run`, where it names one (an Error
// when no runner is given), else by job_nodes; `step` asks step_nodes instead, which falls back to the command's
// nodes when the environment names none.
std::vector<std::string> job_nodes_of(const InJobFace& face, const Env& env, const FileReader& read_file,
                                      const CommandReader& run, bool step = false);

// The face of the job this process runs in: the local runner's (innermost: local-srun may run inside a batch
// job), then each built-in scheduler's; nullptr outside any job.
const InJobFace* job_face(const Env& env);
// The dialect whose face that is (for what its scheduler can do: SchedulerDialect::capabilities); nullptr outside.
const SchedulerDialect* job_dialect(const Env& env);

// The job's place in names of hpclaunch's own, the same on every scheduler, for what runs in it (the Python package
// reads only these): HPCLAUNCH_JOB_ID, HPCLAUNCH_ARRAY_JOB_ID and HPCLAUNCH_ARRAY_TASK_ID (a task of an array job),
// HPCLAUNCH_NODE_RANK and HPCLAUNCH_NODENAME, each where the job's face (or `node_rank`, the launcher's count) says;
// none outside a job. `hpclaunch exec` and the agent export them into every rank.
std::vector<std::pair<std::string, std::string>> neutral_job_vars(const Env& env, std::optional<int> node_rank = {});

// How many ids a CUDA_VISIBLE_DEVICES-like list names ("0,1,3" -> 3, "" -> 0, "NoDevFiles" -> 0).
int count_device_list(const std::string& list);

// A variable as a whole number, else nullopt (unset, or not a number: SLURM_GPUS_PER_NODE may be "a100:4"); the
// agent's lenient reading of counts the scheduler may spell otherwise.
std::optional<int> lenient_count(const Env& env, std::string_view name);

// The checks the faces' rank readers share. `source` is "a Slurm task", "an Open MPI task": the Error names it
// without the article; the fix is always to start the command through the launcher.
Error inconsistent_ranks(std::string_view source, const std::string& what);
inline constexpr const char* k_launcher_fix = "start the command through the launcher itself, not in a copied environment";
int require_rank_int(const Env& env, std::string_view name, long long min, std::string_view source);
std::optional<int> optional_rank_int(const Env& env, std::string_view name, long long min);
// 0 <= rank < world, 0 <= local rank < local world <= world; Error naming the variables otherwise.
void check_task_ranks(const TaskRanks& r, std::string_view source, std::string_view rank_var,
                      std::string_view size_var, std::string_view local_var, std::string_view local_size_var);
// MPI launchers give no node index; it is derived when the placement is known and every node has the same number
// of ranks. Block placement (by slot, core, socket, ppr:N:node: a node fills before the next) puts this node's
// first rank at rank - local_rank; round robin (--map-by node) puts rank r on node r mod nodes.
enum class Placement { block, round_robin, unknown };
void derive_node_rank(TaskRanks* r, std::optional<int> num_nodes, Placement placement);

}  // namespace hpclaunch
