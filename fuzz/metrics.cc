// Fuzz target: hpclaunch-train's --metrics file as its readers take it: `plot` whole and strictly
// (launcher/jobs/run_curves.cc), `wait` the tail of a file being written (launcher/jobs/latest_records.cc), and the
// trainer's cut on resume (trainer/metrics_writer.cc).
// Bad input may only throw hpclaunch::Error; a file it accepts has a curve.
#include "fuzz_check.h"
#include "jobs/latest_records.h"
#include "jobs/run_curves.h"
#include "metrics_writer.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(fuzz_text(data, size));
  try {
    hpclaunch::RunCurves m = hpclaunch::parse_run_curves(text, "fuzz.jsonl");
    FUZZ_CHECK(!m.curves.empty());  // a file it accepts has something to draw
  } catch (const hpclaunch::Error&) {
  }
  hpclaunch::latest_records(text);
  const std::string kept = hpctrain::metrics_up_to(text, 5);
  FUZZ_CHECK(kept.size() <= text.size() && (kept.empty() || kept.back() == '\n'));
  return 0;
}
