// `hpclaunch agent`'s options: what its flags (torchrun's, read by cli/cmd_agent.cc) decide, with defaults from
// the job's environment. Pure: the flags as written, the environment, the allocation and the machine are passed in.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "agent/job_environment.h"
#include "agent/numa_binding.h"
#include "agent/worker_env.h"

namespace hpclaunch {

struct MachineInfo {
  std::string hostname;
  int cpus = 1;  // usable by this process (affinity)
  int gpus = 0;  // devices seen on the machine
  int xpus = 0;  // Intel GPUs seen on the machine (torchrun's --nproc-per-node xpu)
};

struct AgentOptions {
  int min_nodes = 1;
  int max_nodes = 1;
  int nproc = 1;
  std::string rdzv_host;
  int rdzv_port = 0;  // 0 with --standalone: any free port
  std::string rdzv_id = "none";
  int max_restarts = 0;
  std::string role = "default";
  std::string log_dir;
  std::string redirects = "0";  // per stream to files only: 0 none, 1 stdout, 2 stderr, 3 both; or "0:1,1:3"
  std::string tee = "0";        // to files and the console
  std::set<int> local_ranks_filter;  // console output only from these local ranks; empty: all
  bool standalone = false;
  // -1: none given and none in the job (torchrun's c10d line outside a scheduler): the agent that can serve the
  // rendezvous endpoint (it is on this machine and free) becomes node 0, the store numbers the others as they join.
  int node_rank = 0;
  double grace_s = 30;
  double join_timeout_s = 600;
  double last_call_s = 30;
  double heartbeat_timeout_s = 5;
  std::string host;    // the label in "[host:rank]" and in summaries
  // torchrun's ${role_name} ${local_rank} ${rank} ${hostname}; not given: "[host:rank] "; given empty: bare lines.
  std::string log_line_prefix_template;
  bool log_line_prefix_given = false;
  std::string secret;  // HPCLAUNCH_RDZV_SECRET
  std::string local_addr;         // --local-addr: on node rank 0, the MASTER_ADDR the workers get
  std::vector<int> signals;       // forwarded to the workers (--signals-to-handle); empty: the agent's default set
  bool virtual_local_rank = false;  // every worker sees LOCAL_RANK=0 and only its own GPU
  bool use_libuv = true;            // --rdzv-conf use_libuv: false gives the workers USE_LIBUV=0
  NumaBinding numa_binding = NumaBinding::none;
  std::vector<std::vector<int>> worker_cpus;  // per local rank, from numa_binding and the node (empty: inherit)
  bool verbose = false;
  // Hangs (agent/progress_watch.h, docs/agent.md): a worker without progress for hang_timeout_s (0: not watched)
  // has its stacks recorded and the group restarts; hang_output holds a program that reports nothing to its
  // output lines. After no_progress_limit attempts in a row without progress the job stops, not requeued (0: never).
  double hang_timeout_s = 0;
  double hang_startup_s = 0;  // to a rank's first report in an attempt; 0: hang_timeout_s
  bool hang_output = false;
  int no_progress_limit = 3;
  // Spare nodes (--spares, agent/rendezvous_state.h): node ranks max_nodes..max_nodes+spares-1 wait in the
  // rendezvous and replace a node that is lost or blamed for a hang.
  int spares = 0;
  // This node's NVLink domain ("CLUSTERUUID/CLIQUEID", runtime/nvlink_fabric.h): HPCLAUNCH_NVLINK_DOMAIN, else read
  // from `nvidia-smi -q` by the command (cli/cmd_agent.cc) for a multi-node job; "" none. The store keeps each
  // domain's nodes on contiguous group ranks.
  std::string nvlink_domain;
  // torchrun's --duplicate-stdout-filters / --duplicate-stderr-filters: a tee'd line holding any of these also
  // goes to ATTEMPT_DIR/filtered_stdout.log / filtered_stderr.log.
  std::vector<std::string> dup_stdout_filters, dup_stderr_filters;
  WorkerCommand command;
};

// `hpclaunch agent` or the torchrun face (the binary invoked as `torchrun`, or `hpclaunch torchrun`): the same
// flags; as torchrun, the command is always run with python unless --no-python, and a multi-node job without
// HPCLAUNCH_RDZV_SECRET runs with a store that authenticates no one, as torchrun's own: its shared word
// ("torchrun-face:RUN_ID@HOST:PORT") only keeps jobs apart.
enum class AgentFace { agent, torchrun };

// The command line as written, split by the face's rules: as `hpclaunch agent`, the flags end at "--" (the command
// follows it, or starts at the first word that is no flag); as torchrun, the flags end at the script, and
// everything after it is the script's, a "--" among its arguments included.
struct AgentArgv {
  std::vector<std::string> flags;            // for the flag parser; it stops at the first word that is no flag
  std::vector<std::string> after_separator;  // `hpclaunch agent`: what follows "--"
};
AgentArgv split_agent_argv(const std::vector<std::string>& args, AgentFace face);

// The flags as the parser read them: `set` holds the options a flag sets as it is (restarts, role, log dir,
// streams, timeouts, python, ...); the strings, the flags whose meaning resolve_agent_options decides ("" when
// not given).
struct AgentFlags {
  AgentOptions set;
  std::string nnodes, nproc, endpoint, local_ranks_filter, node_rank, rdzv_id, rdzv_backend = "c10d", rdzv_conf;
  std::string master_addr, master_port, signals, logs_specs, numa_binding;
  std::string shutdown_timeout;  // --grace / --shutdown-timeout, as written
  std::string event_log_handler;  // torchrun's --event-log-handler: only its default, null, applies here
  std::string dup_stdout_filters, dup_stderr_filters;
  std::vector<std::string> rest;             // from the first word the parser did not take as a flag on
  std::vector<std::string> after_separator;  // AgentArgv's
};

// The worker's command: `rest` (as torchrun, a "--" right before the script dropped), then what followed "--".
std::vector<std::string> worker_command_of(const AgentFlags& flags, AgentFace face);

// The decisions: nodes, workers per node (N, gpu, cpu, auto), the grace before SIGKILL (--grace/--shutdown-timeout,
// else TORCH_ELASTIC_SHUTDOWN_TIMEOUT, else 30 s), the duplicate filters, the rendezvous endpoint (the allocation's, the
// static --master-addr/--master-port, or --standalone), --rdzv-conf keys, node rank, run id, the secret, the
// command. Throws Error naming the flag (or variable) and the fix.
AgentOptions resolve_agent_options(const AgentFlags& flags, const EnvMap& env, const JobEnvironment& job,
                                   const MachineInfo& machine, AgentFace face = AgentFace::agent);

// The stream mask (1 stdout, 2 stderr, 3 both) a --redirects/--tee spec gives `local_rank`.
int stream_mask(const std::string& spec, int local_rank);
// Throws Error if `spec` is not 0-3 or "LOCAL_RANK:0-3,...".
void check_stream_spec(const std::string& flag, const std::string& spec);

// Where one stream (stdout or stderr) of one local rank goes, as torchrun 2.x's DefaultLogsSpecs.reify and
// PContext decide it: tee is "redirect to the file, then tail the file to the console", so a tee'd stream goes to
// both even when --redirects names it too; a redirected one only to the file; neither: the console. A local rank
// outside --local-ranks-filter shows nothing on the console (its files are written all the same), and its tee'd
// lines are not duplicated either (the filter files tail the same tee'd set as the console).
struct StreamRoute {
  bool file = false;       // LOG_DIR/attempt_N/rank_R/{stdout,stderr}.log (when there is a log directory)
  bool console = false;    // our stdout/stderr, each line prefixed
  bool duplicate = false;  // a line holding a --duplicate-*-filters string also goes to filtered_*.log
  bool operator==(const StreamRoute&) const = default;
};
// stream: 0 stdout, 1 stderr.
StreamRoute stream_route(const AgentOptions& o, int local_rank, int stream);

// The prefix of a worker's console lines: "[host:rank] ", or o.log_line_prefix_template with torchrun's macros
// replaced as Python's string.Template.safe_substitute does ($name or ${name}; $$ is a $; others kept as written).
std::string line_prefix(const AgentOptions& o, int local_rank, int rank);

}  // namespace hpclaunch
