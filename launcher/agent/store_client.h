// An agent's link to the rendezvous store: connects with retry and backoff until the join deadline, exchanges
// hellos (nonces), sends and receives HMAC-sealed messages (agent/protocol.h), exchanges heartbeats at the
// interval the store announces (agent/heartbeat.h), and reports a lost store (closed, silent, or a message that
// fails its check).
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>

#include "agent/connection.h"
#include "agent/protocol.h"

namespace hpclaunch {

struct StoreClientConfig {
  std::string host;
  int port = 0;
  std::string secret;
  std::chrono::milliseconds connect_timeout{600000};
  std::chrono::milliseconds heartbeat_timeout{5000};
};

// What the agent's run loop asks of its link to the store (agent/elastic_agent.h): a StoreClient, or a fake in the
// loop's unit test (tests/unit/elastic_agent_test.cc). The link reports through the callbacks it was made with.
class StoreLink {
 public:
  virtual ~StoreLink() = default;
  virtual void connect() = 0;
  virtual void send(const nlohmann::json& msg) = 0;
  virtual void close() = 0;
};

class StoreClient : public StoreLink {
 public:
  using OnConnected = std::function<void()>;
  using OnMessage = std::function<void(const nlohmann::json& msg)>;
  using OnLost = std::function<void(const std::string& why)>;

  StoreClient(asio::io_context& io, StoreClientConfig config, OnConnected on_connected, OnMessage on_message,
              OnLost on_lost);
  void connect() override;
  void send(const nlohmann::json& msg) override;
  // Flushes what was sent and closes; no callback after this.
  void close() override;

 private:
  void attempt();
  void retry(const std::string& why);
  void heartbeat();
  void lost(const std::string& why);

  asio::io_context& m_io;
  StoreClientConfig m_config;
  OnConnected m_on_connected;
  OnMessage m_on_message;
  OnLost m_on_lost;
  asio::steady_timer m_timer;
  asio::steady_timer m_heartbeat;
  std::chrono::steady_clock::time_point m_give_up;
  std::chrono::milliseconds m_backoff{50};
  std::chrono::milliseconds m_heartbeat_interval;  // the store's last announced, 1 s until it says
  std::shared_ptr<const MessageKey> m_key;
  std::shared_ptr<Connection> m_conn;
  std::optional<MessageChannel> m_channel;  // this connection's nonces and counters
  bool m_closed = false;
  bool m_heard = false;  // a valid message came back: the store knows our secret
};

}  // namespace hpclaunch
