#include "agent/elastic_agent.h"

#include <fmt/core.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <filesystem>
#include <future>

#include "agent/agent_log.h"
#include "agent/stack_text.h"
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
          /*step_signals_workers=*/face_step_signals_workers(env), o.nvlink_domain};
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
      m_signals(m_io),
      m_watch({m_opt.hang_timeout_s, m_opt.hang_output, m_opt.hang_startup_s}),
      m_watch_timer(m_io),
      m_timer_tick(m_io) {
  m_base_env.erase("HPCLAUNCH_RDZV_SECRET");  // the workers do not need it
  if (m_opt.secret.empty()) m_opt.secret = random_secret();
}

ElasticAgent::~ElasticAgent() {
  if (m_capture.joinable()) m_capture.join();
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
  ProcessGroupConfig config{"hpclaunch agent", /*stop_others_on_failure=*/true, ms(m_opt.grace_s), {}};
  // A failed worker's last lines of stderr go into the failure report: its exit is reported once they are read.
  config.exit_after_output = true;
  const bool watch_output = m_watch.enabled() && m_opt.hang_output;
  config.on_line = [this, watch_output](int id, int stream, std::string_view line) {
    if (watch_output) m_watch.output(id, ProgressWatch::Clock::now());
    if (stream == 1) m_stderr_tails[id].add(line);
  };
  m_workers = m_parts.workers(
      m_io, config, [this](const ProcessExit& e) { worker_exited(e); }, [this] { apply(m_state.workers_idle()); });
  if (m_opt.log_dir.empty()) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "hpclaunch-agent-XXXXXX").string();
    if (::mkdtemp(tmpl.data())) m_tmp_dir = tmpl;
  }
  int port = m_opt.rdzv_port;
  read_progress_record();
  write_agent_exit();  // none yet: a requeued job's file is the last run's
  if (m_opt.node_rank <= 0) {
    StoreServerConfig sc;
    sc.bind_host = m_opt.rdzv_host;
    sc.port = port;
    sc.secret = m_opt.secret;
    sc.log_host = m_opt.host;
    sc.verbose = m_opt.verbose;
    sc.heartbeat_timeout = ms(m_opt.heartbeat_timeout_s);
    sc.rendezvous = {m_opt.min_nodes, m_opt.max_nodes, m_opt.max_restarts, ms(m_opt.last_call_s),
                     ms(m_opt.join_timeout_s), m_opt.local_addr.empty() ? m_opt.rdzv_host : m_opt.local_addr, 0,
                     m_opt.no_progress_limit, m_start_streak, m_start_reports};
    sc.rendezvous.spares = m_opt.spares;
    sc.on_change = [this] { write_nodes_record(); };
    if (m_opt.node_rank == 0) {
      m_server = std::make_unique<StoreServer>(m_io, sc);
    } else {
      // No node rank given (torchrun's c10d line outside a scheduler): as torchrun's agents, the one that can serve
      // the endpoint (its host is this machine, its port free) is node 0; the others join its store and are
      // numbered by it.
      try {
        m_server = std::make_unique<StoreServer>(m_io, sc);
        m_opt.node_rank = 0;
        m_state = AgentState(state_config(m_opt, m_base_env));
        if (m_opt.verbose) log("serving the rendezvous at the endpoint: this is node 0");
      } catch (const Error&) {
        // Another agent serves it (or it is another machine's): this one joins and gets its node rank there.
      }
    }
    if (m_server) port = m_server->port();
  }
  StoreClientConfig cc{m_opt.rdzv_host, port, m_opt.secret, ms(m_opt.join_timeout_s), ms(m_opt.heartbeat_timeout_s)};
  m_client = m_parts.store(
      m_io, cc, [this] { apply(m_state.connected()); }, [this](const nlohmann::json& m) { on_message(m); },
      [this](const std::string& why) { apply(m_state.store_lost(why)); });
  m_client->connect();
  m_tools = find_stack_tools({std::filesystem::path(m_opt.command.python).parent_path().string()},
                             env_get(m_base_env, "PATH").value_or(""));
  watch_progress();
  serve_file_timer();
  m_io.run();
  write_agent_exit();
  if (m_state.exit_code() == 0) return 0;
  throw Error("hpclaunch agent", m_state.exit_message(), "", m_state.exit_code());
}

