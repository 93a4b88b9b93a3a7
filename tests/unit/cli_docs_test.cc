// The man pages and completion scripts are made from each command's --help: parsing CLI11's layout back, roff,
// and the three completion scripts.
#include <doctest/doctest.h>

#include "cli/commands.h"
#include "cli/completion.h"
#include "cli/help_model.h"
#include "cli/help_text.h"
#include "cli/man_page.h"

namespace cli_docs_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;

namespace {

// CLI11 2.1's layout, with the cases that are hard to split: a name longer than the column (its description on
// the next line), a name one space short of it, a default, a range check, a vector, a required positional.
const char* k_help =
    "Do things to jobs.\n"
    "Usage: hpclaunch thing [OPTIONS] JOB\n"
    "\n"
    "Positionals:\n"
    "  JOB TEXT REQUIRED           job id from `hpclaunch jobs`\n"
    "\n"
    "Options:\n"
    "  -h,--help                   Print this help message and exit\n"
    "  -N,--nodes INT=1            number of nodes\n"
    "  --rank INT:INT in [0 - 10]\n"
    "                              only this rank's lines\n"
    "  --module TEXT ...           module to load (repeatable)\n"
    "  --twentyseven-chars-aa TEXT one space before this text\n"
    "  --follow                    keep printing\n"
    "                              until the job ends\n"
    "\n"
    "\n"
    "Everything after -- is the command.\n";

}  // namespace

TEST_SUITE_BEGIN("cli_docs");

TEST_CASE("parse_help reads the description, usage, entries and notes of CLI11's help") {
  HelpModel h = parse_help(k_help);
  CHECK(h.description == "Do things to jobs.");
  CHECK(h.usage == "[OPTIONS] JOB");
  CHECK(h.notes == "Everything after -- is the command.");
  REQUIRE(h.entries.size() == 7);
  CHECK(h.entries[0].positional);
  CHECK(h.entries[0].names == std::vector<std::string>{"JOB"});
  CHECK(h.entries[0].value == "TEXT");
  CHECK(h.entries[1].names == std::vector<std::string>{"-h", "--help"});
  CHECK(h.entries[1].value.empty());
  CHECK(h.entries[2].value == "INT=1");
  CHECK(h.entries[2].text == "number of nodes");
  CHECK(h.entries[3].value == "INT:INT in [0 - 10]");
  CHECK(h.entries[3].text == "only this rank's lines");
  CHECK(h.entries[4].repeatable);
  CHECK(h.entries[4].value == "TEXT");
  CHECK(h.entries[5].names == std::vector<std::string>{"--twentyseven-chars-aa"});
  CHECK(h.entries[5].text == "one space before this text");
  CHECK(h.entries[6].text == "keep printing until the job ends");
  CHECK(find_entry(h, "--nodes") == &h.entries[2]);
  CHECK(find_entry(h, "--nope") == nullptr);
}

TEST_CASE("every command's own --help parses into options that name it") {
  for (const auto& d : command_docs()) {
    CAPTURE(d.name);
    if (d.name == "check") continue;  // the probe's options, not ours
    CHECK(find_entry(d.help, "--help") != nullptr);
    CHECK_FALSE(d.help.description.empty());
  }
  const Command* submit = nullptr;
  for (const auto& c : commands())
    if (std::string(c.name) == "submit") submit = &c;
  REQUIRE(submit);
  HelpModel h = parse_help(command_help(*submit));
  REQUIRE(find_entry(h, "--site"));
  CHECK(find_entry(h, "--site")->value == "TEXT");
  CHECK(find_entry(h, "--dry-run")->value.empty());
  CHECK(find_entry(h, "--module")->repeatable);
  // --remote: once, in parse_or_throw, for the commands the table marks; submit's token stays hidden.
  for (const auto& c : commands()) {
    if (std::string(c.name) == "check") continue;
    CAPTURE(c.name);
    CHECK((find_entry(parse_help(command_help(c)), "--remote") != nullptr) == c.remote);
  }
  CHECK(find_entry(h, "--submit-token") == nullptr);
}

TEST_CASE("roff_escape keeps text from being read as requests") {
  CHECK(roff_escape("a-b") == "a\\-b");
  CHECK(roff_escape("C:\\x") == "C:\\ex");
  CHECK(roff_escape(".TH x\n'quote\nok") == "\\&.TH x\n\\&'quote\nok");
}

