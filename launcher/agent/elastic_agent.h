// One node's agent (TorchElastic's agent part): joins the rendezvous (serving it on node 0), runs the node's
// worker group for each round, reports failures, re-joins after a restart, forwards signals, and decides the
// exit: 0 only if every worker on every node succeeded. The decisions are agent/agent_state.h's (pure); this
// is the shell that carries them out with the store, the process group and the signals on one io_context. The
// store link and the worker group come from AgentParts: the real ones, or fakes that let the unit test run this
// loop in milliseconds (tests/unit/elastic_agent_test.cc).
#pragma once
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange under C++20
#include <boost/asio.hpp>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <filesystem>

#include "agent/agent_options.h"
#include "agent/agent_state.h"
#include "agent/file_timer.h"
#include "agent/progress_watch.h"
#include "agent/stacks.h"
#include "agent/store_client.h"
#include "process/process_group.h"
#include "util/line_splitter.h"

namespace hpclaunch {

class StoreServer;

struct AgentParts {
  std::function<std::unique_ptr<StoreLink>(asio::io_context&, StoreClientConfig, StoreClient::OnConnected,
                                           StoreClient::OnMessage, StoreClient::OnLost)>
      store;
  std::function<std::unique_ptr<WorkerGroup>(asio::io_context&, ProcessGroupConfig, ProcessGroup::OnExit,
                                             ProcessGroup::OnIdle)>
      workers;
};
// StoreClient and ProcessGroup.
AgentParts real_agent_parts();

class ElasticAgent {
 public:
  ElasticAgent(AgentOptions options, EnvMap base_env, int cpus, AgentParts parts = real_agent_parts());
  ~ElasticAgent();
  // Runs the job to its end. Returns 0, or throws Error with the root-cause summary.
  int run();

 private:
  void on_message(const nlohmann::json& msg);
  void apply(const AgentActions& actions);
  void start_workers(const Assignment& a);
  void record_failure(const Failure& f) const;
  void finish();
  void watch_signals();
  void log(const std::string& msg) const;
  void worker_exited(const ProcessExit& e);
  std::string attempt_dir() const;
  // Hangs and progress (agent/progress_watch.h): the progress files read on a timer, the stacks recorded on a
  // thread of their own (the store's heartbeats go on), then the hang reported.
  void watch_progress();
  void poll_progress();
  void read_progress_files();
  void record_stacks(const Hang& h);
  void stacks_recorded(const Hang& h, int round, const std::vector<WorkerStacks>& stacks, const std::string& dir);
  std::string stacks_dir() const;
  std::string progress_file(int local_rank) const;
  // torchrun's file timer (TORCHELASTIC_ENABLE_FILE_TIMER=1): the pipe served, its requests read, expired scopes'
  // processes killed as torch's FileTimerServer does (agent/file_timer.h).
  void serve_file_timer();
  int local_rank_of(int pid) const;  // of the running group's worker `pid`; -1 if none
  void read_file_timer();
  void reap_file_timers();
  void close_file_timer();
  void read_progress_record();
  void write_progress_record() const;
  void write_nodes_record();
  void write_agent_exit() const;

  AgentOptions m_opt;
  AgentParts m_parts;
  std::string m_nodes_record;  // what write_nodes_record wrote last
  std::vector<LineTail> m_stderr_tails;  // per local rank: the last lines of stderr, for a failure without an error file
  EnvMap m_base_env;
  int m_cpus;
  AgentState m_state;
  boost::asio::io_context m_io;
  boost::asio::signal_set m_signals;
  std::unique_ptr<StoreServer> m_server;
  std::unique_ptr<StoreLink> m_client;
  std::unique_ptr<WorkerGroup> m_workers;
  std::string m_tmp_dir;  // error files when there is no --log-dir
  Assignment m_assignment;  // of the workers started last: their attempt directory
  bool m_signals_done = false;  // finish() cleared m_signals: never wait on it again
  ProgressWatch m_watch;
  boost::asio::steady_timer m_watch_timer;
  std::vector<int> m_pids;  // of the running group, by local rank
  std::vector<std::filesystem::file_time_type> m_progress_seen;  // each progress file's time when last read
  StackTools m_tools;
  std::thread m_capture;  // recording stacks
  bool m_capturing = false;
  ProgressWatch::Clock::time_point m_hang_seen{};
  int m_start_streak = 0;  // node 0: attempts without progress before this run (JOBDIR/progress.json)
  bool m_start_reports = false;
  FileTimers m_file_timers;
  std::string m_timer_path;  // "": no file timer
  std::unique_ptr<boost::asio::posix::stream_descriptor> m_timer_pipe;
  int m_timer_writer = -1;  // our own write end: the pipe never reads as ended between the workers' writes
  LineSplitter m_timer_lines;
  char m_timer_buf[4096];
  boost::asio::steady_timer m_timer_tick;
};

}  // namespace hpclaunch
