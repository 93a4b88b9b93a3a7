// One node's agent as decisions (TorchElastic's SimpleElasticAgent, without its effects): what a message from the
// store, a worker's exit, the workers going idle, a signal or a lost store makes the agent do next. Pure: events
// in, actions out; agent/elastic_agent.cc carries the actions out with the store and the process group.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agent/failure.h"
#include "agent/rendezvous_state.h"
#include "util/error.h"

namespace hpclaunch {

// A worker that exits k_exit_requeue (util/error.h) is not restarted in place: the agent ends the job with that
// status, for the job's script (Slurm) or runner (local) to requeue.

struct AgentStateConfig {
  std::string host;
  int node_rank = 0;
  int nproc = 1;
  int max_restarts = 0;
  bool verbose = false;
  double grace_s = 30;    // for the log line only: the shell applies it
  std::string rdzv_host;  // for the lost-store message
  int rdzv_port = 0;
  bool serves_store = false;  // node 0: this agent's own store is told of a signal directly
  // A task of a Slurm step: slurmstepd signals every process of the step (proctrack/linuxproc and cgroup), the
  // workers included, so a notice passed on again would reach them twice (hpclaunch-train dies at a second one).
  bool step_signals_workers = false;
  std::string nvlink_domain;  // this node's NVLink domain, told to the store at join ("" none)
};

struct AgentAction {
  enum Kind {
    send,            // `message` to the store
    start_workers,   // this node's workers of `assignment`
    signal_workers,  // `signal` to every running worker
    stop_workers,    // `signal` now, SIGKILL after the grace period
    record_failure,  // `failure` as the job's (JOBDIR/failure.json)
    shutdown_store,  // stop the job everywhere for `failure` (on node 0, the store in this process)
    log,             // `text` on stderr
    finish,          // close the store link and the store, stop watching signals and workers: the loop ends
  } kind;
  nlohmann::json message;
  Assignment assignment;
  int signal = 0;
  Failure failure;
  std::string text;
};
using AgentActions = std::vector<AgentAction>;

// A worker's end as the process group reports it.
struct WorkerEnd {
  int local_rank = 0;
  int exit_code = 0;
  int signal = 0;
  std::string error;  // the summary of its error file in the current attempt ("" if none): the shell reads it
  std::string stderr_tail;  // without an error file: its last lines of stderr (the shell keeps them)
  bool ok() const { return exit_code == 0 && signal == 0; }
};

class AgentState {
 public:
  explicit AgentState(AgentStateConfig config);

  AgentActions connected();
  // A message from the store (assign, restart, abort, finish, refuse, standby); throws nlohmann::json::exception when
  // a field is missing or of the wrong type.
  AgentActions message(const nlohmann::json& msg);
  // start_workers failed (a command that cannot be started): the agent exits with it.
  AgentActions start_failed(int exit_code, const std::string& message);
  AgentActions worker_exited(const WorkerEnd& e);
  // Every worker of the group exited and its output is drained.
  AgentActions workers_idle();
  // The node's workers made progress in this round (agent/progress_watch.h): told to the store once a round, which
  // counts the attempts without it (no progress, no requeue).
  AgentActions progressed();
  // A worker hung (--hang-timeout; `f` names it, its stacks recorded): this node's workers are killed at once (a
  // hung worker heeds no SIGTERM) and the store decides, as for a failed worker: restart or abort.
  AgentActions hung(const Failure& f);
  AgentActions signal(int sig);
  AgentActions store_lost(const std::string& why);

  bool finished() const { return m_finished; }
  int exit_code() const { return m_exit_code; }  // once finished: 0, 1, 99 (k_exit_requeue) or 128 + signal
  const std::string& exit_message() const { return m_exit_message; }
  int round() const { return m_round; }
  bool running() const { return m_running; }  // workers of the current assignment run and no failure was seen

 private:
  enum class After { nothing, rejoin, exit };
  AgentActions join() const;
  AgentActions then(After next);
  AgentActions exit_with(int code, std::string message);
  AgentActions abort_heard();
  AgentActions stop_workers(int sig);
  AgentActions stop_job(const Failure& why);
  AgentAction log(std::string text) const;

  AgentStateConfig m_config;
  int m_round = 0;
  Assignment m_assignment;
  bool m_workers = false;  // a group was started and has not gone idle
  bool m_running = false;  // workers of m_assignment are running and no failure was seen
  After m_after = After::nothing;
  bool m_exiting = false;
  bool m_finished = false;
  int m_exit_code = 0;
  std::string m_exit_message;
  int m_stop_signal = 0;  // a terminating signal the agent got
  int m_progress_round = -1;  // the round whose progress the store was told of
  bool m_await_abort = false;  // ending with 99: waits for the store's abort before it finishes
  std::string m_standby;  // "spare" or "retired" while the store holds this node back; "" otherwise
};

}  // namespace hpclaunch
