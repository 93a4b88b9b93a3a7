// The node-0 agent's rendezvous store: a TCP server (Boost.Asio) on the rendezvous address alone that opens every
// connection with a hello (agent/protocol.h), checks every message's HMAC and sequence, refuses and logs peers
// whose messages fail, drives the RendezvousState, sends heartbeats at the interval agent/heartbeat.h gives for
// its number of connections (announcing it) and notices silent or closed peers.
#pragma once
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "agent/connection.h"
#include "agent/protocol.h"
#include "agent/rendezvous_state.h"

namespace hpclaunch {

struct StoreServerConfig {
  std::string bind_host;  // the rendezvous host (an address or a name): the store listens on its address only
  int port = 0;           // 0: a free port
  std::string secret;
  std::string log_host;   // for log lines
  bool verbose = false;
  std::chrono::milliseconds heartbeat_timeout{5000};
  RendezvousConfig rendezvous;
  // Called after each change of the rendezvous has been answered (a join, a round, a loss...): node 0's agent
  // records what `hpclaunch status` shows of it (JOBDIR/nodes.json).
  std::function<void()> on_change;
};

class StoreServer {
 public:
  StoreServer(asio::io_context& io, StoreServerConfig config);  // throws Error if it cannot listen
  int port() const { return m_port; }
  // Lines read from every peer so far (hellos, heartbeats, messages): what the load generator divides its CPU by.
  uint64_t lines_read() const { return m_lines_read; }
  // The rendezvous as it stands (its no-progress count, which node 0 keeps in the job directory for a requeue).
  const RendezvousState& state() const { return m_state; }
  // Stops the job for every agent (this agent got SIGTERM...), without a restart.
  void shutdown(const Failure& why);
  // Stops accepting; every connection is flushed and closed.
  void stop();

 private:
  void accept();
  void on_line(ConnId id, const std::string& line);
  void on_close(ConnId id, const std::string& why);
  void apply(const std::vector<Reply>& replies);
  void arm_deadline();
  void log_replacements();  // a line for each spare that took a node's place since the last call
  void heartbeat();
  void send_heartbeats(std::chrono::milliseconds tick);
  size_t job_size() const;
  std::string heartbeat_line(std::chrono::milliseconds interval) const;
  void refuse(ConnId id, const std::string& why);

  struct Peer {
    std::shared_ptr<Connection> conn;
    MessageChannel channel;
    std::list<ConnId>::iterator by_last_read;  // its place in m_by_last_read
    bool told_interval = false;                // its first sealed message was answered with a heartbeat
  };
  using Peers = std::map<ConnId, Peer>;
  Peers::iterator forget(Peers::iterator it);  // erases a peer from m_conns and m_by_last_read

  asio::io_context& m_io;
  StoreServerConfig m_config;
  std::shared_ptr<const MessageKey> m_key;
  asio::ip::tcp::acceptor m_acceptor;
  asio::steady_timer m_deadline;
  asio::steady_timer m_heartbeat;
  int m_port = 0;
  bool m_stopped = false;
  // Heartbeats are spread over the interval: each 50 ms tick sends its share, from m_heartbeat_next on.
  double m_heartbeats_owed = 0;
  ConnId m_heartbeat_next = 0;
  uint64_t m_lines_read = 0;
  ConnId m_next_id = 1;
  Peers m_conns;
  // Every peer, the one read from longest ago first: a line moves its peer to the back, so the silent ones are
  // at the front and a silence check looks at them alone, not at every connection.
  std::list<ConnId> m_by_last_read;
  RendezvousState m_state;
  size_t m_replacements_logged = 0;
};

// A TCP port that was free a moment ago on every interface, for the workers' MASTER_PORT: drawn from
// worker_port_band (runtime/rendezvous.h), below the ephemeral ports that torchrun hands on.
int pick_free_port();

}  // namespace hpclaunch
