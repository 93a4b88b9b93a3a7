// ElasticAgent's run loop (agent/elastic_agent.cc) with a fake store link and a fake worker group: the real
// AgentState, signal handling, attempt directories, worker environments and error-file reading, on one
// io_context, with the store's answers and the workers' ends scripted. No process and no socket: milliseconds.
// The real store and real workers are t04xx's.
#include <doctest/doctest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <stdlib.h>

#include "agent/elastic_agent.h"
#include "util/error.h"

namespace elastic_agent_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

// How a worker of an attempt ends: an exit code or a signal, after writing an error file; nullopt: it runs until
// it is stopped.
struct End {
  int exit_code = 0;
  int signal = 0;
  std::string error_json;  // written to its TORCHELASTIC_ERROR_FILE first
};

struct Scenario;

class FakeStore : public StoreLink {
 public:
  FakeStore(asio::io_context& io, Scenario& sc, StoreClient::OnConnected c, StoreClient::OnMessage m,
            StoreClient::OnLost l)
      : m_io(io), m_sc(sc), m_connected(std::move(c)), m_message(std::move(m)), m_lost(std::move(l)) {}
  void connect() override {
    asio::post(m_io, [this] {
      if (!m_closed) m_connected();
    });
  }
  void send(const nlohmann::json& msg) override;
  void close() override { m_closed = true; }
  void deliver(nlohmann::json msg) {
    asio::post(m_io, [this, msg = std::move(msg)] {
      if (!m_closed) m_message(msg);
    });
  }
  void lose(std::string why) {
    asio::post(m_io, [this, why = std::move(why)] {
      if (!m_closed) m_lost(why);
    });
  }

 private:
  asio::io_context& m_io;
  Scenario& m_sc;
  StoreClient::OnConnected m_connected;
  StoreClient::OnMessage m_message;
  StoreClient::OnLost m_lost;
  bool m_closed = false;
};

class FakeWorkers : public WorkerGroup {
 public:
  FakeWorkers(asio::io_context& io, Scenario& sc, ProcessGroup::OnExit e, ProcessGroup::OnIdle i)
      : m_io(io), m_sc(sc), m_exit(std::move(e)), m_idle(std::move(i)) {}
  std::vector<int> start(const std::vector<ProcessSpec>& specs) override;
  void signal(int sig) override;
  void stop(std::chrono::milliseconds, int sig) override;
  void close() override { m_closed = true; }
  void end(int id, int exit_code, int sig) {
    asio::post(m_io, [this, id, exit_code, sig] {
      if (m_closed || !m_running.erase(id)) return;
      m_exit(ProcessExit{id, 1000 + id, exit_code, sig});
      if (m_running.empty()) m_idle();
    });
  }

 private:
  asio::io_context& m_io;
  Scenario& m_sc;
  ProcessGroup::OnExit m_exit;
  ProcessGroup::OnIdle m_idle;
  std::set<int> m_running;
  bool m_closed = false;
};

struct Scenario {
  // The store's answer to what the agent sent.
  std::function<void(const nlohmann::json& sent, FakeStore& store)> store;
  // How local rank `lr` of attempt `attempt` (0, 1, ...) ends.
  std::function<std::optional<End>(int attempt, int lr)> worker = [](int, int) { return End{}; };
  // Once an attempt's workers are started.
  std::function<void(int attempt, FakeStore& store)> started = [](int, FakeStore&) {};
  // When the workers are sent a signal (not a stop): how they answer it.
  std::function<void(int sig, FakeWorkers& workers)> signalled = [](int, FakeWorkers&) {};
  FakeStore* the_store = nullptr;
  std::vector<nlohmann::json> sent;
  std::vector<std::vector<ProcessSpec>> starts;
  std::vector<int> signals, stops;  // what the workers were sent: signal(), stop()
};

void FakeStore::send(const nlohmann::json& msg) {
  m_sc.sent.push_back(msg);
  if (m_sc.store) m_sc.store(msg, *this);
}

std::vector<int> FakeWorkers::start(const std::vector<ProcessSpec>& specs) {
  const int attempt = static_cast<int>(m_sc.starts.size());
  m_sc.starts.push_back(specs);
  std::vector<int> pids;
  for (const auto& s : specs) {
    m_running.insert(s.id);
    pids.push_back(1000 + s.id);
  }
  for (const auto& s : specs) {
    auto end = m_sc.worker(attempt, s.id);
    if (!end) continue;
    if (!end->error_json.empty()) std::ofstream(s.env.at("TORCHELASTIC_ERROR_FILE")) << end->error_json;
    this->end(s.id, end->exit_code, end->signal);
  }
  m_sc.started(attempt, *m_sc.the_store);
  return pids;
}

void FakeWorkers::signal(int sig) {
  m_sc.signals.push_back(sig);
  m_sc.signalled(sig, *this);
}

void FakeWorkers::stop(std::chrono::milliseconds, int sig) {
  m_sc.stops.push_back(sig);
  for (int id : std::set<int>(m_running)) end(id, 0, sig);
}

