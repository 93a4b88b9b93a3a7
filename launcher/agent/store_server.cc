#include "agent/store_server.h"

#include <fcntl.h>
#include <fmt/core.h>

#include <algorithm>
#include <random>

#include "agent/agent_log.h"
#include "agent/heartbeat.h"
#include "agent/protocol.h"
#include "runtime/rendezvous.h"
#include "util/error.h"
#include "util/file.h"

namespace hpclaunch {

namespace {

// The address the other agents reach the store at (the rendezvous host, resolved as they resolve it; IPv4 first),
// never every interface: the store is not offered on networks the job does not use.
asio::ip::address bind_address(asio::io_context& io, const std::string& host) {
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(io);
  auto results = resolver.resolve(host, "", ec);
  if (!ec) {
    for (const auto& r : results)
      if (r.endpoint().address().is_v4()) return r.endpoint().address();
    for (const auto& r : results) return r.endpoint().address();
  }
  throw failure("hpclaunch agent", fmt::format("cannot resolve the rendezvous host '{}' to serve the store on: {}", host,
                                               ec ? ec.message() : "no address"),
                "give --rdzv-endpoint HOST:PORT with this node's address or name");
}

}  // namespace

int pick_free_port() {
  asio::io_context io;
  // A port of the band that nothing listens on now (binding it on every interface succeeds), drawn at random so
  // that agents starting together draw apart; after 64 taken draws, or without a band, the kernel's choice.
  const PortBand band = worker_port_band(read_file("/proc/sys/net/ipv4/ip_local_port_range").value_or(""));
  if (band.high > band.low) {
    std::mt19937 draw(std::random_device{}());
    std::uniform_int_distribution<int> port(band.low, band.high - 1);
    for (int i = 0; i < 64; ++i) {
      boost::system::error_code ec;
      asio::ip::tcp::acceptor a(io);
      a.open(asio::ip::tcp::v4(), ec);
      const int p = port(draw);
      if (!ec) a.bind(asio::ip::tcp::endpoint(asio::ip::address_v4::any(), static_cast<unsigned short>(p)), ec);
      if (!ec) return p;
    }
  }
  asio::ip::tcp::acceptor a(io, asio::ip::tcp::endpoint(asio::ip::address_v4::any(), 0));
  return a.local_endpoint().port();
}

StoreServer::StoreServer(asio::io_context& io, StoreServerConfig config)
    : m_io(io),
      m_config(std::move(config)),
      m_key(std::make_shared<MessageKey>(m_config.secret)),
      m_acceptor(io),
      m_deadline(io),
      m_heartbeat(io),
      m_state(m_config.rendezvous, pick_free_port, Clock::now()) {
  asio::ip::tcp::endpoint ep(bind_address(io, m_config.bind_host), static_cast<unsigned short>(m_config.port));
  boost::system::error_code ec;
  m_acceptor.open(ep.protocol(), ec);
  if (!ec) m_acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) m_acceptor.bind(ep, ec);
  if (!ec) m_acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw failure("hpclaunch agent", fmt::format("cannot serve the rendezvous on {}:{}: {}", ep.address().to_string(),
                                                 m_config.port, ec.message()),
                  "is another job using this port? give --rdzv-endpoint HOST:PORT with a free port");
  ::fcntl(m_acceptor.native_handle(), F_SETFD, FD_CLOEXEC);
  m_port = m_acceptor.local_endpoint().port();
  if (m_config.verbose) agent_log(m_config.log_host, fmt::format("rendezvous store on {}:{}", ep.address().to_string(), m_port));
  accept();
  heartbeat();
  arm_deadline();
}

void StoreServer::accept() {
  m_acceptor.async_accept([this](boost::system::error_code ec, asio::ip::tcp::socket socket) {
    if (m_stopped) return;
    if (!ec) {
      ::fcntl(socket.native_handle(), F_SETFD, FD_CLOEXEC);
      ConnId id = m_next_id++;
      auto conn = std::make_shared<Connection>(std::move(socket));
      Peer& peer = m_conns.emplace(id, Peer{conn, MessageChannel(m_key, Side::store, random_nonce()), {}}).first->second;
      peer.by_last_read = m_by_last_read.insert(m_by_last_read.end(), id);
      conn->send(peer.channel.hello());
      conn->start([this, id](const std::string& line) { on_line(id, line); },
                  [this, id](const std::string& why) { on_close(id, why); });
    }
    accept();
  });
}

void StoreServer::refuse(ConnId id, const std::string& why) {
  auto it = m_conns.find(id);
  if (it == m_conns.end()) return;
  agent_log(m_config.log_host, fmt::format("refused a peer from {}: {}", it->second.conn->peer(), why));
  it->second.conn->close();
  forget(it);
  apply(m_state.lost(id, Clock::now()));
}

