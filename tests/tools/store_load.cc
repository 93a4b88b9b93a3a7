// A store load generator: one process plays K agents as light clients (StoreClient, the real wire protocol and
// secret) against a real rendezvous store (StoreServer in a forked child, so its CPU and memory are its own).
// Checks correctness at scale (distinct stable ranks, a lost agent noticed, a second round) and prints timings
// as one JSON line; exit 1 when a check fails, 2 on bad input or too few file descriptors.
#include <fmt/core.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "agent/protocol.h"
#include "agent/store_client.h"
#include "agent/store_server.h"

using namespace hpclaunch;
using Steady = std::chrono::steady_clock;

namespace {

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "hpclaunch: error: store_load: " << what << "\n";
  std::exit(2);
}

double ms_between(Steady::time_point a, Steady::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The store's CPU seconds (user + system) and resident memory, from /proc.
double cpu_seconds(pid_t pid) {
  std::ifstream f(fmt::format("/proc/{}/stat", pid));
  std::string s((std::istreambuf_iterator<char>(f)), {});
  std::istringstream in(s.substr(s.rfind(')') + 2));
  std::string field;
  unsigned long long ut = 0, st = 0;
  for (int i = 3; i <= 15 && in >> field; ++i) {
    if (i == 14) ut = std::stoull(field);
    if (i == 15) st = std::stoull(field);
  }
  return static_cast<double>(ut + st) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double rss_mib(pid_t pid) {
  std::ifstream f(fmt::format("/proc/{}/statm", pid));
  long size = 0, resident = 0;
  f >> size >> resident;
  return static_cast<double>(resident) * static_cast<double>(::sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// The clients' process and the store's (forked, same limit) each hold one descriptor per client, plus a few.
void ensure_descriptors(int clients) {
  rlimit lim{};
  ::getrlimit(RLIMIT_NOFILE, &lim);
  rlim_t need = static_cast<rlim_t>(clients) + 64;
  if (lim.rlim_cur < need) {
    // The soft limit up to the hard one; past it only with CAP_SYS_RESOURCE (root), else the error below.
    rlimit want{std::max(need, lim.rlim_cur), std::max(need, lim.rlim_max)};
    if (::setrlimit(RLIMIT_NOFILE, &want) != 0 && lim.rlim_max >= need) {
      lim.rlim_cur = lim.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &lim);
    }
  }
  ::getrlimit(RLIMIT_NOFILE, &lim);
  if (lim.rlim_cur < need)
    usage_error(fmt::format("--clients {} needs {} open files, the limit is {} (hard {}); raise it with "
                            "'ulimit -n {}' as root or give fewer clients",
                            clients, need, lim.rlim_cur, lim.rlim_max, need));
}

struct Player {
  std::unique_ptr<StoreClient> client;
  int node_rank = 0;
  int round = -1;
  int group_rank = -1;
  int first_group_rank = -1;
  bool restarted = false;
};

}  // namespace

int main(int argc, char** argv) {
  int clients = 2000;
  int timeout_ms = 3000;
  double steady_s = 2.0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--clients") clients = std::stoi(value());
      else if (a == "--heartbeat-timeout-ms") timeout_ms = std::stoi(value());
      else if (a == "--steady-s") steady_s = std::stod(value());
      else usage_error("unknown argument '" + a + "'; use --clients K --heartbeat-timeout-ms MS --steady-s S");
    } catch (const std::logic_error&) {
      usage_error(a + " wants a number");
    }
  }
  if (clients < 3) usage_error("--clients must be at least 3");
  if (steady_s * 1000 >= timeout_ms) usage_error("--steady-s must be shorter than --heartbeat-timeout-ms");
  ensure_descriptors(clients);
  const std::string secret = random_secret();

  // The store, in its own process; it copies its count of lines read here every 10 ms.
  auto* store_lines = static_cast<std::atomic<uint64_t>*>(
      ::mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (store_lines == MAP_FAILED) return 2;
  new (store_lines) std::atomic<uint64_t>(0);
  int fds[2];
  if (::pipe(fds) != 0) return 2;
  pid_t store = ::fork();
  if (store == 0) {
    ::close(fds[0]);
    asio::io_context io;
    StoreServerConfig sc;
    sc.bind_host = "127.0.0.1";
    sc.secret = secret;
    sc.log_host = "store";
    sc.heartbeat_timeout = std::chrono::milliseconds(timeout_ms);
    sc.rendezvous.min_nodes = 1;
    sc.rendezvous.max_nodes = clients;
    sc.rendezvous.max_restarts = 3;
    sc.rendezvous.last_call = std::chrono::seconds(600);
    sc.rendezvous.master_addr = "127.0.0.1";
    StoreServer server(io, sc);
    int port = server.port();
    if (::write(fds[1], &port, sizeof port) != sizeof port) std::_Exit(3);
    ::close(fds[1]);
    asio::steady_timer count(io);
    std::function<void()> publish = [&] {
      store_lines->store(server.lines_read());
      count.expires_after(std::chrono::milliseconds(10));
      count.async_wait([&](boost::system::error_code ec) {
        if (!ec) publish();
      });
    };
    publish();
    io.run();
    std::_Exit(0);
  }
  ::close(fds[1]);
  int port = 0;
  if (::read(fds[0], &port, sizeof port) != sizeof port) {
    std::cerr << "store_load: the store did not start\n";
    return 1;
  }
  auto finish = [&](int rc) {
    ::kill(store, SIGKILL);
    ::waitpid(store, nullptr, 0);
    return rc;
  };

  asio::io_context io;
  std::vector<Player> players(static_cast<size_t>(clients - 1));
  // The last node is a raw connection that echoes heartbeats until told to go silent: a hung node.
  bool silent = false;
  std::shared_ptr<Connection> hung;
  MessageChannel hung_channel(std::make_shared<MessageKey>(secret), Side::agent, random_nonce());

  int connected = 0, assigned = 0, restarts = 0, reassigned = 0, lost = 0;
  Steady::time_point t_start = Steady::now(), t_last_join{}, t_hung_last = t_start, t_assigned{}, t_silent{}, t_first_restart{},
                     t_reassigned{};
  std::string failure;
  auto check = [&](bool ok, const std::string& what) {
    if (!ok && failure.empty()) failure = what;
  };

  auto join_msg = [](int node_rank) {
    return nlohmann::json{{"type", "join"}, {"node_rank", node_rank}, {"host", fmt::format("n{}", node_rank)},
                          {"nproc", 1}};
  };
  auto joined = [&] {
    if (++connected == clients) t_last_join = Steady::now();
  };
  StoreClientConfig cc;
  cc.host = "127.0.0.1";
  cc.port = port;
  cc.secret = secret;
  cc.connect_timeout = std::chrono::seconds(60);
  cc.heartbeat_timeout = std::chrono::milliseconds(timeout_ms);
  for (size_t i = 0; i < players.size(); ++i) {
    Player& p = players[i];
    p.node_rank = static_cast<int>(i);
    p.client = std::make_unique<StoreClient>(
        io, cc,
        [&, i] {
          players[i].client->send(join_msg(players[i].node_rank));
          joined();
        },
        [&, i](const nlohmann::json& msg) {
          Player& q = players[i];
          const std::string type = msg.at("type");
          if (type == "assign") {
            q.round = msg.at("round");
            q.group_rank = msg.at("group_rank");
            if (q.round == 0) {
              q.first_group_rank = q.group_rank;
              if (++assigned == clients - 1) t_assigned = Steady::now();
            } else {
              check(q.group_rank == q.first_group_rank,
                    fmt::format("node {} had group rank {} then {}", q.node_rank, q.first_group_rank, q.group_rank));
              if (++reassigned == clients - 1) {
                t_reassigned = Steady::now();
                io.stop();
              }
            }
          } else if (type == "restart") {
            if (restarts++ == 0) t_first_restart = Steady::now();
            q.restarted = true;
            q.client->send(join_msg(q.node_rank));
          } else {
            check(false, fmt::format("node {} got an unexpected '{}'", q.node_rank, type));
          }
        },
        [&](const std::string& why) {
          ++lost;
          check(false, "a client lost the store: " + why);
        });
  }
  for (auto& p : players) p.client->connect();
  {
    asio::ip::tcp::socket s(io);
    s.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
    hung = std::make_shared<Connection>(std::move(s));
    hung->start(
        [&](const std::string& line) {
          if (!hung_channel.ready()) {
            if (!hung_channel.take_hello(line)) return check(false, "no hello to the hung node");
            hung->send(hung_channel.seal(join_msg(clients - 1)));
            return joined();
          }
          nlohmann::json msg;
          if (hung_channel.open(line, &msg) != DecodeResult::ok) return check(false, "bad line to the hung node");
          if (msg["type"] == "hb" && !silent) {
            hung->send(hung_channel.seal(nlohmann::json{{"type", "hb"}}));
            t_hung_last = Steady::now();
          }
        },
        [&](const std::string&) {});
    hung->send(hung_channel.hello());
  }

  // Phases, driven by a poll timer: joined -> steady heartbeats -> silent node -> restart round.
  asio::steady_timer poll(io);
  double cpu0 = 0, steady_cpu = 0, steady_rss = 0, lines0 = 0, steady_lines = 0, steady_line_count = 0, steady_cpu_s = 0;
  Steady::time_point t_steady{};
  std::function<void()> tick = [&] {
    poll.expires_after(std::chrono::milliseconds(10));
    poll.async_wait([&](boost::system::error_code ec) {
      if (ec) return;
      auto now = Steady::now();
      if (!failure.empty() || ms_between(t_start, now) > 120000) {
        check(false, "timed out");
        io.stop();
        return;
      }
      if (assigned == clients - 1 && t_steady == Steady::time_point{}) {
        t_steady = now;
        cpu0 = cpu_seconds(store);
        lines0 = static_cast<double>(store_lines->load());
      } else if (t_steady != Steady::time_point{} && !silent && ms_between(t_steady, now) >= steady_s * 1000) {
        steady_cpu_s = cpu_seconds(store) - cpu0;
        steady_cpu = steady_cpu_s / (ms_between(t_steady, now) / 1000.0);
        steady_line_count = static_cast<double>(store_lines->load()) - lines0;
        steady_lines = steady_line_count / (ms_between(t_steady, now) / 1000.0);
        steady_rss = rss_mib(store);
        silent = true;
        t_silent = t_hung_last;  // the store's timeout runs from the last line it read from the hung node
      }
      tick();
    });
  };
  tick();
  io.run();

  // Correctness: distinct ranks 0..K-2 in both rounds, same rank each time, everyone restarted once.
  std::set<int> ranks;
  for (const auto& p : players) {
    ranks.insert(p.first_group_rank);
    check(p.first_group_rank == p.node_rank,
          fmt::format("node {} got group rank {} in round 0", p.node_rank, p.first_group_rank));
    check(p.restarted && p.round == 1, fmt::format("node {} did not join round 1", p.node_rank));
  }
  check(static_cast<int>(ranks.size()) == clients - 1, "group ranks are not distinct");
  check(lost == 0, "clients lost the store");
  double store_rss = rss_mib(store);
  if (!failure.empty()) {
    std::cerr << "store_load: FAILED: " << failure << "\n";
    return finish(1);
  }
  std::cout << nlohmann::json{{"clients", clients},
                              {"heartbeat_timeout_ms", timeout_ms},
                              {"join_ms", ms_between(t_start, t_last_join)},
                              {"round_close_after_last_join_ms", ms_between(t_last_join, t_assigned)},
                              {"steady_store_cpu_percent", steady_cpu * 100.0},
                              {"steady_store_rss_mib", steady_rss},
                              // Heartbeats read a second, and the store's CPU per heartbeat read (the one it sends
                              // back included): unlike the percentage, not capped by the store's share of a
                              // loaded machine's cores.
                              {"steady_store_lines_per_s", steady_lines},
                              {"steady_store_cpu_us_per_line", steady_line_count > 0 ? steady_cpu_s * 1e6 / steady_line_count : 0.0},
                              {"lost_noticed_after_last_heartbeat_ms", ms_between(t_silent, t_first_restart)},
                              {"lost_noticed_late_ms", ms_between(t_silent, t_first_restart) - timeout_ms},
                              {"restart_round_ms", ms_between(t_first_restart, t_reassigned)},
                              {"store_rss_mib_end", store_rss}}
                   .dump()
            << "\n";
  return finish(0);
}
