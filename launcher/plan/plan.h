// Turns what the user asked for (a JobRequest) and a site profile into a LaunchPlan: launch mode, task
// geometry, queue, time, account, directives, environment. Pure: no files, no processes, no clock.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dialect/dialect.h"
#include "plan/sweep.h"
#include "site/profile.h"

namespace hpclaunch {

// The flags of `hpclaunch submit|render`, as typed (strings are checked by make_plan).
struct JobRequest {
  std::string site;
  int nodes = 1;
  std::optional<int> gpus_per_node;
  std::string time;
  std::string account;
  std::string partition;
  std::string qos;
  std::string constraint;
  std::string launcher;
  std::string name;
  std::string container;
  std::vector<std::string> modules;
  std::vector<std::string> env;  // "K=V"
  std::vector<std::string> command;
  std::optional<bool> requeue;    // --requeue / --no-requeue; unset: the profile's default
  std::string signal;             // --signal SIG@SECONDS
  std::optional<int> max_requeues;
  std::optional<int> hang_timeout;  // --hang-timeout S: the agent's (0: off); unset: the profile's
  std::optional<int> spares;        // --spares K: nodes beyond --nodes, waiting to replace one; unset: the profile's
  std::optional<bool> preflight;  // --preflight: `hpclaunch check` on every rank before the command
  std::optional<int> segment;     // --segment N: block topology's nodes per segment (0: none); unset: the queue's
  std::optional<bool> exclusive_topo;  // --exclusive-topo: no other job in the job's blocks (sbatch --exclusive=topo)
  // --snapshot: the job runs a copy of the code as it is at submit (submit/snapshot.h); unset: the profile's.
  std::optional<bool> snapshot;
  std::vector<std::string> snapshot_exclude;  // --snapshot-exclude PATTERN (gitignore syntax), beside the profile's
  std::string snapshot_max_size;              // --snapshot-max-size SIZE ("": the profile's, else 256M)
  std::string snapshot_max_size_origin;       // "--snapshot-max-size", or the spec's FILE:LINE
  // The user's default account as the scheduler's accounting says (`sacctmgr show user`), looked up by the CLI
  // when --account is absent; "" when unknown.
  std::string default_account;
  ArrayRequest array;  // --array, --sweep, --sweep-zip, --max-concurrent
};

using EnvList = std::vector<std::pair<std::string, std::string>>;

// The plan: what the job asks of its scheduler (dialect/dialect.h's BatchRequest: site, launcher, geometry, time,
// queue, account, memory, container, warning signal and requeue), and what the script does with it.
struct LaunchPlan : BatchRequest {
  std::vector<std::string> script_notes;  // comment lines the script carries (where a default came from, how to change it)
  std::vector<std::string> modules;
  EnvList env;                // exported in the script, in order; later entries win
  std::vector<std::string> command;      // the user's command, wrapped for the container if any
  std::vector<std::string> user_command; // exactly as typed
  int max_requeues = 0;       // requeue at most this many times (BatchRequest::requeue)
  // `hpclaunch check` runs first with the same launch; a bad node stops the job (and with requeue, the next run
  // leaves it out: `hpclaunch exclude`).
  bool preflight = false;
  ArrayPlan array;            // the tasks of an array job (plan/sweep.h); none for a single job
  std::vector<std::string> warnings;
};

// Checks the request against the profile and plans the job. Throws Error naming the flag on bad input.
LaunchPlan make_plan(const JobRequest& request, const SiteProfile& site);

// Throws the Error (exit 2) for a plan that must not be submitted, though it may be rendered: a retired site,
// whose queue never runs a job again. Called by `submit` before anything is written.
void check_submittable(const LaunchPlan& plan);

// Where compute nodes write only under scratch (the profile's scratch_only; Trillium, Sockeye): an error (exit 2)
// when `job_dir` (absolute) is outside `scratch_dir` (the value of the profile's first scratch variable on the
// login node), a warning when that variable is unset here; "" when all is well.
std::string check_job_dir_location(const SiteProfile& site, const std::string& job_dir, const std::string& scratch_dir);

// The longest time `queue` allows a job of `nodes` nodes (its max_time_by_nodes entry, else max_time); 0: no limit.
long queue_max_time(const Queue& queue, int nodes);

// Parses a launch mode name; nullopt when unknown.
std::optional<LaunchMode> parse_launch_mode(const std::string& name);

}  // namespace hpclaunch
