// One node's agent (TorchElastic's agent part): joins the rendezvous (serving it on node 0), runs the node's
// worker group for each round, reports failures, re-joins after a restart, forwards signals, and decides the
// exit: 0 only if every worker on every node succeeded.
#pragma once
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange under C++20
#include <boost/asio.hpp>
#include <memory>
#include <optional>
#include <string>

#include "agent/agent_options.h"
#include "agent/failure.h"
#include "agent/rendezvous_state.h"

namespace hpclaunch {

class StoreServer;
class StoreClient;
class ProcessGroup;
struct ProcessExit;

class ElasticAgent {
 public:
  ElasticAgent(AgentOptions options, EnvMap base_env, int cpus);
  ~ElasticAgent();
  // Runs the job to its end. Returns 0, or throws Error with the root-cause summary.
  int run();

 private:
  enum class After { nothing, rejoin, exit };
  void on_connected();
  void on_message(const nlohmann::json& msg);
  void on_lost(const std::string& why);
  void on_worker_exit(const ProcessExit& e);
  void on_idle();
  void on_signal(int sig);
  void watch_signals();
  void start_workers(const Assignment& a);
  void then(After next);
  void record_failure(const Failure& f) const;
  void exit_with(int code, std::string message);
  void join();
  void log(const std::string& msg) const;
  std::string attempt_dir() const;

  AgentOptions m_opt;
  EnvMap m_base_env;
  int m_cpus;
  boost::asio::io_context m_io;
  boost::asio::signal_set m_signals;
  std::unique_ptr<StoreServer> m_server;
  std::unique_ptr<StoreClient> m_client;
  std::unique_ptr<ProcessGroup> m_workers;
  std::string m_tmp_dir;  // error files when there is no --log-dir
  int m_round = 0;
  bool m_running = false;   // workers of m_assignment are running and no failure was seen
  After m_after = After::nothing;
  Assignment m_assignment;
  bool m_exiting = false;
  bool m_signals_done = false;  // the exit path cleared m_signals: never wait on it again
  int m_exit_code = 0;
  std::string m_exit_message;
  int m_stop_signal = 0;  // a terminating signal the agent got
};

}  // namespace hpclaunch
