// `hpclaunch logs --rank`: which rank a line belongs to, and cutting a growing file into whole lines.
#include <doctest/doctest.h>

#include "jobs/log_filter.h"

namespace jobs_log_filter_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("jobs_log_filter");

TEST_CASE("the agent's [host:rank] prefix and srun -l's rank: prefix name the rank") {
  CHECK(line_rank("[n1:3] epoch 1 step 10/100 loss 0.5") == 3);
  CHECK(line_rank("[vm.example.org:12] x") == 12);
  CHECK(line_rank("0: hello") == 0);
  CHECK(line_rank(" 7: padded by srun --label") == 7);
  CHECK(line_rank("15:") == 15);
  CHECK(line_rank("[1,0]<stdout>:epoch 1 step 10/100") == 0);  // mpirun --tag-output
  CHECK(line_rank("[1,13]<stderr>:warning") == 13);
  CHECK(line_rank("[1,2]<stdout>:") == 2);
  CHECK_FALSE(line_rank("[1,x]<stdout>:no rank").has_value());
  CHECK_FALSE(line_rank("[a,1]<stdout>:no job").has_value());
  CHECK_FALSE(line_rank("hpclaunch: agent n1 up").has_value());
  CHECK_FALSE(line_rank("epoch 1: loss 0.5").has_value());
  CHECK_FALSE(line_rank("[n1] no rank").has_value());
  CHECK_FALSE(line_rank("").has_value());
  CHECK_FALSE(line_rank("12:30:01 a time").has_value());
}

TEST_CASE("without --rank every line is kept; with it only that rank's") {
  CHECK(keep_line("anything", std::nullopt));
  CHECK(keep_line("[n2:5] x", 5));
  CHECK_FALSE(keep_line("[n2:5] x", 1));
  CHECK_FALSE(keep_line("[n2:15] x", 1));
  CHECK_FALSE(keep_line("batch script line", 0));
  CHECK(keep_line("1: y", 1));
}

}  // namespace jobs_log_filter_test
