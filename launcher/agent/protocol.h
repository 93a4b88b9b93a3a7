// The agents' wire format, pure (no sockets, no clock): what every line between an agent and the store is, and
// how it is sealed and checked. The fuzz target calls parse_hello and open_message directly.
//
// A connection starts with one hello line from each side, carrying a fresh random nonce:
//   hpclaunch-agent 1 NONCE                    (NONCE: 32 hex digits)
// Every later line is one message:
//   SEQ MAC JSON                               (SEQ: decimal, counts this side's messages from 0; MAC: 64 hex)
// MAC = HMAC-SHA256(key = the job's secret, "hpclaunch-agent-1" NUL SIDE SENDER_NONCE RECEIVER_NONCE SEQ " " JSON),
// SIDE 'a' from the agent that connected, 's' from the store. So a message altered, made without the secret,
// replayed on another connection (other nonces), replayed, dropped or reordered on its own (SEQ), or reflected to
// its sender (SIDE) is refused, before its JSON is parsed. The secret itself never travels.
#pragma once
#include <nlohmann/json.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

inline constexpr size_t k_max_message = 1 << 20;
inline constexpr size_t k_nonce_hex = 32;

// The job's secret as an HMAC-SHA256 key, keyed once (OpenSSL's EVP_MAC). One event loop's use: not thread-safe.
class MessageKey {
 public:
  explicit MessageKey(const std::string& secret);
  ~MessageKey();
  MessageKey(const MessageKey&) = delete;
  MessageKey& operator=(const MessageKey&) = delete;
  // The HMAC of the concatenated parts, 32 bytes.
  std::string mac(std::initializer_list<std::string_view> parts) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

enum class Side : char { agent = 'a', store = 's' };

// What one side of one connection knows: the key, its own side and both nonces.
struct ChannelKeys {
  std::shared_ptr<const MessageKey> key;
  Side me = Side::agent;
  std::string my_nonce;
  std::string their_nonce;
};

std::string hello_line(const std::string& nonce);  // with its '\n'
// The peer's nonce from its hello line; nullopt when the line is not one.
std::optional<std::string> parse_hello(std::string_view line);

// The line (with '\n') for this side's message number `seq`, `json_text` being one JSON object without newlines.
std::string seal_message(const ChannelKeys& keys, uint64_t seq, std::string_view json_text);

enum class DecodeResult {
  ok,
  malformed,   // not SEQ MAC JSON, or its JSON (checked after the MAC) is not an object with a "type"
  bad_secret,  // the MAC does not match: another secret, an altered line, or one from another connection
  replayed,    // a genuine message of this connection, but not the one expected next
};
// Checks a line (without '\n') from the peer, expected to be its message number `expected_seq`; fills `out`
// only when ok.
DecodeResult open_message(std::string_view line, const ChannelKeys& keys, uint64_t expected_seq, nlohmann::json* out);
const char* describe(DecodeResult r);

// One side of one connection: its nonce, the peer's once its hello came, and both counters.
class MessageChannel {
 public:
  MessageChannel(std::shared_ptr<const MessageKey> key, Side me, std::string my_nonce);
  std::string hello() const { return hello_line(m_keys.my_nonce); }
  // Takes the peer's hello; false when `line` is not one (or one came already).
  bool take_hello(std::string_view line);
  bool ready() const { return !m_keys.their_nonce.empty(); }
  // Only once ready().
  std::string seal_text(std::string_view json_text) { return seal_message(m_keys, m_sent++, json_text); }
  std::string seal(const nlohmann::json& msg);
  DecodeResult open(std::string_view line, nlohmann::json* out);

 private:
  ChannelKeys m_keys;
  uint64_t m_sent = 0;
  uint64_t m_received = 0;
};

// A random secret for a job that has none (one node only), and a connection's nonce: 32 hex digits each.
std::string random_secret();
std::string random_nonce();

}  // namespace hpclaunch
