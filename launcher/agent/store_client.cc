#include "agent/store_client.h"

#include <fcntl.h>
#include <fmt/core.h>

#include "agent/heartbeat.h"
#include "agent/protocol.h"

namespace hpclaunch {

StoreClient::StoreClient(asio::io_context& io, StoreClientConfig config, OnConnected on_connected,
                         OnMessage on_message, OnLost on_lost)
    : m_io(io),
      m_config(std::move(config)),
      m_on_connected(std::move(on_connected)),
      m_on_message(std::move(on_message)),
      m_on_lost(std::move(on_lost)),
      m_timer(io),
      m_heartbeat(io),
      m_heartbeat_interval(k_min_heartbeat_interval),
      m_key(std::make_shared<MessageKey>(m_config.secret)) {}

void StoreClient::connect() {
  m_give_up = std::chrono::steady_clock::now() + m_config.connect_timeout;
  attempt();
}

void StoreClient::attempt() {
  if (m_closed) return;
  // Resolve each time: the node-0 host may not be known to DNS yet when a node starts.
  boost::system::error_code ec;
  asio::ip::tcp::resolver resolver(m_io);
  auto results = resolver.resolve(m_config.host, std::to_string(m_config.port), ec);
  if (ec) return retry("cannot resolve " + m_config.host + ": " + ec.message());
  auto socket = std::make_shared<asio::ip::tcp::socket>(m_io);
  asio::async_connect(*socket, results, [this, socket](boost::system::error_code e, const asio::ip::tcp::endpoint&) {
    if (m_closed) return;
    if (e) return retry(e.message());
    ::fcntl(socket->native_handle(), F_SETFD, FD_CLOEXEC);
    m_conn = std::make_shared<Connection>(std::move(*socket));
    m_channel.emplace(m_key, Side::agent, random_nonce());
    m_conn->send(m_channel->hello());
    m_conn->start(
        [this](const std::string& line) {
          if (!m_channel->ready()) {
            if (!m_channel->take_hello(line))
              return lost("the rendezvous store did not say hello: not an hpclaunch agent's store, or another version's");
            return m_on_connected();
          }
          nlohmann::json msg;
          auto r = m_channel->open(line, &msg);
          if (r != DecodeResult::ok) return lost(std::string("refused a message from the store: ") + describe(r));
          m_heard = true;
          if (msg["type"] != "hb") return m_on_message(msg);
          if (auto it = msg.find("interval_ms"); it != msg.end() && it->is_number_integer())
            m_heartbeat_interval =
                adopt_heartbeat_interval(it->get<long long>(), m_config.heartbeat_timeout, m_heartbeat_interval);
        },
        [this](const std::string& why) {
          lost(m_heard ? "connection " + why
                       : "the store closed the connection at once (is HPCLAUNCH_RDZV_SECRET the same on every "
                         "node?)");
        });
    heartbeat();
  });
}

void StoreClient::retry(const std::string& why) {
  auto now = std::chrono::steady_clock::now();
  if (now >= m_give_up) {
    return lost(fmt::format("could not reach the rendezvous store at {}:{} within {} s: {}", m_config.host,
                            m_config.port,
                            std::chrono::duration_cast<std::chrono::seconds>(m_config.connect_timeout).count(), why));
  }
  m_timer.expires_after(std::min<std::chrono::steady_clock::duration>(m_backoff, m_give_up - now));
  m_backoff = std::min(m_backoff * 2, std::chrono::milliseconds(1000));
  m_timer.async_wait([this](boost::system::error_code ec) {
    if (!ec) attempt();
  });
}

// Silence is looked for at each heartbeat: a lost store is noticed within the timeout + one interval (at most a
// third of the timeout).
void StoreClient::heartbeat() {
  m_heartbeat.expires_after(m_heartbeat_interval);
  m_heartbeat.async_wait([this](boost::system::error_code ec) {
    if (ec || m_closed || !m_conn) return;
    if (m_conn->idle_for() > m_config.heartbeat_timeout)
      return lost(fmt::format("no heartbeat from the store for {} ms", m_config.heartbeat_timeout.count()));
    static const std::string hb = nlohmann::json{{"type", "hb"}}.dump();
    if (m_channel->ready()) m_conn->send(m_channel->seal_text(hb));
    heartbeat();
  });
}

void StoreClient::send(const nlohmann::json& msg) {
  if (m_conn && !m_closed && m_channel->ready()) m_conn->send(m_channel->seal(msg));
}

void StoreClient::lost(const std::string& why) {
  if (m_closed) return;
  m_closed = true;
  m_timer.cancel();
  m_heartbeat.cancel();
  if (m_conn) m_conn->close();
  m_on_lost(why);
}

void StoreClient::close() {
  if (m_closed) return;
  m_closed = true;
  m_timer.cancel();
  m_heartbeat.cancel();
  if (m_conn) m_conn->close_after_flush();
}

}  // namespace hpclaunch
