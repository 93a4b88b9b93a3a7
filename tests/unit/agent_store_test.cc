#include <doctest/doctest.h>

#include <algorithm>
#include <optional>
#include <set>

#include "agent/store_client.h"
#include "agent/store_server.h"
#include "runtime/rendezvous.h"
#include "util/file.h"

namespace agent_store_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using namespace std::chrono_literals;

namespace {

StoreServerConfig server_config(int nodes) {
  StoreServerConfig c;
  c.bind_host = "127.0.0.1";
  c.secret = "s3cret";
  c.log_host = "test";
  c.rendezvous.min_nodes = c.rendezvous.max_nodes = nodes;
  c.rendezvous.master_addr = "127.0.0.1";
  return c;
}

// One agent's side: joins as `node_rank` once connected and keeps what the store says.
struct TestAgent {
  TestAgent(asio::io_context& io, int port, int node_rank, std::string secret)
      : client(io, StoreClientConfig{"127.0.0.1", port, std::move(secret), 5000ms, 5000ms},
               [this, node_rank] {
                 client.send({{"type", "join"}, {"node_rank", node_rank}, {"host", "h"}, {"nproc", 2}, {"round", 0}});
               },
               [this](const nlohmann::json& m) { messages.push_back(m); },
               [this](const std::string& why) { lost = why; }) {}
  StoreClient client;
  std::vector<nlohmann::json> messages;
  std::optional<std::string> lost;
};

// Runs the loop until `done` (bounded: a broken store fails the checks instead of hanging).
template <class Pred>
void run_until(asio::io_context& io, Pred done) {
  auto give_up = std::chrono::steady_clock::now() + 10s;
  while (!done() && std::chrono::steady_clock::now() < give_up) io.run_one_for(100ms);
}

}  // namespace

TEST_SUITE_BEGIN("agent store");

TEST_CASE("two agents over loopback get their assignments from the store") {
  asio::io_context io;
  StoreServer server(io, server_config(2));
  TestAgent a(io, server.port(), 0, "s3cret"), b(io, server.port(), 1, "s3cret");
  a.client.connect();
  b.client.connect();
  run_until(io, [&] { return !a.messages.empty() && !b.messages.empty(); });
  REQUIRE(a.messages.size() >= 1);
  REQUIRE(b.messages.size() >= 1);
  CHECK(a.messages[0]["type"] == "assign");
  CHECK(a.messages[0]["group_rank"] == 0);
  CHECK(b.messages[0]["group_rank"] == 1);
  CHECK(b.messages[0]["rank_offset"] == 2);
  CHECK(b.messages[0]["world_size"] == 4);
  CHECK(a.messages[0]["master_port"] == b.messages[0]["master_port"]);
  CHECK_FALSE(a.lost);
}

TEST_CASE("a peer with the wrong secret is refused and told nothing") {
  asio::io_context io;
  StoreServer server(io, server_config(2));
  TestAgent good(io, server.port(), 0, "s3cret"), bad(io, server.port(), 1, "guess");
  good.client.connect();
  bad.client.connect();
  run_until(io, [&] { return bad.lost.has_value(); });
  REQUIRE(bad.lost);
  CHECK(bad.lost->find("HPCLAUNCH_RDZV_SECRET") != std::string::npos);
  CHECK(bad.messages.empty());
  CHECK(good.messages.empty());  // the round still waits for a real node 1
  CHECK_FALSE(good.lost);
}

TEST_CASE("the agent's worker port is drawn from that band, free, and not ephemeral") {
  const PortBand band = worker_port_band(read_file("/proc/sys/net/ipv4/ip_local_port_range").value_or(""));
  REQUIRE(band.high > band.low);  // this machine's range leaves one (Linux's default 32768-60999 does)
  std::set<int> seen;
  for (int i = 0; i < 8; ++i) {
    const int port = pick_free_port();
    CHECK(port >= band.low);
    CHECK(port < band.high);
    seen.insert(port);
  }
  CHECK(seen.size() > 1);  // drawn, not one fixed port
}