void StoreServer::on_line(ConnId id, const std::string& line) {
  auto it = m_conns.find(id);
  if (it == m_conns.end()) return;
  ++m_lines_read;
  m_by_last_read.splice(m_by_last_read.end(), m_by_last_read, it->second.by_last_read);
  MessageChannel& channel = it->second.channel;
  if (!channel.ready()) {
    if (!channel.take_hello(line)) refuse(id, "not an hpclaunch agent (or one of another version): no hello");
    return;
  }
  nlohmann::json msg;
  if (auto result = channel.open(line, &msg); result != DecodeResult::ok) return refuse(id, describe(result));
  if (!it->second.told_interval) {
    // The interval at once, in answer to the agent's first sealed message (it knows the secret): its next
    // heartbeat is already at the job's steady rate, not at 1 s until the store's round-robin reaches it.
    it->second.told_interval = true;
    it->second.conn->send(
        channel.seal_text(heartbeat_line(heartbeat_interval(job_size(), m_config.heartbeat_timeout))));
  }
  const std::string type = msg["type"];
  if (type == "hb") return;  // its time of arrival is all it says (Connection::last_read)
  auto now = Clock::now();
  try {
    if (type == "join") {
      apply(m_state.join(id, msg.at("node_rank"), msg.at("host"), msg.at("nproc"), now, msg.value("domain", "")));
    } else if (type == "done") {
      apply(m_state.done(id, msg.at("round")));
    } else if (type == "failed") {
      auto f = msg.at("failure").get<Failure>();
      // The node-0 agent has already said so for its own workers.
      if (f.node_rank != m_config.rendezvous.anchor_node) agent_log(m_config.log_host, "failure: " + describe(f));
      apply(m_state.failed(id, msg.at("round"), f, now));
    } else if (type == "progress") {
      m_state.progress(id, msg.at("round"));
    } else if (type == "shutdown") {
      apply(m_state.shutdown(id, msg.at("failure").get<Failure>()));
    }
  } catch (const nlohmann::json::exception& e) {
    agent_log(m_config.log_host, fmt::format("bad '{}' message from {}: {}", type, it->second.conn->peer(), e.what()));
  }
  arm_deadline();
}

void StoreServer::on_close(ConnId id, const std::string& why) {
  if (m_stopped) return;
  if (auto it = m_conns.find(id); it != m_conns.end()) forget(it);
  size_t before = m_state.agents();
  const std::string who = m_state.who(id);  // so that a re-formed job's log names the node it dropped
  auto replies = m_state.lost(id, Clock::now());
  if (m_state.agents() < before && m_state.phase() != RendezvousState::Phase::finished)
    agent_log(m_config.log_host, "lost " + who + ": " + why);
  apply(replies);
  arm_deadline();
}

void StoreServer::apply(const std::vector<Reply>& replies) {
  for (const auto& r : replies) {
    auto it = m_conns.find(r.to);
    if (it == m_conns.end()) continue;
    nlohmann::json msg;
    switch (r.kind) {
      case Reply::assign: {
        const Assignment& a = r.assignment;
        msg = {{"type", "assign"},           {"round", a.round},         {"group_rank", a.group_rank},
               {"group_world_size", a.group_world_size}, {"rank_offset", a.rank_offset},
               {"world_size", a.world_size}, {"restart_count", a.restart_count},
               {"master_addr", a.master_addr}, {"master_port", a.master_port}, {"node_rank", a.node_rank}};
        if (m_config.verbose && a.group_rank == 0)
          agent_log(m_config.log_host, fmt::format("round {}: {} nodes, world size {}, restart {}", a.round,
                                                   a.group_world_size, a.world_size, a.restart_count));
        break;
      }
      case Reply::restart:
        msg = {{"type", "restart"}, {"round", r.round}};
        break;
      case Reply::abort:
        msg = {{"type", "abort"}, {"failure", r.failure}, {"restart_count", m_state.restart_count()}};
        break;
      case Reply::finish:
        msg = {{"type", "finish"}};
        break;
      case Reply::standby:
        msg = {{"type", "standby"}, {"as", r.failure.reason}};
        break;
      case Reply::refuse:
        msg = {{"type", "refuse"}, {"reason", r.failure.reason}};
        agent_log(m_config.log_host, fmt::format("refused a peer from {}: {}", it->second.conn->peer(), r.failure.reason));
        break;
    }
    if (!it->second.channel.ready()) continue;  // replies go only to agents that joined: they said hello
    it->second.conn->send(it->second.channel.seal(msg));
    if (r.kind == Reply::refuse) {
      it->second.conn->close_after_flush();
      forget(it);
    }
  }
  log_replacements();
  if (m_config.on_change) m_config.on_change();
}

