// Fuzz target: the agents' wire format (agent/protocol.cc) as a peer on the network sends it: a hello line, then
// sealed lines (SEQ MAC JSON). A line that opens has a string "type", reseals and opens back to the same message
// on a fresh pair of channels, and the fields the store reads from it throw at most nlohmann::json's own
// exceptions (store_server.cc logs those). Random bytes must never open (they would need the MAC).
#include "agent/failure.h"
#include "agent/protocol.h"
#include "fuzz_check.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const auto key = std::make_shared<const MessageKey>("0123456789abcdef0123456789abcdef");
  std::string text(fuzz_text(data, size));
  (void)parse_hello(text);
  // The fuzzer's line as the store's next message from an agent whose hello it took.
  const std::string n1 = "00000000000000000000000000000001", n2 = "00000000000000000000000000000002";
  auto hello = [](const std::string& nonce) {
    std::string h = hello_line(nonce);
    h.pop_back();  // lines are taken without their '\n'
    return h;
  };
  MessageChannel store(key, Side::store, n1);
  FUZZ_CHECK(store.take_hello(hello(n2)));
  nlohmann::json msg;
  DecodeResult r = store.open(text, &msg);
  (void)describe(r);
  if (r != DecodeResult::ok) return 0;
  FUZZ_CHECK(msg.contains("type") && msg["type"].is_string());
  // A genuine round trip: sealed by an agent, opened by the store.
  MessageChannel a(key, Side::agent, n2), s(key, Side::store, n1);
  FUZZ_CHECK(a.take_hello(hello(n1)));
  FUZZ_CHECK(s.take_hello(hello(n2)));
  std::string line = a.seal(msg);
  line.pop_back();
  nlohmann::json again;
  FUZZ_CHECK(s.open(line, &again) == DecodeResult::ok && again == msg);
  try {
    if (msg.contains("failure")) describe(msg.at("failure").get<Failure>());
    for (const char* k : {"node_rank", "nproc", "round"})
      if (msg.contains(k)) (void)msg.at(k).get<int>();
    if (msg.contains("host")) (void)msg.at("host").get<std::string>();
  } catch (const nlohmann::json::exception&) {
  }
  return 0;
}
