// Fuzz target: the trainer's IDX reader (trainer/idx_file.cc), a data set file as --data-dir gives it (after
// gunzip). Bad input may only throw hpclaunch::Error; a file that reads holds exactly the bytes its dimensions
// say (the trainer hands both to torch::from_blob).
#include "fuzz_check.h"
#include "idx_file.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    hpctrain::IdxArray a = hpctrain::parse_idx(std::vector<uint8_t>(data, data + size), "fuzz.idx");
    uint64_t count = 1;
    bool empty = false;
    for (int64_t d : a.dims) {
      FUZZ_CHECK(d >= 0);
      empty = empty || d == 0;
      if (!empty) FUZZ_CHECK(!__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count));
    }
    FUZZ_CHECK((empty ? 0 : count) == a.data.size());
  } catch (const hpclaunch::Error&) {
  }
  return 0;
}
