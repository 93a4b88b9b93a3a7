// Fuzz target: the agents' wire format (agent/protocol.cc), one line as a peer on the network sends it. A line
// that decodes has its secret removed and a string "type", encodes and decodes back to the same message, and
// the fields the store reads from it throw at most nlohmann::json's own exceptions (store_server.cc logs those).
#include "agent/failure.h"
#include "agent/protocol.h"
#include "fuzz_check.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string secret = "0123456789abcdef0123456789abcdef";
  nlohmann::json msg;
  if (decode_message(fuzz_text(data, size), secret, &msg) != DecodeResult::ok) return 0;
  FUZZ_CHECK(!msg.contains("secret") && msg["type"].is_string());
  nlohmann::json again;
  FUZZ_CHECK(decode_message(encode_message(msg, secret), secret, &again) == DecodeResult::ok);
  FUZZ_CHECK(again == msg);
  try {
    if (msg.contains("failure")) describe(msg.at("failure").get<Failure>());
    for (const char* key : {"node_rank", "nproc", "round"})
      if (msg.contains(key)) (void)msg.at(key).get<int>();
    if (msg.contains("host")) (void)msg.at("host").get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
