// A failed run's root cause (agent/failure.h): the summary line, TorchElastic error files, failure.json's numbers,
// and which node a failure blames.
#include <doctest/doctest.h>

#include <csignal>

#include <nlohmann/json.hpp>

#include "agent/failure.h"

namespace agent_failure_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("agent failure");

TEST_CASE("the summary names host, rank, local rank and exit code or signal name") {
  Failure f;
  f.host = "n2";
  f.rank = 3;
  f.local_rank = 1;
  f.exit_code = 1;
  CHECK(describe(f) == "rank 3 (local rank 1) on n2 exited with code 1");
  f.signal = 9;
  CHECK(describe(f) == "rank 3 (local rank 1) on n2 was killed by SIGKILL");
  f.error = "ValueError: bad\nline 2";
  CHECK(format_summary(f, 1, 2) ==
        "root cause: rank 3 (local rank 1) on n2 was killed by SIGKILL (after 1 of 2 restarts)\n"
        "error file of rank 3:\n  ValueError: bad\n  line 2");
  // Without an error file: the worker's last lines of stderr, in the summary and in failure.json.
  f.error.clear();
  f.stderr_tail = "Traceback (most recent call last):\nOSError: /ckpt is full\n";
  CHECK(format_summary(f, 1, 2) ==
        "root cause: rank 3 (local rank 1) on n2 was killed by SIGKILL (after 1 of 2 restarts)\n"
        "last lines of rank 3's stderr:\n  Traceback (most recent call last):\n  OSError: /ckpt is full");
  nlohmann::json j = f;
  CHECK(j["stderr_tail"] == f.stderr_tail);
  CHECK(j.get<Failure>().stderr_tail == f.stderr_tail);
  f.error = "ValueError: bad";  // the error file says more: the tail is not quoted
  CHECK(format_summary(f, 0, 0).find("stderr") == std::string::npos);
  Failure lost;
  lost.reason = "the agent on n2 (node 1) was lost";
  CHECK(format_summary(lost, 0, 0) == "root cause: the agent on n2 (node 1) was lost");
}

TEST_CASE("TorchElastic error files are summarised to message and traceback") {
  CHECK(summarize_error_file(R"({"message": {"message": "RuntimeError: boom", "extraInfo": )"
                             R"({"py_callstack": "Traceback...\n  raise\n", "timestamp": "1"}}})") ==
        "RuntimeError: boom\nTraceback...\n  raise");
  CHECK(summarize_error_file(R"({"message": "plain"})") == "plain");
  CHECK(summarize_error_file("not json") == "not json");
  // A worker's file of any shape is summarized, never thrown on (t0065's failure_record found these).
  CHECK(summarize_error_file(R"({"message": 5})") == R"({"message": 5})");
  CHECK(summarize_error_file(R"({"message": {"message": 7, "extraInfo": {"py_callstack": []}}})").empty());
  CHECK(summarize_error_file("0123456789", 4) == "...6789");
}

TEST_CASE("a failure record whose number is past an int's range is a type error, not undefined behaviour") {
  // nlohmann casts a float to int unchecked (found by fuzz/failure_record.cc); `exclude --from-failure` and the
  // store report a type error as they do for a string in that place.
  auto j = nlohmann::json::parse(R"({"host": "n1", "rank": -1.1e47})");
  CHECK_THROWS_AS(j.get<Failure>(), nlohmann::json::type_error);
  CHECK(nlohmann::json::parse(R"({"host": "n1", "rank": 3.0})").get<Failure>().rank == 3);
}

TEST_CASE("a failure blames a node only when the node is at fault: a lost agent or a worker dead of SIGBUS") {
  Failure lost;
  lost.host = "n2";
  lost.node_lost = true;
  lost.reason = "the agent on n2 (node 1) was lost";
  CHECK(faulty_node(lost) == "n2");
  Failure bus{"n3", 2, 9, 1, 0, SIGBUS, "", ""};
  CHECK(faulty_node(bus) == "n3");
  Failure code{"n3", 2, 9, 1, 1, 0, "", ""};
  CHECK(faulty_node(code).empty());  // the program's own failure
  Failure killed{"n3", 2, 9, 1, 0, SIGKILL, "", ""};
  CHECK(faulty_node(killed).empty());  // the OOM killer or a user: not the node's fault
  nlohmann::json j = lost;
  CHECK(j.get<Failure>().node_lost);
}

TEST_SUITE_END();

}  // namespace agent_failure_test