AgentParts fake_parts(Scenario& sc) {
  return {[&sc](asio::io_context& io, StoreClientConfig, StoreClient::OnConnected c, StoreClient::OnMessage m,
                StoreClient::OnLost l) -> std::unique_ptr<StoreLink> {
            auto store = std::make_unique<FakeStore>(io, sc, std::move(c), std::move(m), std::move(l));
            sc.the_store = store.get();
            return store;
          },
          [&sc](asio::io_context& io, ProcessGroupConfig, ProcessGroup::OnExit e,
                ProcessGroup::OnIdle i) -> std::unique_ptr<WorkerGroup> {
            return std::make_unique<FakeWorkers>(io, sc, std::move(e), std::move(i));
          }};
}

nlohmann::json assign(int round, int nodes = 2) {
  return {{"type", "assign"}, {"round", round},           {"group_rank", 1},           {"group_world_size", nodes},
          {"rank_offset", 2}, {"world_size", 2 * nodes}, {"restart_count", round}, {"master_addr", "n1"},
          {"master_port", 30001}};
}

// A store that assigns each round joined, finishes a round done, and restarts after a failure while `restarts`
// are left (then aborts with it).
std::function<void(const nlohmann::json&, FakeStore&)> plain_store(int restarts) {
  return [restarts](const nlohmann::json& m, FakeStore& store) {
    const std::string type = m.at("type");
    if (type == "join") store.deliver(assign(m.at("round")));
    if (type == "done") store.deliver({{"type", "finish"}});
    if (type == "shutdown")  // as the real store: every agent is told to stop, with the reason
      store.deliver({{"type", "abort"}, {"failure", m.at("failure")}, {"restart_count", 0}});
    if (type == "failed") {
      const int round = m.at("round");
      if (round < restarts)
        store.deliver({{"type", "restart"}, {"round", round + 1}});
      else
        store.deliver({{"type", "abort"}, {"failure", m.at("failure")}, {"restart_count", round}});
    }
  };
}

struct Outcome {
  int exit_code = 0;
  std::string message;
};

struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "elastic-agent-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()));
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

Outcome run(Scenario& sc, const std::string& log_dir, int max_restarts = 1) {
  AgentOptions o;
  o.host = "n2";
  o.node_rank = 1;  // not node 0: no store server in this process
  o.min_nodes = 1;
  o.max_nodes = 2;
  o.nproc = 2;
  o.max_restarts = max_restarts;
  o.rdzv_host = "n1";
  o.rdzv_port = 29400;
  o.secret = "s";
  o.grace_s = 1;
  o.log_dir = log_dir;
  o.command.args = {"true"};
  o.command.no_python = true;
  ElasticAgent agent(o, {{"PATH", "/usr/bin:/bin"}}, 2, fake_parts(sc));
  try {
    return {agent.run(), ""};
  } catch (const Error& e) {
    return {e.exit_code(), e.what()};
  }
}

std::vector<std::string> types(const Scenario& sc) {
  std::vector<std::string> t;
  for (const auto& m : sc.sent) t.push_back(m.at("type"));
  return t;
}

}  // namespace

TEST_SUITE_BEGIN("elastic agent loop");

TEST_CASE("the loop joins, runs its workers with their environment, reports done and ends with 0 on finish") {
  TempDir dir;
  Scenario sc;
  sc.store = plain_store(0);
  Outcome out = run(sc, dir.path);
  CHECK(out.exit_code == 0);
  CHECK(types(sc) == std::vector<std::string>{"join", "done"});
  REQUIRE(sc.starts.size() == 1);
  REQUIRE(sc.starts[0].size() == 2);
  CHECK(sc.starts[0][1].env.at("RANK") == "3");
  CHECK(sc.starts[0][1].env.at("WORLD_SIZE") == "4");
  CHECK(sc.starts[0][1].env.at("TORCHELASTIC_ERROR_FILE") == dir.path + "/attempt_0/rank_3/error.json");
}

TEST_CASE("a failing worker: its error file goes to the store, the others stop, the next round runs") {
  TempDir dir;
  Scenario sc;
  sc.store = plain_store(1);
  sc.worker = [](int attempt, int lr) -> std::optional<End> {
    if (attempt == 0 && lr == 1) return End{7, 0, R"({"message": {"message": "ValueError: rank broke"}})"};
    if (attempt == 0) return std::nullopt;  // runs until stopped
    return End{};
  };
  Outcome out = run(sc, dir.path);
  CHECK(out.exit_code == 0);
  CHECK(types(sc) == std::vector<std::string>{"join", "failed", "join", "done"});
  Failure f = sc.sent[1].at("failure").get<Failure>();
  CHECK(f.rank == 3);
  CHECK(f.exit_code == 7);
  CHECK(f.error == "ValueError: rank broke");
  CHECK(sc.stops == std::vector<int>{SIGTERM});
  REQUIRE(sc.starts.size() == 2);
  CHECK(sc.starts[1][0].env.at("TORCHELASTIC_RESTART_COUNT") == "1");
  CHECK(sc.starts[1][0].env.at("TORCHELASTIC_ERROR_FILE") == dir.path + "/attempt_1/rank_2/error.json");
}