void StoreServer::log_replacements() {
  const auto& all = m_state.replacements();
  for (; m_replacements_logged < all.size(); ++m_replacements_logged) {
    agent_log(m_config.log_host, "spare: " + describe(all[m_replacements_logged]));
  }
}

void StoreServer::arm_deadline() {
  if (m_stopped) return;
  auto when = m_state.deadline();
  m_deadline.cancel();
  if (!when) return;
  m_deadline.expires_at(*when);
  m_deadline.async_wait([this](boost::system::error_code ec) {
    if (ec || m_stopped) return;
    apply(m_state.tick(Clock::now()));
    arm_deadline();
  });
}

StoreServer::Peers::iterator StoreServer::forget(Peers::iterator it) {
  m_by_last_read.erase(it->second.by_last_read);
  return m_conns.erase(it);
}

// Silence is looked for every 50 ms, so a lost agent is noticed within the timeout + 50 ms (with a 1 s scan it
// was up to a second late). Only the peers read from longest ago are looked at (m_by_last_read): at 10,000
// agents a scan of every connection 20 times a second was the store's largest cost in user space.
void StoreServer::heartbeat() {
  constexpr std::chrono::milliseconds k_tick{50};
  m_heartbeat.expires_after(k_tick);
  m_heartbeat.async_wait([this, k_tick](boost::system::error_code ec) {
    if (ec || m_stopped) return;
    const auto cutoff = Clock::now() - m_config.heartbeat_timeout;
    std::vector<ConnId> silent;
    for (ConnId id : m_by_last_read) {
      if (m_conns.at(id).conn->last_read() >= cutoff) break;
      silent.push_back(id);
    }
    for (ConnId id : silent) {
      auto it = m_conns.find(id);  // the loss of one may have let another go (a refused peer)
      if (it == m_conns.end()) continue;
      it->second.conn->close();
      on_close(id, fmt::format("no heartbeat for {} ms", m_config.heartbeat_timeout.count()));
    }
    if (m_stopped) return;
    send_heartbeats(k_tick);
    heartbeat();
  });
}

// The heartbeat intervals are the job's size's: the connections, or the nodes the rendezvous expects when more
// (the size it will have once every agent has joined), so that agents do not heartbeat at 1 s through the joins
// and the first seconds of the run (bench/agent/RESULTS-heartbeat.md).
size_t StoreServer::job_size() const {
  return std::max(m_conns.size(),
                  static_cast<size_t>(std::max(0, m_config.rendezvous.max_nodes + m_config.rendezvous.spares)));
}

std::string StoreServer::heartbeat_line(std::chrono::milliseconds interval) const {
  return nlohmann::json{{"type", "hb"}, {"interval_ms", interval.count()}}.dump();
}

// This tick's share of the heartbeats: every agent that said hello gets one per interval (the interval for the
// job's size, announced in it), a few on each tick rather than all at once, so that 10,000 heartbeats
// (and the 10,000 answers) do not arrive together and delay the notice of a lost agent behind them. The JSON is
// made once per tick, sealed per connection (its own nonces and count).
void StoreServer::send_heartbeats(std::chrono::milliseconds tick) {
  if (m_conns.empty()) return;
  const auto interval = heartbeat_interval(job_size(), m_config.heartbeat_timeout);
  m_heartbeats_owed += static_cast<double>(m_conns.size()) * static_cast<double>(tick.count()) /
                       static_cast<double>(interval.count());
  auto n = static_cast<size_t>(m_heartbeats_owed);
  if (n == 0) return;
  m_heartbeats_owed -= static_cast<double>(n);
  const std::string hb = heartbeat_line(interval);
  auto it = m_conns.lower_bound(m_heartbeat_next);
  for (n = std::min(n, m_conns.size()); n > 0; --n, ++it) {
    if (it == m_conns.end()) it = m_conns.begin();
    if (it->second.channel.ready()) it->second.conn->send(it->second.channel.seal_text(hb));
  }
  m_heartbeat_next = it == m_conns.end() ? 0 : it->first;
}

void StoreServer::shutdown(const Failure& why) {
  if (!m_stopped) apply(m_state.shutdown(0, why));
}

void StoreServer::stop() {
  if (m_stopped) return;
  m_stopped = true;
  boost::system::error_code ec;
  m_acceptor.close(ec);
  m_deadline.cancel();
  m_heartbeat.cancel();
  for (auto& [id, peer] : m_conns) peer.conn->close_after_flush();
  m_conns.clear();
  m_by_last_read.clear();
}

}  // namespace hpclaunch