void ElasticAgent::worker_exited(const ProcessExit& e) {
  // What the workers wrote since the last look, before a failure goes to the store: an attempt that progressed
  // and then failed within the polling interval is counted as progressed.
  read_progress_files();
  m_watch.exited(e.id);
  m_file_timers.clear(e.pid);
  WorkerEnd end{e.id, e.exit_code, e.signal, "", ""};
  // The failed worker's own word (torchrun's error file), for the failure report; without one (no @record, a
  // native program), its last lines of stderr.
  if (!end.ok()) {
    end.error = read_error_file(fmt::format("{}/rank_{}/error.json", attempt_dir(), m_assignment.rank_offset + e.id));
    if (end.error.empty()) end.stderr_tail = m_stderr_tails[e.id].text();
  }
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
  if (m_opt.node_rank < 0) m_opt.node_rank = a.node_rank;  // numbered by the store (torchrun's c10d line)
  WorkerLayout layout{m_opt.rdzv_id, m_opt.role, m_opt.nproc, m_opt.max_restarts,
                      omp_threads_per_worker(m_cpus, m_opt.nproc), m_opt.virtual_local_rank, m_opt.use_libuv,
                      m_opt.signals.empty() ? forwarded_signals() : m_opt.signals, ""};
  if (m_watch.enabled()) {
    std::error_code ec;
    std::filesystem::create_directories(stacks_dir(), ec);  // torch writes its dump there, but makes no folder
    layout.flight_recorder_prefix = stacks_dir() + "/nccl_trace_rank_";
  }
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
    // hpclaunch.progress(), the Lightning callback and hpclaunch-train write their progress here (poll_progress).
    s.env[k_progress_file_var] = progress_file(lr);
    if (!m_timer_path.empty()) s.env["TORCHELASTIC_TIMER_FILE"] = m_timer_path;  // as torchrun gives it
    std::filesystem::remove(s.env[k_progress_file_var], ec);
    specs.push_back(std::move(s));
  }
  m_progress_seen.assign(specs.size(), {});
  m_stderr_tails.assign(specs.size(), LineTail());
  m_watch.start(m_opt.nproc, ProgressWatch::Clock::now());
  m_pids = m_workers->start(specs);
}

std::string ElasticAgent::progress_file(int local_rank) const {
  return fmt::format("{}/rank_{}/progress", attempt_dir(), m_assignment.rank_offset + local_rank);
}

void ElasticAgent::watch_progress() {
  // A quarter of the timeout, at most 1 s: a hang is seen within the timeout and a quarter.
  const double period = m_watch.enabled() ? std::clamp(m_opt.hang_timeout_s / 4, 0.05, 1.0) : 1.0;
  m_watch_timer.expires_after(ms(period));
  m_watch_timer.async_wait([this](boost::system::error_code ec) {
    if (ec || m_state.finished()) return;
    poll_progress();
    watch_progress();
  });
}

void ElasticAgent::poll_progress() {
  read_progress_files();
  if (m_capturing) return;
  if (auto hang = m_watch.check(ProgressWatch::Clock::now())) record_stacks(*hang);
}

void ElasticAgent::read_progress_files() {
  const auto now = ProgressWatch::Clock::now();
  for (size_t lr = 0; lr < m_progress_seen.size(); ++lr) {
    std::error_code ec;
    const std::string path = progress_file(static_cast<int>(lr));
    auto t = std::filesystem::last_write_time(path, ec);
    if (ec || t == m_progress_seen[lr]) continue;
    m_progress_seen[lr] = t;
    // "STEP" or nothing (a touch); a half-written number is read as no step.
    std::optional<long long> step;
    if (auto text = read_file(path)) {
      try {
        if (!text->empty()) step = std::stoll(*text);
      } catch (const std::exception&) {
      }
    }
    m_watch.report(static_cast<int>(lr), now, step);
  }
  if (m_watch.progressed()) apply(m_state.progressed());
}

std::string ElasticAgent::stacks_dir() const {
  auto job = env_get(m_base_env, "HPCLAUNCH_JOB_DIR");
  if (job && !job->empty()) return fmt::format("{}/stacks/attempt_{}", *job, m_assignment.restart_count);
  return attempt_dir() + "/stacks";
}

void ElasticAgent::record_stacks(const Hang& h) {
  m_capturing = true;
  m_hang_seen = ProgressWatch::Clock::now();
  log(fmt::format("{} for {:.1f} s (--hang-timeout {} s): recording the stacks of this node's workers",
                  h.source == "output" ? "no worker printed a line"
                                       : fmt::format("rank {} made no progress", m_assignment.rank_offset + h.local_rank),
                  h.idle_s, m_opt.hang_timeout_s));
  if (m_capture.joinable()) m_capture.join();
  const std::vector<int> pids = m_pids;
  const std::string dir = stacks_dir();
  const int round = m_assignment.round;
  const StackTools tools = m_tools;
  m_capture = std::thread([this, h, pids, dir, round, tools] {
    std::vector<std::future<WorkerStacks>> each;  // every worker at once: the slowest bounds the wait
    for (int pid : pids) each.push_back(std::async(std::launch::async, [pid, &tools] {
      return capture_worker_stacks(pid, tools);
    }));
    std::vector<WorkerStacks> stacks;
    for (auto& f : each) stacks.push_back(f.get());
    boost::asio::post(m_io, [this, h, round, stacks, dir] { stacks_recorded(h, round, stacks, dir); });
  });
}

