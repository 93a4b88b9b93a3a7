#include "agent/protocol.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include <fmt/core.h>

#include "util/error.h"

namespace hpclaunch {

namespace {

constexpr std::string_view k_hello_prefix = "hpclaunch-agent 1 ";
constexpr std::string_view k_mac_label{"hpclaunch-agent-1\0", 18};
constexpr size_t k_mac_hex = 64;

bool is_hex(std::string_view s) {
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string to_hex(std::string_view bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string mac_hex(const ChannelKeys& keys, Side sender, std::string_view seq, std::string_view json_text) {
  const bool mine = sender == keys.me;
  const char side = static_cast<char>(sender);
  return to_hex(keys.key->mac({k_mac_label, std::string_view(&side, 1), mine ? keys.my_nonce : keys.their_nonce,
                               mine ? keys.their_nonce : keys.my_nonce, seq, " ", json_text}));
}

Side other_side(Side s) { return s == Side::agent ? Side::store : Side::agent; }

}  // namespace

struct MessageKey::Impl {
  EVP_MAC* mac = nullptr;
  EVP_MAC_CTX* ctx = nullptr;
};

MessageKey::MessageKey(const std::string& secret) : m_impl(std::make_unique<Impl>()) {
  m_impl->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
  m_impl->ctx = m_impl->mac ? EVP_MAC_CTX_new(m_impl->mac) : nullptr;
  char digest[] = "SHA256";
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0), OSSL_PARAM_construct_end()};
  // An empty secret still keys the MAC (HMAC allows it); the agent refuses to run a multi-node job without one.
  static const unsigned char k_none = 0;
  const auto* key = secret.empty() ? &k_none : reinterpret_cast<const unsigned char*>(secret.data());
  if (!m_impl->ctx || EVP_MAC_init(m_impl->ctx, key, secret.size(), params) != 1) {
    EVP_MAC_CTX_free(m_impl->ctx);
    EVP_MAC_free(m_impl->mac);
    throw failure("hpclaunch agent", "OpenSSL has no HMAC-SHA256", "check the libssl3 installation");
  }
}

MessageKey::~MessageKey() {
  EVP_MAC_CTX_free(m_impl->ctx);
  EVP_MAC_free(m_impl->mac);
}

std::string MessageKey::mac(std::initializer_list<std::string_view> parts) const {
  // A NULL key re-initialises with the key set once in the constructor.
  EVP_MAC_init(m_impl->ctx, nullptr, 0, nullptr);
  for (std::string_view p : parts) EVP_MAC_update(m_impl->ctx, reinterpret_cast<const unsigned char*>(p.data()), p.size());
  unsigned char out[EVP_MAX_MD_SIZE];
  size_t n = 0;
  EVP_MAC_final(m_impl->ctx, out, &n, sizeof out);
  return std::string(reinterpret_cast<const char*>(out), n);
}

std::string hello_line(const std::string& nonce) { return std::string(k_hello_prefix) + nonce + "\n"; }

std::optional<std::string> parse_hello(std::string_view line) {
  if (line.substr(0, k_hello_prefix.size()) != k_hello_prefix) return std::nullopt;
  std::string_view nonce = line.substr(k_hello_prefix.size());
  if (nonce.size() != k_nonce_hex || !is_hex(nonce)) return std::nullopt;
  return std::string(nonce);
}

std::string seal_message(const ChannelKeys& keys, uint64_t seq, std::string_view json_text) {
  const std::string seq_text = std::to_string(seq);
  std::string line = seq_text + " " + mac_hex(keys, keys.me, seq_text, json_text) + " ";
  line.append(json_text);
  line += '\n';
  return line;
}

DecodeResult open_message(std::string_view line, const ChannelKeys& keys, uint64_t expected_seq, nlohmann::json* out) {
  size_t sp = line.find(' ');
  if (sp == 0 || sp > 20 || sp == std::string_view::npos) return DecodeResult::malformed;
  std::string_view seq_text = line.substr(0, sp);
  for (char c : seq_text)
    if (c < '0' || c > '9') return DecodeResult::malformed;
  std::string_view rest = line.substr(sp + 1);
  if (rest.size() < k_mac_hex + 1 || rest[k_mac_hex] != ' ') return DecodeResult::malformed;
  std::string_view mac = rest.substr(0, k_mac_hex);
  std::string_view json_text = rest.substr(k_mac_hex + 1);
  const std::string want = mac_hex(keys, other_side(keys.me), seq_text, json_text);
  if (CRYPTO_memcmp(want.data(), mac.data(), k_mac_hex) != 0) return DecodeResult::bad_secret;
  if (seq_text != std::to_string(expected_seq)) return DecodeResult::replayed;
  auto j = nlohmann::json::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("type") || !j["type"].is_string()) return DecodeResult::malformed;
  *out = std::move(j);
  return DecodeResult::ok;
}

const char* describe(DecodeResult r) {
  switch (r) {
    case DecodeResult::ok: return "ok";
    case DecodeResult::malformed: return "not an hpclaunch agent message";
    case DecodeResult::bad_secret: return "wrong or missing HPCLAUNCH_RDZV_SECRET, or a message altered on the way";
    case DecodeResult::replayed: return "a replayed or reordered message";
  }
  return "?";
}

MessageChannel::MessageChannel(std::shared_ptr<const MessageKey> key, Side me, std::string my_nonce)
    : m_keys{std::move(key), me, std::move(my_nonce), {}} {}

bool MessageChannel::take_hello(std::string_view line) {
  if (ready()) return false;
  auto nonce = parse_hello(line);
  if (!nonce) return false;
  m_keys.their_nonce = *nonce;
  return true;
}

std::string MessageChannel::seal(const nlohmann::json& msg) {
  return seal_text(msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

DecodeResult MessageChannel::open(std::string_view line, nlohmann::json* out) {
  if (!ready()) return DecodeResult::malformed;
  DecodeResult r = open_message(line, m_keys, m_received, out);
  if (r == DecodeResult::ok) ++m_received;
  return r;
}

namespace {

std::string random_hex16() {
  unsigned char bytes[16] = {};
  if (RAND_bytes(bytes, sizeof bytes) != 1)
    throw failure("hpclaunch agent", "no random bytes from OpenSSL", "check /dev/urandom and the libssl3 installation");
  return to_hex(std::string_view(reinterpret_cast<const char*>(bytes), sizeof bytes));
}

}  // namespace

std::string random_secret() { return random_hex16(); }
std::string random_nonce() { return random_hex16(); }

}  // namespace hpclaunch
