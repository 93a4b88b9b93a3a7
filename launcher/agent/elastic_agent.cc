#include "agent/elastic_agent.h"

#include <fmt/core.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <filesystem>

#include "agent/agent_log.h"
#include "agent/protocol.h"
#include "agent/store_client.h"
#include "agent/store_server.h"
#include "dialect/in_job.h"
#include "process/process_group.h"
#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace {

std::chrono::milliseconds ms(double seconds) { return std::chrono::milliseconds(static_cast<long long>(seconds * 1000)); }

// srun passes a signal to every process of its step, the workers too: the agent must not pass it on again.
bool face_step_signals_workers(const EnvMap& env) {
  const InJobFace* face = job_face(env);
  return face && face->step_signals_workers(env);
}

AgentStateConfig state_config(const AgentOptions& o, const EnvMap& env) {
  return {o.host, o.node_rank, o.nproc, o.max_restarts, o.verbose, o.grace_s, o.rdzv_host, o.rdzv_port,
          /*serves_store=*/o.node_rank == 0,
          /*step_signals_workers=*/face_step_signals_workers(env)};
}

}  // namespace

AgentParts real_agent_parts() {
  return {[](asio::io_context& io, StoreClientConfig config, StoreClient::OnConnected on_connected,
             StoreClient::OnMessage on_message, StoreClient::OnLost on_lost) -> std::unique_ptr<StoreLink> {
            return std::make_unique<StoreClient>(io, std::move(config), std::move(on_connected),
                                                 std::move(on_message), std::move(on_lost));
          },
          [](asio::io_context& io, ProcessGroupConfig config, ProcessGroup::OnExit on_exit,
             ProcessGroup::OnIdle on_idle) -> std::unique_ptr<WorkerGroup> {
            return std::make_unique<ProcessGroup>(io, std::move(config), std::move(on_exit), std::move(on_idle));
          }};
}

ElasticAgent::ElasticAgent(AgentOptions options, EnvMap base_env, int cpus, AgentParts parts)
    : m_opt(std::move(options)),
      m_parts(std::move(parts)),
      m_base_env(std::move(base_env)),
      m_cpus(cpus),
      m_state(state_config(m_opt, m_base_env)),
      m_signals(m_io) {
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
  m_workers = m_parts.workers(
      m_io, config, [this](const ProcessExit& e) { worker_exited(e); }, [this] { apply(m_state.workers_idle()); });
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
  m_client = m_parts.store(
      m_io, cc, [this] { apply(m_state.connected()); }, [this](const nlohmann::json& m) { on_message(m); },
      [this](const std::string& why) { apply(m_state.store_lost(why)); });
  m_client->connect();
  m_io.run();
  if (m_state.exit_code() == 0) return 0;
  throw Error("hpclaunch agent", m_state.exit_message(), "", m_state.exit_code());
}

void ElasticAgent::worker_exited(const ProcessExit& e) {
  WorkerEnd end{e.id, e.exit_code, e.signal, ""};
  // The failed worker's own word (torchrun's error file), for the failure report.
  if (!end.ok())
    end.error = read_error_file(fmt::format("{}/rank_{}/error.json", attempt_dir(), m_assignment.rank_offset + e.id));
  apply(m_state.worker_exited(end));
}

void ElasticAgent::on_message(const nlohmann::json& msg) {
  AgentActions actions;
  try {
    actions = m_state.message(msg);
  } catch (const nlohmann::json::exception& e) {
    log(fmt::format("bad '{}' message from the store: {}", msg.value("type", std::string()), e.what()));
    return;
  }
  apply(actions);
}