TEST_CASE("an agent that cannot reach the store gives up at its deadline with the reason") {
  asio::io_context io;
  int port = pick_free_port();  // nothing listens there
  std::optional<std::string> lost;
  StoreClient c(io, StoreClientConfig{"127.0.0.1", port, "s", 300ms, 5000ms}, [] {}, [](const nlohmann::json&) {},
                [&](const std::string& why) { lost = why; });
  c.connect();
  run_until(io, [&] { return lost.has_value(); });
  REQUIRE(lost);
  CHECK(lost->find("could not reach the rendezvous store at 127.0.0.1:") != std::string::npos);
}

namespace {

// A raw peer of the store: says hello, then sends a sealed heartbeat every `every` (never, when zero).
struct RawPeer {
  RawPeer(asio::io_context& io, int port, std::chrono::milliseconds every)
      : channel(std::make_shared<MessageKey>("s3cret"), Side::agent, random_nonce()), timer(io), every(every) {
    asio::ip::tcp::socket s(io);
    s.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), static_cast<unsigned short>(port)));
    conn = std::make_shared<Connection>(std::move(s));
    conn->start(
        [this](const std::string& line) {
          if (!channel.ready() && channel.take_hello(line) && this->every.count() > 0) beat();
          nlohmann::json msg;
          if (channel.ready() && line.rfind("hpclaunch-agent", 0) != 0 && channel.open(line, &msg) == DecodeResult::ok)
            received.push_back(msg), received_at.push_back(std::chrono::steady_clock::now());
        },
        [this](const std::string&) { closed = true; });
    conn->send(channel.hello());
  }
  void beat() {
    conn->send(channel.seal(nlohmann::json{{"type", "hb"}}));
    timer.expires_after(every);
    timer.async_wait([this](boost::system::error_code ec) {
      if (!ec && !closed) beat();
    });
  }
  MessageChannel channel;
  std::shared_ptr<Connection> conn;
  asio::steady_timer timer;
  std::chrono::milliseconds every;
  std::vector<nlohmann::json> received;
  std::vector<std::chrono::steady_clock::time_point> received_at;
  bool closed = false;
};

}  // namespace

TEST_CASE("a silent peer is lost after the timeout even behind one that keeps talking") {
  // The store looks only at the peers read from longest ago: the talking peer, connected first, must not hide
  // the silent one connected after it.
  asio::io_context io;
  StoreServerConfig config = server_config(3);
  config.heartbeat_timeout = 1000ms;  // ten beats of the talking peer: a loaded machine does not make it silent
  StoreServer server(io, config);
  RawPeer talking(io, server.port(), 100ms);
  RawPeer silent(io, server.port(), 0ms);
  run_until(io, [&] { return silent.closed; });
  CHECK(silent.closed);
  CHECK_FALSE(talking.closed);
  talking.conn->close();
}

TEST_CASE("the store announces its heartbeat interval in its heartbeats, the first at the agent's first message") {
  asio::io_context io;
  StoreServerConfig config = server_config(2);
  StoreServer server(io, config);
  RawPeer peer(io, server.port(), 100ms);
  run_until(io, [&] { return !peer.received.empty(); });
  REQUIRE_FALSE(peer.received.empty());
  CHECK(peer.received[0]["type"] == "hb");
  CHECK(peer.received[0]["interval_ms"] == 1000);  // one agent, timeout 5 s (agent/heartbeat.h)
  peer.conn->close();
}

TEST_CASE("the store spreads its heartbeats over the interval instead of sending them all at once") {
  asio::io_context io;
  StoreServer server(io, server_config(4));
  RawPeer a(io, server.port(), 100ms), b(io, server.port(), 100ms), c(io, server.port(), 100ms);
  // The first heartbeat answers the agent's first sealed message at once (the interval for its next beat); the
  // ones after it come from the store's timer.
  run_until(io, [&] { return a.received.size() > 1 && b.received.size() > 1 && c.received.size() > 1; });
  REQUIRE(a.received.size() > 1);
  REQUIRE(b.received.size() > 1);
  REQUIRE(c.received.size() > 1);
  // Three agents, 1 s: one every ~330 ms (all three together before).
  auto [first, last] = std::minmax({a.received_at[1], b.received_at[1], c.received_at[1]});
  CHECK(last - first >= 200ms);
  for (RawPeer* p : {&a, &b, &c}) p->conn->close();
}

}  // namespace agent_store_test