TEST_CASE("restarts run out: the store's abort ends the loop with 1 and the root cause, error file included") {
  TempDir dir;
  Scenario sc;
  sc.store = plain_store(0);
  sc.worker = [](int, int lr) -> std::optional<End> {
    if (lr == 0) return End{0, SIGSEGV, R"({"message": "segfault in the loader"})"};
    return std::nullopt;
  };
  Outcome out = run(sc, dir.path, 0);
  CHECK(out.exit_code == 1);
  CHECK(out.message.find("root cause: rank 2 (local rank 0) on n2 was killed by SIGSEGV") != std::string::npos);
  CHECK(out.message.find("segfault in the loader") != std::string::npos);
  CHECK(sc.starts.size() == 1);
  CHECK(types(sc) == std::vector<std::string>{"join", "failed"});
}

TEST_CASE("a peer joining late: the store's restart stops healthy workers and the agent joins the bigger round") {
  TempDir dir;
  Scenario sc;
  sc.store = [](const nlohmann::json& m, FakeStore& store) {
    if (m.at("type") == "join") store.deliver(assign(m.at("round"), m.at("round") == 0 ? 1 : 2));
    if (m.at("type") == "done") store.deliver({{"type", "finish"}});
  };
  sc.worker = [](int attempt, int) -> std::optional<End> {
    if (attempt == 0) return std::nullopt;
    return End{};
  };
  sc.started = [](int attempt, FakeStore& store) {
    if (attempt == 0) store.deliver({{"type", "restart"}, {"round", 1}});  // the late peer arrived
  };
  Outcome out = run(sc, dir.path);
  CHECK(out.exit_code == 0);
  CHECK(types(sc) == std::vector<std::string>{"join", "join", "done"});
  CHECK(sc.sent[1].at("round") == 1);
  CHECK(sc.stops == std::vector<int>{SIGTERM});
  REQUIRE(sc.starts.size() == 2);
  CHECK(sc.starts[0][0].env.at("WORLD_SIZE") == "2");
  CHECK(sc.starts[1][0].env.at("WORLD_SIZE") == "4");
}

TEST_CASE("a signal: forwarded as the stop, told to the store, the loop ends with 128 + signal") {
  TempDir dir;
  Scenario sc;
  sc.store = plain_store(0);
  sc.worker = [](int, int) -> std::optional<End> { return std::nullopt; };
  sc.started = [](int, FakeStore&) { ::raise(SIGHUP); };  // caught by the agent's signal set, as from a scheduler
  Outcome out = run(sc, dir.path);
  CHECK(out.exit_code == 128 + SIGHUP);
  CHECK(out.message.find("stopped: the agent on n2 (node 1) got SIGHUP") != std::string::npos);
  CHECK(types(sc) == std::vector<std::string>{"join", "shutdown"});
  CHECK(sc.stops == std::vector<int>{SIGHUP});
}

TEST_CASE("USR1 with restarts left: the workers save and exit 99; no restart in place, the loop ends with 99") {
  // A Slurm script relays its warning to agents started with --max-restarts: the workers' exit 99 ("saved,
  // requeue me") is not a failure to restart from, or the job would train on into the kill at its time limit.
  TempDir dir;
  Scenario sc;
  sc.store = plain_store(1000);
  sc.worker = [](int attempt, int) -> std::optional<End> {
    if (attempt == 0) return std::nullopt;  // runs until warned
    return End{};  // a restart in place (the old behaviour) would train to the end
  };
  sc.started = [](int attempt, FakeStore&) {
    if (attempt == 0) ::raise(SIGUSR1);
  };
  sc.signalled = [](int sig, FakeWorkers& workers) {
    if (sig != SIGUSR1) return;
    for (int lr : {0, 1}) workers.end(lr, k_exit_requeue, 0);  // the step finished, rank 0 saved
  };
  Outcome out = run(sc, dir.path, 1000);
  CHECK(out.exit_code == 99);
  CHECK(out.message.find("requeue: rank 2 (local rank 0) on n2 exited with code 99 (saved, requeue me)") !=
        std::string::npos);
  CHECK(sc.signals == std::vector<int>{SIGUSR1});
  CHECK(sc.starts.size() == 1);
  REQUIRE(types(sc) == std::vector<std::string>{"join", "shutdown"});
  CHECK(sc.sent[1].at("failure").get<Failure>().exit_code == 99);
}

TEST_CASE("the store going away: the workers stop and the loop ends with 1, naming the store") {
  TempDir dir;
  Scenario sc;
  sc.store = plain_store(0);
  sc.worker = [](int, int) -> std::optional<End> { return std::nullopt; };
  sc.started = [](int, FakeStore& store) { store.lose("the connection closed"); };
  Outcome out = run(sc, dir.path);
  CHECK(out.exit_code == 1);
  CHECK(out.message.find("lost the rendezvous store at n1:29400 (the node-0 agent): the connection closed") !=
        std::string::npos);
  CHECK(sc.stops == std::vector<int>{SIGTERM});
  CHECK(types(sc) == std::vector<std::string>{"join"});
}

TEST_SUITE_END();

}  // namespace elastic_agent_test
