#include "agent/elastic_agent.h"

#include <fmt/core.h>
#include <stdlib.h>

#include <csignal>
#include <filesystem>

#include "agent/agent_log.h"
#include "agent/protocol.h"
#include "agent/store_client.h"
#include "agent/store_server.h"
#include "process/process_group.h"
#include "util/error.h"
#include "util/file.h"
#include "util/process.h"  // signal_name

namespace hpclaunch {

namespace {

std::chrono::milliseconds ms(double seconds) { return std::chrono::milliseconds(static_cast<long long>(seconds * 1000)); }

}  // namespace

ElasticAgent::ElasticAgent(AgentOptions options, EnvMap base_env, int cpus)
    : m_opt(std::move(options)), m_base_env(std::move(base_env)), m_cpus(cpus), m_signals(m_io) {
  m_base_env.erase("HPCLAUNCH_RDZV_SECRET");  // the workers do not need it
  if (m_opt.secret.empty()) m_opt.secret = random_secret();
}

ElasticAgent::~ElasticAgent() {
  if (!m_tmp_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(m_tmp_dir, ec);
  }
}

void ElasticAgent::log(const std::string& msg) const { agent_log(m_opt.host, msg); }

int ElasticAgent::run() {
  resolve_command(worker_argv(m_opt.command).at(0), "hpclaunch agent");  // a typo fails here, not after the rendezvous
  for (int sig : m_opt.signals.empty() ? forwarded_signals() : m_opt.signals) m_signals.add(sig);
  watch_signals();
  // A failed worker gets this node's others SIGTERM (SIGKILL after --grace); the agent reports it.
  ProcessGroupConfig config{"hpclaunch agent", /*stop_others_on_failure=*/true, ms(m_opt.grace_s)};
  m_workers = std::make_unique<ProcessGroup>(
      m_io, config, [this](const ProcessExit& e) { on_worker_exit(e); }, [this] { on_idle(); });
  if (m_opt.log_dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hpclaunch-agent-XXXXXX").string();
    if (::mkdtemp(tmpl.data())) m_tmp_dir = tmpl;
  }
  int port = m_opt.rdzv_port;
  if (m_opt.node_rank == 0) {
    StoreServerConfig sc;
    sc.bind_host = m_opt.rdzv_host;
    sc.port = port;
    sc.secret = m_opt.secret;
    sc.log_host = m_opt.host;
    sc.verbose = m_opt.verbose;
    sc.heartbeat_timeout = ms(m_opt.heartbeat_timeout_s);
    sc.rendezvous = {m_opt.min_nodes, m_opt.max_nodes, m_opt.max_restarts, ms(m_opt.last_call_s),
                     ms(m_opt.join_timeout_s), m_opt.local_addr.empty() ? m_opt.rdzv_host : m_opt.local_addr, 0};
    m_server = std::make_unique<StoreServer>(m_io, sc);
    port = m_server->port();
  }
  StoreClientConfig cc{m_opt.rdzv_host, port, m_opt.secret, ms(m_opt.join_timeout_s), ms(m_opt.heartbeat_timeout_s)};
  m_client = std::make_unique<StoreClient>(
      m_io, cc, [this] { on_connected(); }, [this](const nlohmann::json& m) { on_message(m); },
      [this](const std::string& why) { on_lost(why); });
  m_client->connect();
  m_io.run();
  if (m_exit_code == 0) return 0;
  throw Error("hpclaunch agent", m_exit_message, "", m_exit_code);
}

void ElasticAgent::on_connected() { join(); }

void ElasticAgent::join() {
  m_client->send({{"type", "join"}, {"node_rank", m_opt.node_rank}, {"host", m_opt.host}, {"nproc", m_opt.nproc},
                  {"round", m_round}});
}

void ElasticAgent::on_message(const nlohmann::json& msg) {
  if (m_exiting) return;
  const std::string type = msg["type"];
  try {
    if (type == "assign") {
      Assignment a;
      a.round = msg.at("round");
      a.group_rank = msg.at("group_rank");
      a.group_world_size = msg.at("group_world_size");
      a.rank_offset = msg.at("rank_offset");
      a.world_size = msg.at("world_size");
      a.restart_count = msg.at("restart_count");
      a.master_addr = msg.at("master_addr");
      a.master_port = msg.at("master_port");
      start_workers(a);
    } else if (type == "restart") {
      m_round = msg.at("round");
      m_running = false;
      if (m_opt.verbose) log(fmt::format("restarting: joining round {}", m_round));
      then(After::rejoin);
    } else if (type == "abort") {
      Failure f = msg.at("failure").get<Failure>();
      record_failure(f);
      exit_with(m_stop_signal ? 128 + m_stop_signal : k_exit_failure,
                format_summary(f, msg.value("restart_count", 0), m_opt.max_restarts));
    } else if (type == "finish") {
      exit_with(0, "");
    } else if (type == "refuse") {
      exit_with(k_exit_failure, "the rendezvous store refused this agent: " + msg.value("reason", std::string()));
    }
  } catch (const nlohmann::json::exception& e) {
    log(fmt::format("bad '{}' message from the store: {}", type, e.what()));
  } catch (const Error& e) {
    exit_with(e.exit_code(), e.what());
  }
}

std::string ElasticAgent::attempt_dir() const {
  std::string root = m_opt.log_dir.empty() ? m_tmp_dir : m_opt.log_dir;
  return fmt::format("{}/attempt_{}", root, m_assignment.restart_count);
}

void ElasticAgent::start_workers(const Assignment& a) {
  m_assignment = a;
  WorkerLayout layout{m_opt.rdzv_id, m_opt.role, m_opt.nproc, m_opt.max_restarts,
                      omp_threads_per_worker(m_cpus, m_opt.nproc), m_opt.virtual_local_rank};
  auto argv = worker_argv(m_opt.command);
  std::vector<ProcessSpec> specs;
  for (int lr = 0; lr < m_opt.nproc; ++lr) {
    ProcessSpec s;
    s.id = lr;
    const int rank = a.rank_offset + lr;
    std::string dir = fmt::format("{}/rank_{}", attempt_dir(), rank);
    std::string error_file = dir + "/error.json";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::filesystem::remove(error_file, ec);
    s.argv = argv;
    s.env = worker_env(m_base_env, layout, a, lr, error_file);
    if (lr < static_cast<int>(m_opt.worker_cpus.size())) s.cpus = m_opt.worker_cpus[lr];
    s.null_stdin = true;
    s.output = ProcessSpec::Output::lines;
    s.prefix = fmt::format("[{}:{}] ", m_opt.host, rank);
    int redirect = stream_mask(m_opt.redirects, lr), tee = stream_mask(m_opt.tee, lr);
    bool shown = m_opt.local_ranks_filter.empty() || m_opt.local_ranks_filter.count(lr);
    s.console_out = shown && !(redirect & 1);
    s.console_err = shown && !(redirect & 2);
    if (!m_opt.log_dir.empty()) {
      if ((redirect | tee) & 1) s.out_file = dir + "/stdout.log";
      if ((redirect | tee) & 2) s.err_file = dir + "/stderr.log";
    }
    specs.push_back(std::move(s));
  }
  m_running = true;
  m_after = After::nothing;
  m_workers->start(specs);
}

void ElasticAgent::on_worker_exit(const ProcessExit& e) {
  if (!m_running || e.ok()) return;
  m_running = false;
  Failure f;
  f.host = m_opt.host;
  f.node_rank = m_opt.node_rank;
  f.rank = m_assignment.rank_offset + e.id;
  f.local_rank = e.id;
  f.exit_code = e.exit_code;
  f.signal = e.signal;
  f.error = read_error_file(fmt::format("{}/rank_{}/error.json", attempt_dir(), f.rank));
  log("worker failed: " + describe(f) + "; stopping this node's workers");
  m_client->send({{"type", "failed"}, {"round", m_assignment.round}, {"failure", f}});
  // The group stops the others (stop_others_on_failure); then wait for the store's restart or abort.
}

void ElasticAgent::on_idle() {
  if (m_running) {  // every worker exited 0
    m_running = false;
    m_client->send({{"type", "done"}, {"round", m_assignment.round}});
    return;
  }
  After next = m_after;
  m_after = After::nothing;
  if (next == After::rejoin) join();
  if (next == After::exit) {
    m_client->close();
    if (m_server) m_server->stop();
    boost::system::error_code ec;
    m_signals_done = true;
    m_signals.cancel(ec);
    m_signals.clear(ec);  // from here on a signal has its default effect
    m_workers->close();
  }
}

void ElasticAgent::then(After next) {
  m_after = next;
  if (m_workers->idle()) on_idle();
  else m_workers->stop(ms(m_opt.grace_s), m_stop_signal ? m_stop_signal : SIGTERM);
}

void ElasticAgent::record_failure(const Failure& f) const {
  // Node 0's word is the job's: JOBDIR/failure.json, read by `hpclaunch exclude --from-failure` on requeue.
  auto dir = env_get(m_base_env, "HPCLAUNCH_JOB_DIR");
  if (m_opt.node_rank != 0 || !dir || dir->empty()) return;
  if (!write_file_atomic(*dir + "/failure.json", nlohmann::json(f).dump(2) + "\n"))
    log("cannot write " + *dir + "/failure.json");
}

void ElasticAgent::exit_with(int code, std::string message) {
  if (m_exiting) return;
  m_exiting = true;
  m_running = false;
  m_exit_code = code;
  m_exit_message = std::move(message);
  then(After::exit);
}

void ElasticAgent::on_lost(const std::string& why) {
  if (m_exiting) return;
  exit_with(k_exit_failure, fmt::format("lost the rendezvous store at {}:{} (the node-0 agent): {}",
                                        m_opt.rdzv_host, m_opt.rdzv_port, why));
}

void ElasticAgent::watch_signals() {
  m_signals.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    on_signal(sig);
    // A stop signal with no worker running exits at once (on_idle): waiting again would keep the loop alive.
    if (!m_signals_done) watch_signals();
  });
}