void ElasticAgent::stacks_recorded(const Hang& h, int round, const std::vector<WorkerStacks>& stacks,
                                   const std::string& dir) {
  m_capturing = false;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  for (size_t lr = 0; lr < stacks.size(); ++lr) {
    const std::string path = fmt::format("{}/rank_{}.txt", dir, m_assignment.rank_offset + static_cast<int>(lr));
    if (!write_file_atomic(path, stacks[lr].text)) log("cannot write " + path + ": " + std::strerror(errno));
  }
  std::vector<RankSigns> signs;
  for (const auto& w : stacks) signs.push_back({w.stopped_or_blocked, w.waits_for_peers});
  const Hang blamed = m_watch.blame(h, m_hang_seen, signs);
  Failure f;
  f.host = m_opt.host;
  f.node_rank = m_opt.node_rank;
  f.local_rank = blamed.local_rank;
  f.rank = m_assignment.rank_offset + blamed.local_rank;
  f.hang_s = blamed.idle_s;
  f.hang_source = blamed.source;
  if (blamed.local_rank >= 0 && blamed.local_rank < static_cast<int>(stacks.size())) {
    f.frame = stacks[blamed.local_rank].frame;
    f.hang_stopped = stacks[blamed.local_rank].stopped_or_blocked;
    f.hang_waits_for_peers = stacks[blamed.local_rank].waits_for_peers;
  }
  f.stacks = dir;
  // Each hang found, for `hpclaunch status` (record/job_record.h), whether the job then restarts or not.
  nlohmann::json record = {{"summary", describe(f) + "; stacks: " + dir}, {"failure", f}};
  const std::string path = fmt::format("{}/hang-{}.json", dir, m_opt.host);
  if (!write_file_atomic(path, record.dump(2) + "\n")) log("cannot write " + path + ": " + std::strerror(errno));
  if (round != m_assignment.round || !m_state.running()) {
    // The job is already stopping (another node's report came first): what this node saw is still said.
    log("hang: " + describe(f) + "; the job is already stopping its workers");
    return;
  }
  apply(m_state.hung(f));
}

int ElasticAgent::local_rank_of(int pid) const {
  auto it = std::find(m_pids.begin(), m_pids.end(), pid);
  return it == m_pids.end() ? -1 : static_cast<int>(it - m_pids.begin());
}

void ElasticAgent::serve_file_timer() {
  auto enabled = env_get(m_base_env, "TORCHELASTIC_ENABLE_FILE_TIMER");
  if (!enabled || *enabled != "1") return;  // torchrun's test: the value 1, nothing else
  auto path = env_get(m_base_env, "TORCHELASTIC_TIMER_FILE");
  m_timer_path = path && !path->empty()
                     ? *path
                     : fmt::format("{}/watchdog_timer_{}", m_tmp_dir.empty() ? std::filesystem::temp_directory_path().string()
                                                                             : m_tmp_dir, random_secret().substr(0, 16));
  ::unlink(m_timer_path.c_str());
  if (::mkfifo(m_timer_path.c_str(), 0600) != 0)
    throw failure("TORCHELASTIC_TIMER_FILE", fmt::format("cannot make the file timer's pipe {}: {}", m_timer_path,
                                                         std::strerror(errno)),
                  "give a path in a folder you can write, or unset TORCHELASTIC_ENABLE_FILE_TIMER");
  int reader = ::open(m_timer_path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  m_timer_writer = ::open(m_timer_path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (reader < 0 || m_timer_writer < 0)
    throw failure("TORCHELASTIC_TIMER_FILE", fmt::format("cannot open {}: {}", m_timer_path, std::strerror(errno)));
  m_timer_pipe = std::make_unique<boost::asio::posix::stream_descriptor>(m_io, reader);
  if (m_opt.verbose) log("serving torchrun's file timer at " + m_timer_path);
  read_file_timer();
  reap_file_timers();
}

void ElasticAgent::read_file_timer() {
  m_timer_pipe->async_read_some(boost::asio::buffer(m_timer_buf), [this](boost::system::error_code ec, size_t n) {
    if (ec) return;  // closed (finish)
    m_timer_lines.feed(std::string_view(m_timer_buf, n), [this](std::string_view line) {
      std::string err;
      auto r = parse_timer_request(line, &err);
      if (!r) {
        log(fmt::format("file timer: a line that is {}: {}", err, line.substr(0, 200)));
        return;
      }
      m_file_timers.add(*r);
      // A worker's timer request is a sign of progress too.
      if (int lr = local_rank_of(r->pid); lr >= 0) m_watch.report(lr, ProgressWatch::Clock::now());
    });
    read_file_timer();
  });
}

void ElasticAgent::reap_file_timers() {
  m_timer_tick.expires_after(std::chrono::milliseconds(100));  // torchrun's max_interval
  m_timer_tick.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (const auto& r : m_file_timers.expired(now)) {
      const int lr = local_rank_of(r.pid);
      const int rank = lr >= 0 ? m_assignment.rank_offset + lr : -1;
      log(fmt::format("file timer: scope '{}' of {} expired {:.1f} s ago: killing it with {} (torchrun's watchdog)",
                      r.scope, rank >= 0 ? fmt::format("rank {} (pid {})", rank, r.pid) : fmt::format("pid {}", r.pid),
                      r.late_s, signal_name(r.signal)));
      ::kill(r.pid, r.signal);
    }
    reap_file_timers();
  });
}

