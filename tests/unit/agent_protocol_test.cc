// The agents' wire format (agent/protocol.h), pure: hellos, sealed lines, and every way a line is refused: a
// tampered byte, a wrong key, a message replayed on its own connection or on another (other nonces), reflected
// back to its sender, or not a message at all.
#include <doctest/doctest.h>

#include "agent/protocol.h"

namespace agent_protocol_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

const std::string k_agent_nonce(32, 'a');
const std::string k_store_nonce(32, '5');

// Both ends of one connection, hellos exchanged.
struct Pair {
  std::shared_ptr<const MessageKey> key;
  MessageChannel agent, store;
  explicit Pair(const std::string& secret, const std::string& store_nonce = k_store_nonce,
                const std::string& agent_secret = "")
      : key(std::make_shared<MessageKey>(secret)),
        agent(agent_secret.empty() ? key : std::make_shared<MessageKey>(agent_secret), Side::agent, k_agent_nonce),
        store(key, Side::store, store_nonce) {
    REQUIRE(agent.take_hello(strip(store.hello())));
    REQUIRE(store.take_hello(strip(agent.hello())));
  }
  static std::string strip(std::string line) {
    REQUIRE(line.back() == '\n');
    line.pop_back();
    return line;
  }
};

const nlohmann::json k_join = {{"type", "join"}, {"node_rank", 1}, {"host", "n1"}, {"nproc", 4}, {"round", 0}};

}  // namespace

TEST_SUITE_BEGIN("agent protocol");

TEST_CASE("a sealed message opens on the other side of its connection, in order") {
  Pair p("s3cret");
  nlohmann::json m;
  CHECK(p.store.open(Pair::strip(p.agent.seal(k_join)), &m) == DecodeResult::ok);
  CHECK(m == k_join);
  CHECK(p.store.open(Pair::strip(p.agent.seal(nlohmann::json{{"type", "hb"}})), &m) == DecodeResult::ok);
  CHECK(m["type"] == "hb");
  CHECK(p.agent.open(Pair::strip(p.store.seal(nlohmann::json{{"type", "finish"}})), &m) == DecodeResult::ok);
  CHECK(m["type"] == "finish");
}

TEST_CASE("the secret never travels: not in the hello, not in a message") {
  Pair p("0ddba11c0ffee0ddba11c0ffee123456");
  CHECK(p.agent.hello().find("0ddba11") == std::string::npos);
  CHECK(p.agent.seal(k_join).find("0ddba11") == std::string::npos);
}

TEST_CASE("any one byte changed in a sealed line is refused") {
  Pair p("s3cret");
  const std::string line = Pair::strip(p.agent.seal(k_join));
  for (size_t i = 0; i < line.size(); ++i) {
    Pair fresh("s3cret");
    std::string genuine = Pair::strip(fresh.agent.seal(k_join));
    REQUIRE(genuine == line);  // same nonces, same count: the same bytes
    std::string bad = genuine;
    bad[i] = bad[i] == '1' ? '2' : '1';
    nlohmann::json m;
    DecodeResult r = fresh.store.open(bad, &m);
    CAPTURE(i);
    CHECK(r != DecodeResult::ok);
    CHECK(m.is_null());
    CHECK(fresh.store.open(genuine, &m) == DecodeResult::ok);  // the refused one did not count
  }
}

TEST_CASE("a message sealed with another secret is refused") {
  Pair p("s3cret", k_store_nonce, "guess");
  nlohmann::json m;
  CHECK(p.store.open(Pair::strip(p.agent.seal(k_join)), &m) == DecodeResult::bad_secret);
}

TEST_CASE("a message replayed on its own connection is refused, as is one out of order") {
  Pair p("s3cret");
  nlohmann::json m;
  const std::string first = Pair::strip(p.agent.seal(k_join));
  const std::string second = Pair::strip(p.agent.seal(nlohmann::json{{"type", "hb"}}));
  CHECK(p.store.open(second, &m) == DecodeResult::replayed);  // the first is missing
  CHECK(p.store.open(first, &m) == DecodeResult::ok);
  CHECK(p.store.open(first, &m) == DecodeResult::replayed);
  CHECK(p.store.open(second, &m) == DecodeResult::ok);
}

TEST_CASE("a message captured on one connection is refused on another (another nonce)") {
  Pair captured("s3cret");
  Pair other("s3cret", std::string(32, '7'));
  const std::string line = Pair::strip(captured.agent.seal(k_join));
  nlohmann::json m;
  CHECK(other.store.open(line, &m) == DecodeResult::bad_secret);
}

TEST_CASE("a message reflected back to its sender is refused") {
  Pair p("s3cret");
  nlohmann::json m;
  CHECK(p.agent.open(Pair::strip(p.agent.seal(k_join)), &m) == DecodeResult::bad_secret);
}

TEST_CASE("hellos: exactly the prefix and 32 hex digits, once") {
  CHECK(parse_hello("hpclaunch-agent 1 " + k_agent_nonce) == k_agent_nonce);
  CHECK_FALSE(parse_hello("hpclaunch-agent 2 " + k_agent_nonce));
  CHECK_FALSE(parse_hello("hpclaunch-agent 1 " + k_agent_nonce + "0"));
  CHECK_FALSE(parse_hello("hpclaunch-agent 1 " + std::string(32, 'G')));
  CHECK_FALSE(parse_hello(R"({"type":"join","secret":"s3cret"})"));  // what an agent before HMACs sent
  CHECK_FALSE(parse_hello(""));
  MessageChannel c(std::make_shared<MessageKey>("k"), Side::store, random_nonce());
  CHECK_FALSE(c.ready());
  nlohmann::json m;
  CHECK(c.open("0 " + std::string(64, '0') + R"( {"type":"hb"})", &m) == DecodeResult::malformed);  // before hello
  CHECK(c.take_hello("hpclaunch-agent 1 " + k_agent_nonce));
  CHECK_FALSE(c.take_hello("hpclaunch-agent 1 " + k_store_nonce));
  CHECK(random_nonce().size() == 32);
  CHECK(random_nonce() != random_nonce());
  CHECK(random_secret().size() == 32);
}

TEST_CASE("lines that are not SEQ MAC JSON are malformed; JSON is looked at only after the MAC") {
  Pair p("s3cret");
  nlohmann::json m;
  const std::string mac(64, 'a');
  for (std::string bad : {std::string(""), std::string("garbage"), std::string(" ") + mac + " {}", "x " + mac + " {}",
                          "0 " + mac.substr(1) + " {}", "0 " + mac + "{}", "123456789012345678901 " + mac + " {}"})
    CHECK(p.store.open(bad, &m) == DecodeResult::malformed);
  CHECK(p.store.open("0 " + mac + " not json", &m) == DecodeResult::bad_secret);
  ChannelKeys keys{p.key, Side::agent, k_agent_nonce, k_store_nonce};
  ChannelKeys store_keys{p.key, Side::store, k_store_nonce, k_agent_nonce};
  for (const char* json : {"not json", "[1]", R"({"no":"type"})", R"({"type":3})"}) {
    std::string line = seal_message(keys, 0, json);
    line.pop_back();
    CHECK(open_message(line, store_keys, 0, &m) == DecodeResult::malformed);
  }
}

TEST_SUITE_END();

}  // namespace agent_protocol_test