void ElasticAgent::on_signal(int sig) {
  if (sig == SIGUSR1 || sig == SIGUSR2 || m_stop_signal) {
    // USR1/USR2 are a notice for the workers (checkpoint now), not a stop; a second stop signal is passed on.
    m_workers->signal(sig);
    return;
  }
  m_stop_signal = sig;
  log(fmt::format("got {}: forwarded to the workers, stopping (SIGKILL after {} s)", signal_name(sig), m_opt.grace_s));
  Failure f;
  f.host = m_opt.host;
  f.node_rank = m_opt.node_rank;
  f.reason = fmt::format("the agent on {} (node {}) got {}", m_opt.host, m_opt.node_rank, signal_name(sig));
  // On node 0 directly, so that the others hear the reason before this store goes away.
  if (m_server) m_server->shutdown(f);
  else m_client->send({{"type", "shutdown"}, {"failure", f}});
  m_running = false;
  if (!m_exiting) {
    m_exiting = true;
    m_exit_code = 128 + sig;
    m_exit_message = "stopped: " + f.reason;
    m_after = After::exit;
    m_workers->stop(ms(m_opt.grace_s), sig);
    if (m_workers->idle()) on_idle();
  } else if (m_exit_code != 0) {
    // Already stopping for a peer's reason (often the same scancel reaching the other nodes first): the
    // signal this agent got is what ended it here.
    m_exit_code = 128 + sig;
    m_exit_message = "stopped: " + f.reason;
    m_workers->signal(sig);
  }
}

}  // namespace hpclaunch