void ElasticAgent::apply(const AgentActions& actions) {
  for (const auto& a : actions) {
    switch (a.kind) {
      case AgentAction::send: m_client->send(a.message); break;
      case AgentAction::start_workers:
        try {
          start_workers(a.assignment);
        } catch (const Error& e) {
          apply(m_state.start_failed(e.exit_code(), e.what()));
        }
        break;
      case AgentAction::signal_workers: m_workers->signal(a.signal); break;
      case AgentAction::stop_workers: m_workers->stop(ms(m_opt.grace_s), a.signal); break;
      case AgentAction::record_failure: record_failure(a.failure); break;
      case AgentAction::shutdown_store:
        if (m_server) m_server->shutdown(a.failure);
        break;
      case AgentAction::log: log(a.text); break;
      case AgentAction::finish: finish(); break;
    }
  }
}

std::string ElasticAgent::attempt_dir() const {
  std::string root = m_opt.log_dir.empty() ? m_tmp_dir : m_opt.log_dir;
  return fmt::format("{}/attempt_{}", root, m_assignment.restart_count);
}

void ElasticAgent::start_workers(const Assignment& a) {
  m_assignment = a;
  WorkerLayout layout{m_opt.rdzv_id, m_opt.role, m_opt.nproc, m_opt.max_restarts,
                      omp_threads_per_worker(m_cpus, m_opt.nproc), m_opt.virtual_local_rank, m_opt.use_libuv,
                      m_opt.signals.empty() ? forwarded_signals() : m_opt.signals};
  auto argv = worker_argv(m_opt.command);
  // torchrun's filtered_stdout.log / filtered_stderr.log: one file per attempt for all the workers' tee'd lines.
  struct Files {
    int fd[2] = {-1, -1};
    ~Files() {
      for (int f : fd)
        if (f >= 0) ::close(f);
    }
  } dup_files;  // closed once the workers have their copies
  const std::vector<std::string>* dup_filters[2] = {&m_opt.dup_stdout_filters, &m_opt.dup_stderr_filters};
  for (int st = 0; st < 2; ++st) {
    if (dup_filters[st]->empty()) continue;
    std::error_code ec;
    std::filesystem::create_directories(attempt_dir(), ec);
    std::string path = attempt_dir() + (st == 0 ? "/filtered_stdout.log" : "/filtered_stderr.log");
    dup_files.fd[st] = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (dup_files.fd[st] < 0) log("cannot write " + path + ": " + std::strerror(errno));
  }
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
    s.prefix = line_prefix(m_opt, lr, rank);
    const StreamRoute out = stream_route(m_opt, lr, 0), err = stream_route(m_opt, lr, 1);
    s.console_out = out.console;
    s.console_err = err.console;
    if (!m_opt.log_dir.empty()) {
      if (out.file) s.out_file = dir + "/stdout.log";
      if (err.file) s.err_file = dir + "/stderr.log";
    }
    for (int st = 0; st < 2; ++st)
      if ((st == 0 ? out : err).duplicate) s.dup_filters[st] = *dup_filters[st], s.dup_fd[st] = dup_files.fd[st];
    specs.push_back(std::move(s));
  }
  m_workers->start(specs);
}

void ElasticAgent::finish() {
  m_client->close();
  if (m_server) m_server->stop();
  boost::system::error_code ec;
  m_signals_done = true;
  m_signals.cancel(ec);
  m_signals.clear(ec);  // from here on a signal has its default effect
  m_workers->close();
}

void ElasticAgent::record_failure(const Failure& f) const {
  // Node 0's word (AgentState asks only there): JOBDIR/failure.json, read by `hpclaunch exclude --from-failure`.
  auto dir = env_get(m_base_env, "HPCLAUNCH_JOB_DIR");
  if (!dir || dir->empty()) return;
  if (!write_file_atomic(*dir + "/failure.json", nlohmann::json(f).dump(2) + "\n"))
    log("cannot write " + *dir + "/failure.json");
}

void ElasticAgent::watch_signals() {
  m_signals.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    apply(m_state.signal(sig));
    // A stop signal with no worker running exits at once (finish): waiting again would keep the loop alive.
    if (!m_signals_done) watch_signals();
  });
}

}  // namespace hpclaunch
