#include <doctest/doctest.h>

#include "util/time_limit.h"

namespace time_limit_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("time_limit");

TEST_CASE("every sbatch time form parses to seconds") {
  CHECK(parse_time_limit("30") == 1800);              // MM
  CHECK(parse_time_limit("90") == 5400);              // minutes past an hour are fine
  CHECK(parse_time_limit("5:30") == 330);             // MM:SS
  CHECK(parse_time_limit("01:00:00") == 3600);        // HH:MM:SS
  CHECK(parse_time_limit("48:00:00") == 172800);      // hours past a day
  CHECK(parse_time_limit("2-0") == 172800);           // D-HH
  CHECK(parse_time_limit("1-12") == 129600);
  CHECK(parse_time_limit("1-12:30") == 131400);       // D-HH:MM
  CHECK(parse_time_limit("1-00:00:01") == 86401);     // D-HH:MM:SS
}

TEST_CASE("malformed or zero limits are refused") {
  for (const char* bad : {"", "0", "00:00:00", "abc", "1:2:3:4", "-5", "1-", "-1:00", "10:60", "1:00:60",
                          "1-1:60", "1--2", "+5", "1.5", " 5", "5 ", "1-2:3:4:5", "1:-2"})
    CHECK_MESSAGE(!parse_time_limit(bad).has_value(), bad);
}

TEST_CASE("limits past the largest sbatch takes are refused, not wrapped around") {
  // Found by fuzz/time_limit.cc: the days or minutes overflowed, and 213503982334602 days read as 61184 s.
  CHECK(!parse_time_limit("213503982334602-00").has_value());
  CHECK(!parse_time_limit("0222222220222022230:1").has_value());
  CHECK(!parse_time_limit("99999999999999999:00:00").has_value());
  // Slurm keeps a limit in minutes in 32 bits, its last two values meaning "infinite" and "no value".
  CHECK(parse_time_limit("4294967293") == 4294967293L * 60);
  CHECK(!parse_time_limit("4294967294").has_value());
}

TEST_CASE("limits are written as sbatch and PBS read them") {
  CHECK(format_slurm_time(1800) == "00:30:00");
  CHECK(format_slurm_time(86400) == "1-00:00:00");
  CHECK(format_slurm_time(129600 + 61) == "1-12:01:01");
  CHECK(format_pbs_time(1200) == "00:20:00");
  CHECK(format_pbs_time(129600) == "36:00:00");
  for (long s : {60L, 3599L, 86399L, 86400L, 604800L})
    CHECK(parse_time_limit(format_slurm_time(s)) == s);
}

TEST_SUITE_END();

}  // namespace time_limit_test
