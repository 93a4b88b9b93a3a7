// The util layer (it knows nothing of hpclaunch): strings, shell quoting, Error's one line, the line splitter.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>

#include "util/error.h"
#include "util/file.h"
#include "util/line_splitter.h"
#include "util/shell.h"
#include "util/strings.h"

namespace util_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

TEST_SUITE_BEGIN("util");

TEST_CASE("split keeps empty fields and join undoes it") {
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("", ',') == std::vector<std::string>{""});
  CHECK(join(split("x:y:z", ':'), ":") == "x:y:z");
}

TEST_CASE("ascii_lower lowers A-Z only") {
  CHECK(ascii_lower("Node:SPAN,PE=2") == "node:span,pe=2");
  CHECK(ascii_lower("0000:3B:00.0") == "0000:3b:00.0");
  CHECK(ascii_lower("\xC3\x89x") == "\xC3\x89x");  // UTF-8 bytes untouched
  CHECK(ascii_lower("") == "");
}

TEST_CASE("parse_int accepts whole decimal numbers only") {
  long long v = 0;
  CHECK(parse_int("42", &v));
  CHECK(v == 42);
  CHECK(parse_int("+7", &v));
  CHECK(v == 7);
  CHECK_FALSE(parse_int("4x", &v));
  CHECK_FALSE(parse_int("", &v));
  CHECK_FALSE(parse_int(" 4", &v));
}

TEST_CASE("parse_release reads N.N and N.N.N as numbers, and nothing else") {
  using R = std::optional<std::pair<int, int>>;
  CHECK(parse_release("24.11") == R({24, 11}));
  CHECK(parse_release("24.5") == R({24, 5}));
  CHECK(parse_release("25.05.3") == R({25, 5}));
  CHECK(*parse_release("23.2") < *parse_release("24.05"));
  CHECK(*parse_release("24.11") > *parse_release("24.5"));
  for (const char* bad : {"", "24", "24.", ".11", "24.11.3.1", "latest", "24.x", "+24.11", "24.-1", " 24.11"})
    CHECK_MESSAGE(!parse_release(bad), bad);
}

TEST_CASE("did you mean finds typos and stays quiet on nonsense") {
  std::vector<std::string> sites = {"perlmutter", "cc", "sockeye", "sockeye-pbs", "juwels-booster", "local"};
  CHECK(did_you_mean("perlmuter", sites) == " (did you mean 'perlmutter'?)");
  CHECK(did_you_mean("juwels", sites) == " (did you mean 'juwels-booster'?)");
  CHECK(did_you_mean("sockey", sites) == " (did you mean 'sockeye'?)");
  CHECK(did_you_mean("zzzzzzzz", sites).empty());
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("shell_quote leaves plain words alone and single-quotes the rest") {
  CHECK(shell_quote("train.py") == "train.py");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("$HOME") == "'$HOME'");
  CHECK(shell_quote("*.txt") == "'*.txt'");
  CHECK(shell_quote("K=V") == "'K=V'");
  CHECK(shell_quote("a\nb") == "'a\nb'");
  CHECK(shell_join({"python", "-c", "print(1)"}) == "python -c 'print(1)'");
}

TEST_CASE("an environment variable name is letters, digits and _, not starting with a digit") {
  CHECK(is_env_name("NCCL_DEBUG"));
  CHECK(is_env_name("_x1"));
  CHECK_FALSE(is_env_name("1X"));
  CHECK_FALSE(is_env_name("A-B"));
  CHECK_FALSE(is_env_name(""));
}

TEST_CASE("an Error reads as one line: where, what, fix") {
  Error e("--nodes", "0 is below 1", "use --nodes 1 or more");
  CHECK(std::string(e.what()) == "--nodes: 0 is below 1; use --nodes 1 or more");
  CHECK(e.exit_code() == k_exit_bad_input);
  CHECK(failure("sbatch", "exited 1").exit_code() == k_exit_failure);
}

TEST_CASE("a line tail keeps the last lines, each cut to its width") {
  LineTail t(2, 5);
  CHECK(t.text().empty());
  t.add("one");
  t.add("two");
  t.add("three and more");
  CHECK(t.text() == "two\nthree...\n");
  t.clear();
  CHECK(t.text().empty());
}

TEST_CASE("output is cut into whole lines, long ones in pieces") {
  std::vector<std::string> lines;
  auto emit = [&](std::string_view l) { lines.emplace_back(l); };
  LineSplitter s(8);
  s.feed("ab", emit);
  s.feed("c\nde\n\nf", emit);
  CHECK(lines == std::vector<std::string>{"abc", "de", ""});
  s.feed("0123456789", emit);
  CHECK(lines.back() == "f0123456");
  s.finish(emit);
  CHECK(lines.back() == "789");
}

TEST_CASE("format_table sizes each column from its widest cell") {
  const std::string t = format_table({{"NAME", "SCHED", "TITLE"},
                                      {"alps-clariden-uenv", "slurm", "CSCS"},
                                      {"ƒx", "pbs", ""}});
  CHECK(t ==
        "NAME                SCHED  TITLE\n"
        "alps-clariden-uenv  slurm  CSCS\n"
        "ƒx                  pbs\n");
  CHECK(format_table({}).empty());
}

TEST_CASE("write_file_atomic, synced or not, replaces a file whole and leaves no temporary file; sync_filesystem") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("hpclaunch-util-atomic-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string page = (dir / "page.html").string();
  for (bool sync : {true, false}) {
    CAPTURE(sync);
    REQUIRE(write_file_atomic(page, "old", 0644, sync));
    REQUIRE(write_file_atomic(page, "new page", 0644, sync));
    CHECK(read_file(page) == "new page");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  }
  CHECK(sync_filesystem(dir.string()));
  CHECK_FALSE(write_file_atomic((dir / "no" / "page.html").string(), "x", 0644, false));
  CHECK_FALSE(sync_filesystem((dir / "no").string()));
  fs::remove_all(dir);
}

TEST_SUITE_END();

TEST_CASE("split_escaped reads torchrun's comma lists: a doubled comma is one, empty items go") {
  CHECK(split_escaped("apple,orange", ',') == std::vector<std::string>{"apple", "orange"});
  CHECK(split_escaped("a,,b,c", ',') == std::vector<std::string>{"a,b", "c"});
  CHECK(split_escaped(",,", ',') == std::vector<std::string>{","});
  CHECK(split_escaped("", ',').empty());
  CHECK(split_escaped("x,,,y", ',') == std::vector<std::string>{"x,", "y"});
  CHECK(split_escaped(",a,", ',') == std::vector<std::string>{"a"});
}

TEST_CASE("contains_any finds any of the needles, and none in an empty list") {
  CHECK(contains_any("loss nan at step 3", {"inf", "nan"}));
  CHECK_FALSE(contains_any("loss 0.5", {"inf", "nan"}));
  CHECK_FALSE(contains_any("anything", {}));
}

}  // namespace util_test

