// Fuzz target: warning-signal specs, sbatch --signal=[B:]SIG@SECONDS (util/warning_signal.cc).
#include <string>

#include "fuzz_check.h"
#include "util/warning_signal.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string name, err;
  int seconds = 0;
  if (hpclaunch::parse_warning_signal(fuzz_text(data, size), &name, &seconds, &err)) {
    FUZZ_CHECK(!name.empty() && name.rfind("SIG", 0) != 0);
    FUZZ_CHECK(seconds >= 1 && seconds <= 65535);
    std::string again;
    int again_seconds = 0;
    FUZZ_CHECK(hpclaunch::parse_warning_signal(name + "@" + std::to_string(seconds), &again, &again_seconds, &err));
    FUZZ_CHECK(again == name && again_seconds == seconds);
  } else {
    FUZZ_CHECK(!err.empty());
  }
  return 0;
}
