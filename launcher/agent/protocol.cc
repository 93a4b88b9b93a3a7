#include "agent/protocol.h"

#include <fmt/core.h>

#include <fstream>

namespace hpclaunch {

std::string encode_message(nlohmann::json msg, const std::string& secret) {
  msg["secret"] = secret;
  return msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

namespace {

bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ b[i % (b.empty() ? 1 : b.size())];
  return diff == 0 && !b.empty();
}

}  // namespace

DecodeResult decode_message(std::string_view line, const std::string& secret, nlohmann::json* out) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return DecodeResult::malformed;
  auto s = j.find("secret");
  if (s == j.end() || !s->is_string() || !same_secret(s->get<std::string>(), secret)) return DecodeResult::bad_secret;
  j.erase("secret");
  if (!j.contains("type") || !j["type"].is_string()) return DecodeResult::malformed;
  *out = std::move(j);
  return DecodeResult::ok;
}

std::string random_secret() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  unsigned char bytes[16] = {};
  in.read(reinterpret_cast<char*>(bytes), sizeof bytes);
  std::string out;
  for (unsigned char b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

}  // namespace hpclaunch
