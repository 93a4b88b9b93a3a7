// The `local` site's scheduler: runs a rendered job script on this machine in the foreground (streaming its
// output to the terminal and to JOB_DIR/output.log), and `local-srun`, which plays srun for emulated nodes.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace hpclaunch {

// The environment of task `rank` of a local job (docs/CONTRACTS.md, "The local site's emulated nodes").
std::vector<std::pair<std::string, std::string>> local_task_env(const std::string& job_id, int nodes,
                                                                int tasks_per_node, int gpus_per_node, int rank);

// "local-<unix time>-<pid>".
std::string new_local_job_id();

// Called once a detached job runs (its state.json written); empty for a job run in the foreground.
using Started = std::function<void()>;

// What the local runner does when a run of a job's script ends, as Slurm's script does after its launch: a run that
// exited k_exit_requeue (99: saved on the warning signal) runs again while it has made fewer than max_requeues
// requeues; any other end, or a runner told to stop (cancel), ends the job.
enum class AfterRun { finish, requeue, out_of_requeues };
AfterRun after_local_run(int exit_code, int requeues_done, int max_requeues, bool stopping);

// Runs `bash script` with HPCLAUNCH_JOB_ID set; returns its exit status (128 + signal if killed). Signals
// reaching hpclaunch (process/signals.h) are passed on to the job's process group. The processes of this file are
// started and watched by process/process_group.h, as the agent's workers are. Its output goes to
// JOB_DIR/output.log and, unless `started` is given (detached), to our stdout too. With max_requeues > 0 the script
// runs again as after_local_run says, with HPCLAUNCH_RESTART_COUNT=N (its N-th requeue); state.json says the job
// runs until the last run ends.
int run_local_job(const std::string& script, const std::string& job_dir, const std::string& job_id,
                  int max_requeues = 0, const Started& started = {});

// Runs the tasks of an array job: `bash script` once per task with HPCLAUNCH_ARRAY_TASK=I, each task's output in
// JOB_DIR/tasks/I/output.log and its state in tasks/I/state.json; one after another, streaming the output here too
// (max_concurrent <= 1), or up to max_concurrent at once. A task runs again as after_local_run says, on the
// array's plan.json max_requeues (each task its own count). The runner's own pid is JOB_DIR/state.json: SIGTERM
// to it stops every running task and starts no more. Returns the highest exit status of the tasks. Detached
// (`started` given), nothing is streamed here.
int run_local_array(const std::string& script, const std::string& job_dir, const std::string& job_id, int tasks,
                    int max_concurrent, const Started& started = {});

// `submit --detach`: runs `run` (run_local_job or run_local_array, given `started`) in a process of its own session
// whose stdin is /dev/null and whose stdout and stderr go to JOB_DIR/output.log, and returns once `run` called
// `started`: the job runs, and `status`/`cancel` find it. Throws Error naming the job directory when the runner
// cannot start or ends before the job does.
void run_detached(const std::string& job_dir, const std::function<int(const Started&)>& run);

// Writes RUN_DIR/state.json (LocalStateFile): running (exit_code < 0) or exited with exit_code, and the runner's
// pid when it is not 0; by rename.
void write_local_state(const std::string& run_dir, long long pid, int exit_code, long long runner = 0);

// Starts nodes * tasks_per_node copies of argv, each with local_task_env, waits for all of them and returns
// the highest exit status (as srun does). Signals are forwarded to every task. With kill_on_bad_exit (as `srun
// --kill-on-bad-exit=1`) the first task to fail gets the others SIGTERM (SIGKILL 10 s later), and its exit status
// is the result; without (`local-srun --no-kill`, agents with spares) the others run on.
int run_local_tasks(const std::vector<std::string>& argv, const std::string& job_id, int nodes,
                    int tasks_per_node, int gpus_per_node, bool kill_on_bad_exit = true);

}  // namespace hpclaunch