TEST_CASE("a command's man page has its name, synopsis, arguments and options") {
  CommandDoc d{"thing", "do things", parse_help(k_help)};
  std::string page = command_man_page(d, "9.9");
  CHECK(page.rfind(".TH HPCLAUNCH-THING 1 \"\" \"hpclaunch 9.9\"", 0) == 0);
  CHECK(page.find(".SH NAME\nhpclaunch\\-thing \\- do things\n") != std::string::npos);
  CHECK(page.find("\\fBhpclaunch thing\\fR [OPTIONS] JOB") != std::string::npos);
  CHECK(page.find(".SH ARGUMENTS\n.TP\n\\fIJOB\\fR \\fITEXT\\fR\n") != std::string::npos);
  CHECK(page.find("\\fB\\-N, \\-\\-nodes\\fR \\fIINT=1\\fR\nnumber of nodes\n") != std::string::npos);
  CHECK(page.find(".PP\nEverything after \\-\\- is the command.\n") != std::string::npos);
  std::string main = main_man_page({d}, "9.9");
  CHECK(main.find("\\fBhpclaunch thing\\fR\ndo things (\\fB\\%hpclaunch\\-thing\\fR(1))") != std::string::npos);
}

TEST_CASE("value_kind knows sites, launchers, jobs, files and flags") {
  HelpModel h = parse_help(command_help(commands().front()));  // submit
  CHECK(value_kind("submit", *find_entry(h, "--site")) == ValueKind::site);
  CHECK(value_kind("submit", *find_entry(h, "--launcher")) == ValueKind::launcher);
  CHECK(value_kind("submit", *find_entry(h, "--after")) == ValueKind::job);
  CHECK(value_kind("submit", *find_entry(h, "--spec")) == ValueKind::file);
  CHECK(value_kind("submit", *find_entry(h, "--nodes")) == ValueKind::none);
  CHECK(value_kind("submit", *find_entry(h, "--dry-run")) == ValueKind::flag);
  HelpModel t = parse_help(k_help);
  CHECK(value_kind("thing", *find_entry(t, "JOB")) == ValueKind::job);
}

TEST_CASE("the completion scripts offer commands, options and the values hpclaunch knows") {
  std::vector<CommandDoc> docs = {{"submit", "submit it", parse_help(command_help(commands().front()))},
                                  {"thing", "do things", parse_help(k_help)}};
  std::vector<std::string> launchers = {"agent", "srun"};
  std::string bash = bash_completion(docs, launchers, "9.9");
  CHECK(bash.find("compgen -W \"submit thing --help --version\"") != std::string::npos);
  CHECK(bash.find("--launcher) COMPREPLY=($(compgen -W \"agent srun\"") != std::string::npos);
  CHECK(bash.find("--site) COMPREPLY=($(compgen -W \"$(_hpclaunch_sites \"$self\")\"") != std::string::npos);
  CHECK(bash.find("--dry-run --detach --check --no-check --remote --\"") != std::string::npos);  // a command after --
  CHECK(bash.find("complete -o bashdefault -o default -F _hpclaunch hpclaunch") != std::string::npos);
  std::string zsh = zsh_completion(docs, launchers, "9.9");
  CHECK(zsh.rfind("#compdef hpclaunch\n", 0) == 0);
  // The option's text is submit's --help (the launchers' registry: "agent (one task per node), srun, ... (one task per
  // GPU)"); its values, the launchers given.
  const std::string launcher_text = find_entry(docs.front().help, "--launcher")->text;
  CHECK(launcher_text.rfind("agent (one task per node), srun, ", 0) == 0);
  CHECK(zsh.find("'--launcher[" + launcher_text + "]:TEXT:(agent srun)'") != std::string::npos);
  CHECK(zsh.find("'*--module[module to load (repeatable)]:TEXT: '") != std::string::npos);
  CHECK(zsh.find("':JOB:_hpclaunch_jobs'") != std::string::npos);
  CHECK(zsh.find("'--rank[only this rank'\\''s lines]:INT\\:INT in \\[0 - 10\\]: '") != std::string::npos);
  std::string fish = fish_completion(docs, launchers, "9.9");
  CHECK(fish.find("complete -c hpclaunch -n __fish_use_subcommand -a thing -d 'do things'") != std::string::npos);
  CHECK(fish.find("-s N -l nodes -x -d 'number of nodes'") != std::string::npos);
  CHECK(fish.find("-l site -x -a '(__hpclaunch_sites)'") != std::string::npos);
  CHECK(fish.find("-l rank -x -d 'only this rank\\'s lines'") != std::string::npos);
}

TEST_SUITE_END();

}  // namespace cli_docs_test
