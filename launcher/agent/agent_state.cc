#include "agent/agent_state.h"

#include <fmt/core.h>

#include <csignal>

#include "process/signals.h"  // is_notice_signal
#include "util/error.h"       // k_exit_failure
#include "util/command.h"     // signal_name

namespace hpclaunch {

namespace {

AgentAction act(AgentAction::Kind kind) { return AgentAction{kind, {}, {}, 0, {}, {}}; }

AgentAction send_message(nlohmann::json message) {
  AgentAction a = act(AgentAction::send);
  a.message = std::move(message);
  return a;
}

AgentAction to_workers(AgentAction::Kind kind, int sig) {
  AgentAction a = act(kind);
  a.signal = sig;
  return a;
}

void append_actions(AgentActions& to, AgentActions more) {
  for (auto& a : more) to.push_back(std::move(a));
}

Assignment assignment_of(const nlohmann::json& msg) {
  Assignment a;
  a.round = msg.at("round");
  a.group_rank = msg.at("group_rank");
  a.group_world_size = msg.at("group_world_size");
  a.rank_offset = msg.at("rank_offset");
  a.world_size = msg.at("world_size");
  a.restart_count = msg.at("restart_count");
  a.master_addr = msg.at("master_addr");
  a.master_port = msg.at("master_port");
  a.node_rank = msg.value("node_rank", -1);
  return a;
}

// A worker's own exit 99, not a signal's or a lost node's.
bool asks_requeue(const Failure& f) { return f.exit_code == k_exit_requeue && f.signal == 0 && !f.node_lost; }

}  // namespace

AgentState::AgentState(AgentStateConfig config) : m_config(std::move(config)) {}

AgentAction AgentState::log(std::string text) const {
  AgentAction a = act(AgentAction::log);
  a.text = std::move(text);
  return a;
}

AgentActions AgentState::join() const {
  nlohmann::json msg = {{"type", "join"}, {"node_rank", m_config.node_rank}, {"host", m_config.host},
                        {"nproc", m_config.nproc}, {"round", m_round}};
  if (!m_config.nvlink_domain.empty()) msg["domain"] = m_config.nvlink_domain;
  return {send_message(msg)};
}

AgentActions AgentState::connected() {
  if (m_finished) return {};
  return join();
}

AgentActions AgentState::message(const nlohmann::json& msg) {
  const std::string type = msg.at("type");
  if (m_exiting) {
    // Already ending with 99 for a worker's "requeue me": the store's word that the job made no progress in its
    // last attempts turns it into 93, which the scripts do not requeue.
    if (type == "abort" && m_exit_code == k_exit_requeue && !m_finished) {
      const Failure f = msg.at("failure").get<Failure>();
      if (f.no_progress > 0) {
        m_exit_code = k_exit_no_progress;
        m_exit_message += "\n" + no_progress_line(f.no_progress);
        if (m_config.node_rank == 0) {
          AgentAction a = act(AgentAction::record_failure);
          a.failure = f;
          AgentActions acts{a};
          append_actions(acts, abort_heard());
          return acts;
        }
      }
    }
    if (type == "abort") return abort_heard();
    return {};
  }
  if (type == "assign") {
    m_assignment = assignment_of(msg);
    if (m_config.node_rank < 0) m_config.node_rank = m_assignment.node_rank;  // numbered by the store
    m_running = true;
    m_workers = true;
    m_after = After::nothing;
    AgentActions acts;
    if (!m_standby.empty())
      acts.push_back(log(fmt::format("taking a place in round {} as group rank {}", m_assignment.round,
                                     m_assignment.group_rank)));
    m_standby.clear();
    AgentAction a = act(AgentAction::start_workers);
    a.assignment = m_assignment;
    acts.push_back(a);
    return acts;
  }
  if (type == "restart") {
    const int round = msg.at("round");
    m_round = round;
    m_running = false;
    AgentActions acts;
    if (m_config.verbose) acts.push_back(log(fmt::format("restarting: joining round {}", m_round)));
    append_actions(acts, then(After::rejoin));
    return acts;
  }
  if (type == "abort") {
    const Failure f = msg.at("failure").get<Failure>();
    AgentActions acts;
    if (m_config.node_rank == 0) {  // node 0's word is the job's
      AgentAction a = act(AgentAction::record_failure);
      a.failure = f;
      acts.push_back(a);
    }
    // A peer's worker asked for a requeue (worker_exited): every agent ends with 99, so that srun's status (the
    // highest of the tasks') is the script's "requeue me" whichever node's worker said it.
    const int code = m_stop_signal       ? 128 + m_stop_signal
                     : f.no_progress > 0 ? k_exit_no_progress
                     : asks_requeue(f)   ? k_exit_requeue
                                         : k_exit_failure;
    append_actions(acts, exit_with(code, format_summary(f, msg.value("restart_count", 0), m_config.max_restarts)));
    return acts;
  }
  if (type == "standby") {
    // A spare (or a node retired after a hang): it holds no workers and waits for a place in a later round.
    const std::string as = msg.at("as");
    if (m_standby == as) return {};
    m_standby = as;
    return {log(as == "retired" ? "retired after the hang its rank was blamed for: this node waits, and runs workers "
                                  "again only if no spare is left to take a place"
                                : "a spare: this node waits in the rendezvous, holding no workers, to take the place "
                                  "of a node that is lost or hangs")};
  }
  if (type == "finish") return exit_with(0, "");
  if (type == "refuse")
    return exit_with(k_exit_failure, "the rendezvous store refused this agent: " + msg.value("reason", std::string()));
  return {};
}

AgentActions AgentState::start_failed(int exit_code, const std::string& message) {
  m_workers = false;  // the group killed what it had started
  return exit_with(exit_code, message);
}

AgentActions AgentState::worker_exited(const WorkerEnd& e) {
  // The first failure of a round is reported; the group stops this node's other workers itself
  // (stop_others_on_failure), and the store decides: restart or abort.
  if (!m_running || e.ok()) return {};
  m_running = false;
  Failure f;
  f.host = m_config.host;
  f.node_rank = m_config.node_rank;
  f.rank = m_assignment.rank_offset + e.local_rank;
  f.local_rank = e.local_rank;
  f.exit_code = e.exit_code;
  f.signal = e.signal;
  f.error = e.error;
  f.stderr_tail = e.stderr_tail;
  if (asks_requeue(f)) {
    // Saved and asking for a requeue (a preemption or time-limit notice reached it): a restart in place, what the
    // store would decide for a "failed" while restarts remain, would train on into the kill at the time limit. So
    // the job is stopped everywhere, without a restart, and the agent ends with 99 for the script to requeue.
    const std::string what = describe(f) + " (saved, requeue me)";
    AgentActions acts{log("worker " + what + "; stopping the job without a restart")};
    append_actions(acts, stop_job(f));
    // Every agent's status must be the same, since srun's is the highest of its tasks': this one waits for the
    // store's abort too, which may say that the job made no progress (93) instead.
    m_await_abort = true;
    append_actions(acts, exit_with(k_exit_requeue, "requeue: " + what));
    return acts;
  }
  return {log("worker failed: " + describe(f) + "; stopping this node's workers"),
          send_message({{"type", "failed"}, {"round", m_assignment.round}, {"failure", f}})};
}

AgentActions AgentState::progressed() {
  if (!m_running || m_progress_round == m_assignment.round) return {};
  m_progress_round = m_assignment.round;
  return {send_message({{"type", "progress"}, {"round", m_assignment.round}})};
}

AgentActions AgentState::hung(const Failure& f) {
  if (!m_running) return {};
  m_running = false;
  Failure failure = f;
  failure.host = m_config.host;
  failure.node_rank = m_config.node_rank;
  failure.rank = m_assignment.rank_offset + f.local_rank;
  return {log("hang: " + describe(failure) + "; killing this node's workers"),
          to_workers(AgentAction::stop_workers, SIGKILL),
          send_message({{"type", "failed"}, {"round", m_assignment.round}, {"failure", failure}})};
}

// The job ends everywhere for `why`, without a restart: on node 0 directly, so that the others hear the reason
// before this store goes away; elsewhere through the store.
AgentActions AgentState::stop_job(const Failure& why) {
  if (m_config.serves_store) {
    AgentAction a = act(AgentAction::shutdown_store);
    a.failure = why;
    return {a};
  }
  return {send_message({{"type", "shutdown"}, {"failure", why}})};
}

AgentActions AgentState::workers_idle() {
  m_workers = false;
  if (m_finished) return {};
  if (m_running) {  // every worker exited 0
    m_running = false;
    return {send_message({{"type", "done"}, {"round", m_assignment.round}})};
  }
  After next = m_after;
  m_after = After::nothing;
  if (next == After::rejoin) return join();
  if (next == After::exit) {
    if (m_await_abort) {  // the store's word on the requeue first (message)
      m_after = After::exit;
      return {};
    }
    m_finished = true;
    return {act(AgentAction::finish)};
  }
  return {};
}

AgentActions AgentState::abort_heard() {
  if (!m_await_abort) return {};
  m_await_abort = false;
  if (m_workers || m_after != After::exit) return {};
  return workers_idle();
}

AgentActions AgentState::then(After next) {
  m_after = next;
  if (!m_workers) return workers_idle();
  return {to_workers(AgentAction::stop_workers, m_stop_signal ? m_stop_signal : SIGTERM)};
}

AgentActions AgentState::exit_with(int code, std::string message) {
  if (m_exiting) return {};
  m_exiting = true;
  m_running = false;
  m_exit_code = code;
  m_exit_message = std::move(message);
  return then(After::exit);
}

AgentActions AgentState::store_lost(const std::string& why) {
  if (m_exiting) return abort_heard();  // no word will come
  return exit_with(k_exit_failure, fmt::format("lost the rendezvous store at {}:{} (the node-0 agent): {}",
                                               m_config.rdzv_host, m_config.rdzv_port, why));
}

AgentActions AgentState::signal(int sig) {
  if (m_finished) return {};
  // USR1/USR2 are a notice for the workers (checkpoint now), not a stop; a second stop signal is passed on.
  if (is_notice_signal(sig) && m_config.step_signals_workers)
    return {log(fmt::format("got {}: the Slurm step gave it to the workers too; not passed on again",
                            signal_name(sig)))};
  if (is_notice_signal(sig) || m_stop_signal) return {to_workers(AgentAction::signal_workers, sig)};
  m_stop_signal = sig;
  AgentActions acts{log(fmt::format("got {}: forwarded to the workers, stopping (SIGKILL after {} s)",
                                    signal_name(sig), m_config.grace_s))};
  Failure f;
  f.host = m_config.host;
  f.node_rank = m_config.node_rank;
  f.reason = fmt::format("the agent on {} (node {}) got {}", m_config.host, m_config.node_rank, signal_name(sig));
  append_actions(acts, stop_job(f));
  m_running = false;
  if (!m_exiting) {
    m_exiting = true;
    m_exit_code = 128 + sig;
    m_exit_message = "stopped: " + f.reason;
    m_after = After::exit;
    if (m_workers) acts.push_back(to_workers(AgentAction::stop_workers, sig));
    else append_actions(acts, workers_idle());
  } else if (m_exit_code != 0) {
    // Already stopping for a peer's reason (often the same scancel reaching the other nodes first): the
    // signal this agent got is what ended it here.
    m_exit_code = 128 + sig;
    m_exit_message = "stopped: " + f.reason;
    acts.push_back(to_workers(AgentAction::signal_workers, sig));
  }
  return acts;
}

}  // namespace hpclaunch
