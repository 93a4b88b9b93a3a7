#include <doctest/doctest.h>

#include "dialect/hostlist.h"
#include "util/error.h"
#include "test_util.h"

namespace hostlist_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using Names = std::vector<std::string>;

TEST_SUITE_BEGIN("hostlist");

TEST_CASE("a plain name and a comma list stay as they are") {
  CHECK(expand_hostlist("nid001000") == Names{"nid001000"});
  CHECK(expand_hostlist("a,b,c") == Names{"a", "b", "c"});
  CHECK(expand_hostlist("") == Names{});
}

TEST_CASE("a bracket range keeps the zero padding of its low bound") {
  CHECK(expand_hostlist("nid[001000-001003,001010]") ==
        Names{"nid001000", "nid001001", "nid001002", "nid001003", "nid001010"});
  CHECK(expand_hostlist("n[08-10]") == Names{"n08", "n09", "n10"});
  CHECK(expand_hostlist("n[8-10]") == Names{"n8", "n9", "n10"});
  CHECK(expand_hostlist("n[008-10]") == Names{"n008", "n009", "n010"});
  CHECK(expand_hostlist("n[1-02]") == Names{"n1", "n2"});
  CHECK(expand_hostlist("n[1-3,05]") == Names{"n1", "n2", "n3", "n05"});
  CHECK(expand_hostlist("nid0[1-3]") == Names{"nid01", "nid02", "nid03"});
  CHECK(expand_hostlist("n[5]") == Names{"n5"});
}

TEST_CASE("groups and single names mix at the top level") {
  CHECK(expand_hostlist("a[1-2],b3") == Names{"a1", "a2", "b3"});
  CHECK(expand_hostlist("x[1-2]y[5,7-8],z1") == Names{"x1y5", "x1y7", "x1y8", "x2y5", "x2y7", "x2y8", "z1"});
  CHECK(expand_hostlist("n[1-2],n[3-4]x[1-2]") == Names{"n1", "n2", "n3x1", "n3x2", "n4x1", "n4x2"});
}

TEST_CASE("two bracket groups expand with the first slowest") {
  CHECK(expand_hostlist("r[1-2]n[3-4]") == Names{"r1n3", "r1n4", "r2n3", "r2n4"});
  CHECK(expand_hostlist("n[1-2][3-4]") == Names{"n13", "n14", "n23", "n24"});
}

TEST_CASE("three bracket groups expand in Slurm's order: last fastest, then the first") {
  CHECK(expand_hostlist("a[1-2]b[1-2]c[1-2]") ==
        Names{"a1b1c1", "a1b1c2", "a2b1c1", "a2b1c2", "a1b2c1", "a1b2c2", "a2b2c1", "a2b2c2"});
}

TEST_CASE("duplicates are kept and empty names skipped, as scontrol does") {
  CHECK(expand_hostlist("x[1,1]") == Names{"x1", "x1"});
  CHECK(expand_hostlist("a,,b") == Names{"a", "b"});
  CHECK(expand_hostlist(",a, b\tc,") == Names{"a", "b", "c"});
}

TEST_CASE("malformed lists are errors naming the list and the problem") {
  auto message = [](std::string_view list) {
    return test::error_of_call([&] { expand_hostlist(list, "SLURM_JOB_NODELIST"); });
  };
  CHECK(message("n[1-2") == "SLURM_JOB_NODELIST: malformed hostlist 'n[1-2': '[' without ']'; write it as Slurm "
                            "does, e.g. nid[001000-001003,001010] or a[1-2],b3");
  CHECK(message("n1-2]").find("']' without '['") != std::string::npos);
  CHECK(message("n[3-1]").find("range '3-1' goes down") != std::string::npos);
  CHECK(message("n[]").find("range '' is not N or N-M") != std::string::npos);
  CHECK(message("n[a-b]").find("range 'a-b'") != std::string::npos);
  CHECK(message("n[1-]").find("range '1-'") != std::string::npos);
  CHECK(message("n[-2]").find("range '-2'") != std::string::npos);
  CHECK(message("n[1,]").find("range ''") != std::string::npos);
  CHECK(message("n[1 - 2]").find("range '1 - 2'") != std::string::npos);
  CHECK(message("n[[1]]").find("nested '['") != std::string::npos);
  CHECK(message("n[1-2]-ib").find("text '-ib' after the last ']'") != std::string::npos);
  CHECK(message("n[1-70000]").find("more than 65536 hosts") != std::string::npos);
  CHECK(message("n[1-2]x[").find("'[' without ']'") != std::string::npos);
}

TEST_CASE("a name past a host name's length, or an expansion past 16 MiB of names, is refused before it is made") {
  auto message = [](std::string_view list) {
    return test::error_of_call([&] { expand_hostlist(list, "SLURM_JOB_NODELIST"); });
  };
  const std::string long_text(250, 'x');
  CHECK(expand_hostlist(long_text + "[1-2]", "L").size() == 2);  // 251 characters: a host name
  CHECK(message(long_text + "[1-100000]").find("more than 65536 hosts") != std::string::npos);
  CHECK(message(long_text + "[000001-000002]") ==
        "SLURM_JOB_NODELIST: malformed hostlist '" + long_text + "[000001-000002]': a host name of 256 characters (a "
        "host name has at most 255); write it as Slurm does, e.g. nid[001000-001003,001010] or a[1-2],b3");
  CHECK(message(std::string(256, 'y')).find("a host name of 256 characters") != std::string::npos);
  // Like the fuzzer's input (fuzz/corpus/hostlist/oom-long-names): 1.2 million names of 211 characters, which ran
  // it out of 2 GB; refused after 16 MiB of them.
  CHECK(message("a[0-5224]" + std::string(200, 'b') + "[00-25][00-2][00-2]").find("more than 16 MiB of host names") !=
        std::string::npos);
  // 1,000 names of 250 characters, 1,000 times over: 250 MB of names, under the host count.
  CHECK(message(std::string(246, 'z') + "[000-999][000-999]").find("more than 16 MiB of host names") != std::string::npos);
}

TEST_CASE("tasks per node expands Slurm's (xN) repeats") {
  CHECK(expand_tasks_per_node("4(x2),3") == std::vector<int>{4, 4, 3});
  CHECK(expand_tasks_per_node("2") == std::vector<int>{2});
  CHECK(expand_tasks_per_node("2(x3)") == std::vector<int>{2, 2, 2});
  CHECK(expand_tasks_per_node("1,2,1") == std::vector<int>{1, 2, 1});
  for (const char* bad : {"", "4(x)", "4(2)", "x", "0", "4(x2", "4(x0)", "-1", "4,,2"})
    CHECK_THROWS_AS(expand_tasks_per_node(bad, "SLURM_TASKS_PER_NODE"), Error);
}

TEST_SUITE_END();

}  // namespace hostlist_test
