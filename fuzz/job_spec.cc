// Fuzz target: job spec YAML, `submit --spec FILE` (plan/job_spec.cc). Bad input may only throw hpclaunch::Error.
#include "fuzz_check.h"
#include "plan/job_spec.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hpclaunch::JobRequest request;
  try {
    hpclaunch::read_job_spec("fuzz.yaml", std::string(fuzz_text(data, size)), &request);
  } catch (const hpclaunch::Error&) {
  }
  return 0;
}
