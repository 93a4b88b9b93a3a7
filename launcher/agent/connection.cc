#include "agent/connection.h"

#include "agent/protocol.h"

namespace hpclaunch {

Connection::Connection(asio::ip::tcp::socket socket) : m_socket(std::move(socket)), m_linger(m_socket.get_executor()) {
  boost::system::error_code ec;
  auto ep = m_socket.remote_endpoint(ec);
  m_peer = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
  m_socket.set_option(asio::ip::tcp::no_delay(true), ec);
}

void Connection::start(OnLine on_line, OnClose on_close) {
  m_on_line = std::move(on_line);
  m_on_close = std::move(on_close);
  read();
}

void Connection::read() {
  auto self = shared_from_this();
  asio::async_read_until(m_socket, asio::dynamic_buffer(m_in, k_max_message), '\n',
                         [this, self](boost::system::error_code ec, size_t n) {
                           if (ec) {
                             if (m_closing) return close();
                             return fail(ec == asio::error::eof ? "closed by the peer" : ec.message());
                           }
                           m_last_read = std::chrono::steady_clock::now();
                           std::string line = m_in.substr(0, n - 1);
                           m_in.erase(0, n);
                           if (!m_closing && m_on_line) m_on_line(line);
                           if (m_socket.is_open()) read();
                         });
}

void Connection::send(std::string line) {
  if (!m_socket.is_open() || m_closing) return;
  m_out.push_back(std::move(line));
  if (!m_writing) write();
}

void Connection::write() {
  if (m_out.empty()) {
    m_writing = false;
    if (m_closing) {
      boost::system::error_code ec;
      m_socket.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
      // Wait (bounded) for the peer to close its end, so that what we sent is read, not reset.
      m_linger.expires_after(std::chrono::seconds(2));
      m_linger.async_wait([self = shared_from_this()](boost::system::error_code e) {
        if (!e) self->close();
      });
    }
    return;
  }
  m_writing = true;
  auto self = shared_from_this();
  asio::async_write(m_socket, asio::buffer(m_out.front()), [this, self](boost::system::error_code ec, size_t) {
    if (ec) return m_closing ? close() : fail(ec.message());
    m_out.pop_front();
    write();
  });
}

void Connection::close_after_flush() {
  if (m_closing || !m_socket.is_open()) return;
  m_closing = true;
  if (!m_writing) write();
}

void Connection::close() {
  m_closing = true;
  m_linger.cancel();
  boost::system::error_code ec;
  m_socket.close(ec);
}

void Connection::fail(const std::string& why) {
  bool was_open = m_socket.is_open() && !m_closing;
  close();
  if (was_open && m_on_close) {
    auto cb = std::move(m_on_close);
    m_on_close = nullptr;
    cb(why);
  }
}

}  // namespace hpclaunch
