// One TCP connection between agents, line by line: reads whole lines (at most k_max_message), queues writes,
// and can close after its queue is flushed (half-close, then wait for the peer's end, bounded).
#pragma once
#include <utility>  // before Asio: Boost 1.74's awaitable.hpp needs std::exchange under C++20
#include <boost/asio.hpp>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>

namespace hpclaunch {

namespace asio = boost::asio;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using OnLine = std::function<void(const std::string& line)>;
  using OnClose = std::function<void(const std::string& why)>;

  explicit Connection(asio::ip::tcp::socket socket);
  void start(OnLine on_line, OnClose on_close);
  void send(std::string line);
  // Sends what is queued, then closes; the close callback is not called after this.
  void close_after_flush();
  void close();
  bool open() const { return m_socket.is_open(); }
  std::string peer() const { return m_peer; }
  std::chrono::steady_clock::duration idle_for() const { return std::chrono::steady_clock::now() - m_last_read; }
  std::chrono::steady_clock::time_point last_read() const { return m_last_read; }

 private:
  void read();
  void write();
  void fail(const std::string& why);

  asio::ip::tcp::socket m_socket;
  asio::steady_timer m_linger;
  std::string m_peer;
  std::string m_in;
  std::deque<std::string> m_out;
  bool m_writing = false;
  bool m_closing = false;
  OnLine m_on_line;
  OnClose m_on_close;
  std::chrono::steady_clock::time_point m_last_read = std::chrono::steady_clock::now();
};

}  // namespace hpclaunch
