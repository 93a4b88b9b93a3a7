// Fuzz target: what a worker leaves for its agent and what the agents leave for `exclude`: the worker's error file
// (TORCHELASTIC_ERROR_FILE, any bytes a user's program wrote; agent/failure.cc summarizes it for the root-cause
// line) and the node-0 agent's failure.json that `exclude --from-failure` reads. The summary is bounded by its
// limit (plus the "..." of a cut), and a failure record that reads makes a root-cause line and writes back the same.
#include <nlohmann/json.hpp>

#include "agent/failure.h"
#include "fuzz_check.h"

using namespace hpclaunch;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fuzz_text(data, size);
  for (size_t limit : {size_t{16}, size_t{4096}}) FUZZ_CHECK(summarize_error_file(text, limit).size() <= limit + 3);
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return 0;
  Failure f;
  try {
    f = j.get<Failure>();  // a field of the wrong type: nlohmann's own exception, which exclude reports
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  (void)describe(f);
  (void)faulty_node(f);
  FUZZ_CHECK(format_summary(f, 1, 3).rfind("root cause: ", 0) == 0);
  nlohmann::json back = f;
  FUZZ_CHECK(back.get<Failure>().host == f.host);
  return 0;
}
