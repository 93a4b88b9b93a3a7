// The agents' wire format: one JSON object per line, each carrying the job's secret. A message without the
// right secret is refused (and logged by the receiver); nothing from the network is used before that check.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

inline constexpr size_t k_max_message = 1 << 20;

// `msg` with the secret added, as one line.
std::string encode_message(nlohmann::json msg, const std::string& secret);

enum class DecodeResult { ok, malformed, bad_secret };
// Parses one line and checks its secret in constant time; `out` has no "secret" afterwards.
DecodeResult decode_message(std::string_view line, const std::string& secret, nlohmann::json* out);

// A random secret for a job that has none (one node only): 32 hex digits from /dev/urandom.
std::string random_secret();

}  // namespace hpclaunch