void ElasticAgent::close_file_timer() {
  if (m_timer_path.empty()) return;
  m_timer_tick.cancel();
  boost::system::error_code ec;
  if (m_timer_pipe) m_timer_pipe->close(ec);
  if (m_timer_writer >= 0) ::close(m_timer_writer);
  m_timer_writer = -1;
  ::unlink(m_timer_path.c_str());
  m_timer_path.clear();
}

void ElasticAgent::read_progress_record() {
  // Node 0 keeps the attempts without progress and the best step across a requeue (no progress, no requeue);
  // every node's watch starts from that step.
  auto job = env_get(m_base_env, "HPCLAUNCH_JOB_DIR");
  if (!job || job->empty()) return;
  auto text = read_file(*job + "/progress.json");
  if (!text) return;
  auto j = nlohmann::json::parse(*text, nullptr, false);
  if (!j.is_object()) return;
  m_start_streak = j.value("attempts_without_progress", 0);
  m_start_reports = j.value("reports", false);
  std::optional<long long> best;
  if (auto b = j.find("best_step"); b != j.end() && b->is_number_integer()) best = b->get<long long>();
  m_watch.seed(m_start_reports, best);
}

void ElasticAgent::write_progress_record() const {
  auto job = env_get(m_base_env, "HPCLAUNCH_JOB_DIR");
  if (!m_server || !job || job->empty()) return;
  nlohmann::json j = {{"attempts_without_progress", m_server->state().no_progress_streak()},
                      {"reports", m_server->state().reports()}};
  if (auto best = m_watch.best_step()) j["best_step"] = *best;
  if (!write_file_atomic(*job + "/progress.json", j.dump() + "\n")) log("cannot write " + *job + "/progress.json");
}

// With spares, a lost node's agent fails while the job goes on, and srun's status is the highest of its tasks':
// the job's script takes node 0's (JOBDIR/agent-exit) instead. Removed at the start, written at the end.
void ElasticAgent::write_agent_exit() const {
  auto job = env_get(m_base_env, "HPCLAUNCH_JOB_DIR");
  if (m_opt.node_rank != 0 || m_opt.spares == 0 || !job || job->empty()) return;
  const std::string path = *job + "/agent-exit";
  if (!m_state.finished()) {
    std::error_code ec;
    std::filesystem::remove(path, ec);
  } else if (!write_file_atomic(path, std::to_string(m_state.exit_code()) + "\n")) {
    log("cannot write " + path);
  }
}

// Node 0's record of the spares, for `hpclaunch status`: who waits, and which spare took whose place. Looked at
// after each change of the rendezvous (the store's on_change), written when it differs.
void ElasticAgent::write_nodes_record() {
  auto job = env_get(m_base_env, "HPCLAUNCH_JOB_DIR");
  if (!m_server || m_opt.spares == 0 || !job || job->empty()) return;
  nlohmann::json replaced = nlohmann::json::array();
  for (const auto& r : m_server->state().replacements()) replaced.push_back(describe(r));
  nlohmann::json j = {{"spares", m_opt.spares}, {"standby", m_server->state().standby()}, {"replaced", replaced}};
  std::string text = j.dump(2) + "\n";
  if (text == m_nodes_record) return;
  if (!write_file_atomic(*job + "/nodes.json", text)) log("cannot write " + *job + "/nodes.json");
  m_nodes_record = std::move(text);
}

void ElasticAgent::finish() {
  m_client->close();
  write_progress_record();
  m_watch_timer.cancel();
  close_file_timer();
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
  nlohmann::json j = f;
  j["summary"] = describe(f) + (f.no_progress > 0 ? "; " + no_progress_line(f.no_progress) : "");
  if (!write_file_atomic(*dir + "/failure.json", j.dump(2) + "\n"))
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
