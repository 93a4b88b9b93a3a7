#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "remote/far_side.h"
#include "remote/ssh_argv.h"
#include "remote/submit_once.h"
#include "submit/binary_arch.h"
#include "util/error.h"
#include "util/file.h"
#include "test_util.h"

namespace remote_test {  // this file's names, apart from its unity batch's others (tests/CMakeLists.txt)

using namespace hpclaunch;
using Argv = std::vector<std::string>;

SshTarget target(const std::string& text) {
  std::string why;
  std::optional<SshTarget> t = parse_ssh_target(text, &why);
  REQUIRE_MESSAGE(t, why);
  CHECK(why.empty());
  return *t;
}

std::string refusal(const std::string& text) {
  std::string why;
  CHECK_FALSE(parse_ssh_target(text, &why));
  return why;
}

const std::string k_token = "0123456789abcdef0123456789abcdef";

std::string far_line(const RemoteCall& call) {
  std::string line;
  for (const auto& w : call.far_args) line += (line.empty() ? "" : " ") + (w.in_call_dir ? "<" + w.text + ">" : w.text);
  return line;
}

TEST_SUITE_BEGIN("remote");

TEST_CASE("a target is [USER@]HOST[:PORT], an IPv6 address in brackets") {
  SshTarget t = target("alice@login.example.org");
  CHECK(t.user == "alice");
  CHECK(t.host == "login.example.org");
  CHECK(t.port == 0);
  t = target("login01");
  CHECK(t.user.empty());
  CHECK(t.host == "login01");
  t = target("bob@198.18.77.254:2222");
  CHECK(t.host == "198.18.77.254");
  CHECK(t.port == 2222);
  t = target("[::1]:22");
  CHECK(t.host == "::1");
  CHECK(t.port == 22);
  CHECK(target("c@[fe80::1]").host == "fe80::1");
  CHECK(ssh_destination(target("a.b@h-1")) == "a.b@h-1");
  CHECK(ssh_destination(target("h_1")) == "h_1");
}

TEST_CASE("a target that ssh would read as an option, or that holds a shell's or a path's characters, is refused") {
  CHECK(refusal("-oProxyCommand=x") == "the host '-oProxyCommand=x' starts with '-' (ssh would read an option)");
  CHECK(refusal("-x@host") == "the user '-x' starts with '-' (ssh would read an option)");
  CHECK(refusal("") == "the host is empty");
  CHECK(refusal("@host") == "the user is empty");
  CHECK(refusal("alice@") == "the host is empty");
  CHECK(refusal("a b") == "the host 'a b' holds ' '");
  CHECK(refusal("host;rm") == "the host 'host;rm' holds ';'");
  CHECK(refusal("al'ice@h") == "the user 'al'ice' holds '''");
  CHECK(refusal("host:") == "nothing after ':' (a port: HOST:2222)");
  CHECK(refusal("host:0") == "the port '0' is not a number from 1 to 65535");
  CHECK(refusal("host:65536") == "the port '65536' is not a number from 1 to 65535");
  CHECK(refusal("host:22x") == "the port '22x' is not a number from 1 to 65535");
  CHECK(refusal("[::1") == "'[' without ']' around an IPv6 address");
  CHECK(refusal("[::1]x") == "'x' after the address's ']'");
  CHECK(refusal("[::1]:") == "the port '' is not a number from 1 to 65535");
}

TEST_CASE("--remote is taken out of the command line before `--`, spaced or glued; without a value it is refused") {
  std::optional<RemoteFlag> f = take_remote_flag({"--json", "--remote", "a@h", "17"});
  REQUIRE(f);
  CHECK(f->value == "a@h");
  CHECK(f->rest == Argv{"--json", "17"});
  f = take_remote_flag({"--remote=h:22", "--site", "x", "--", "python", "--remote", "y"});
  REQUIRE(f);
  CHECK(f->value == "h:22");
  CHECK(f->rest == Argv{"--site", "x", "--", "python", "--remote", "y"});
  CHECK_FALSE(take_remote_flag({"--site", "x", "--", "python", "--remote", "y"}));  // the job's own
  CHECK_FALSE(take_remote_flag({}));
  CHECK(test::error_of_call([] { take_remote_flag({"17", "--remote"}); }) ==
        "--remote: needs a value; give USER@HOST, or a site whose profile names its login_host");
  CHECK(test::error_of_call([] { take_remote_flag({"--remote", "--", "x"}); }).starts_with("--remote: needs a value"));
}

TEST_CASE("--remote SITE connects to the profile's login_host; any other value is the target itself") {
  auto sites = [](const std::string& name) -> std::string { return name == "perlmutter" ? "alice@pm.example.org" : ""; };
  CHECK(ssh_destination(remote_target("perlmutter", sites)) == "alice@pm.example.org");
  CHECK(ssh_destination(remote_target("frontier", sites)) == "frontier");  // no login_host: an ssh alias
  CHECK(ssh_destination(remote_target("bob@perlmutter", sites)) == "bob@perlmutter");  // not a plain name
  CHECK(test::error_of_call([&] { remote_target("a b", sites); }) ==
        "--remote: 'a b' is no ssh target: the host 'a b' holds ' '; give [USER@]HOST[:PORT], or a site whose profile "
        "names its login_host");
  auto broken = [](const std::string&) -> std::string { return "-oProxyCommand=x"; };
  CHECK(test::error_of_call([&] { remote_target("site", broken); })
            .starts_with("--remote: '-oProxyCommand=x' is no ssh target: the host '-oProxyCommand=x' starts with '-'"));
}

TEST_CASE("the connection's socket folder leaves room for ssh's name of the socket") {
  CHECK(ssh_control_dir("/run/user/1000", "/tmp", 1000) == "/run/user/1000/hpclaunch-ssh");
  CHECK(ssh_control_dir("", "/tmp", 1000) == "/tmp/hpclaunch-ssh-1000");
  CHECK(ssh_control_dir("", "", 7) == "/tmp/hpclaunch-ssh-7");
  CHECK(ssh_control_dir("relative", "/var/tmp", 7) == "/var/tmp/hpclaunch-ssh-7");
  const std::string deep(60, 'd');
  CHECK(ssh_control_dir("/" + deep, "/tmp", 7) == "/tmp/hpclaunch-ssh-7");
  CHECK(ssh_control_dir("", "/" + deep, 7) == "/tmp/hpclaunch-ssh-7");
  for (const auto& dir : {ssh_control_dir("/" + std::string(34, 'r'), "/tmp", 0), ssh_control_dir("", "/tmp", 4294967295u)})
    CHECK(dir.size() + 1 + 40 + 17 <= 107);
}

TEST_CASE("every ssh shares the session's master connection; the far command is one argument after the destination") {
  SshSettings s;
  s.control_dir = "/run/user/1/hpclaunch-ssh";
  CHECK(ssh_argv(s, target("alice@h"), "sh -c 'true'") ==
        Argv{"ssh", "-o", "ControlMaster=auto", "-o", "ControlPath=/run/user/1/hpclaunch-ssh/%C", "-o",
             "ControlPersist=600", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4", "--", "alice@h",
             "sh -c 'true'"});
  s.config_file = "/t/ssh_config";
  s.batch = true;
  s.persist_s = 30;
  CHECK(ssh_argv(s, target("h:2222"), "x") ==
        Argv{"ssh", "-F", "/t/ssh_config", "-o", "ControlMaster=auto", "-o", "ControlPath=/run/user/1/hpclaunch-ssh/%C",
             "-o", "ControlPersist=30", "-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=4", "-o",
             "BatchMode=yes", "-p", "2222", "--", "h", "x"});
}

TEST_CASE("ssh may prompt on a terminal, or without one through an askpass program as OpenSSH allows it") {
  CHECK(ssh_may_prompt(true, {}));
  CHECK(ssh_may_prompt(true, {{"SSH_ASKPASS_REQUIRE", "never"}}));  // the terminal still
  CHECK_FALSE(ssh_may_prompt(false, {}));  // BatchMode=yes: fail at once, never wait
  CHECK_FALSE(ssh_may_prompt(false, {{"SSH_ASKPASS", "/usr/bin/ksshaskpass"}}));  // no display: ssh will not run it
  CHECK(ssh_may_prompt(false, {{"SSH_ASKPASS_REQUIRE", "force"}}));
  CHECK(ssh_may_prompt(false, {{"SSH_ASKPASS_REQUIRE", "Force"}}));  // ssh compares without case
  CHECK(ssh_may_prompt(false, {{"DISPLAY", ":0"}}));
  CHECK(ssh_may_prompt(false, {{"WAYLAND_DISPLAY", "wayland-0"}, {"SSH_ASKPASS_REQUIRE", "prefer"}}));
  CHECK_FALSE(ssh_may_prompt(false, {{"DISPLAY", ":0"}, {"SSH_ASKPASS_REQUIRE", "never"}}));
  CHECK_FALSE(ssh_may_prompt(false, {{"DISPLAY", ""}}));  // empty: no display, as ssh reads it
}

TEST_CASE("the far command runs under sh whatever the login shell, every argument quoted by the one quoter") {
  CHECK(far_command("echo 'a b'") == "sh -c 'echo '\\''a b'\\'''");
  RemoteCall call = plan_remote_call("status", {"--json", "job 1", "it's", "$HOME"}, k_token);
  CHECK(run_script(call, k_token) ==
        "r=${XDG_CACHE_HOME:-$HOME/.cache}/hpclaunch/remote/" + k_token +
            "; exec ${XDG_CACHE_HOME:-$HOME/.cache}/hpclaunch/bin/hpclaunch status --json 'job 1' 'it'\\''s' '$HOME'");
  CHECK(call.uploads.empty());
  CHECK(call.downloads.empty());
  CHECK(call.submit_token.empty());
}

TEST_CASE("submit sends its spec and site files, names them in the call's far folder and passes its token") {
  RemoteCall call = plan_remote_call(
      "submit", {"--spec", "job.yaml", "--site-file=sites/my site.yaml", "-N", "2", "--", "python", "--spec", "x"}, k_token);
  CHECK(far_line(call) == "submit --submit-token " + k_token +
                              " --no-snapshot --spec <0-job.yaml> --site-file <1-my site.yaml> -N 2 -- python --spec x");
  REQUIRE(call.uploads.size() == 2);
  CHECK(call.uploads[0].local == "job.yaml");
  CHECK(call.uploads[0].far == "0-job.yaml");
  CHECK(call.uploads[1].local == "sites/my site.yaml");
  CHECK(call.uploads[1].far == "1-my site.yaml");
  CHECK(call.submit_token == k_token);
  CHECK(run_script(call, k_token).ends_with("--spec \"$r\"/0-job.yaml --site-file \"$r\"/'1-my site.yaml' -N 2 -- python --spec x"));
  CHECK(upload_script(k_token, "1-my site.yaml").ends_with("cat >\"$r\"/'1-my site.yaml'"));
}

TEST_CASE("submit --snapshot over ssh: the laptop takes it and sends it; the far submit takes that one or none") {
  RemoteCall call = plan_remote_call(
      "submit", {"--snapshot", "--snapshot-exclude", "data/", "--snapshot-max-size=1G", "--snapshot-exclude=*.ckpt", "-N",
                 "2", "--", "python", "--snapshot"},
      k_token);
  REQUIRE(call.snapshot.has_value());
  CHECK(call.snapshot->exclude == std::vector<std::string>{"data/", "*.ckpt"});
  CHECK(call.snapshot->max_size == "1G");
  CHECK(far_line(call) == "submit --submit-token " + k_token + " --snapshot-prepared <.> -N 2 -- python --snapshot");
  CHECK(run_script(call, k_token).find("mkdir -p \"$r\"/tree && tar -xf \"$r\"/snap.tar -C \"$r\"/tree && exec ") !=
        std::string::npos);
  CHECK(call.uploads.empty());  // the snapshot's two files are added where it is taken (cli/remote_cli.cc)
  // Its options without --snapshot: refused, naming the one given.
  CHECK(test::error_of_call([&] { plan_remote_call("render", {"--snapshot-max-size=1G"}, k_token); }) ==
        "--snapshot-max-size: given without --snapshot; add --snapshot, or drop it");
  // After `--` it is the command's own word; without --snapshot, a spec's or profile's is turned off far away.
  RemoteCall none = plan_remote_call("submit", {"--", "python", "--snapshot"}, k_token);
  CHECK_FALSE(none.snapshot.has_value());
  CHECK(far_line(none) == "submit --submit-token " + k_token + " --no-snapshot -- python --snapshot");
}

TEST_CASE("render sends its files without a token; report -o writes the page far and brings it back") {
  RemoteCall render = plan_remote_call("render", {"--spec", "a/b.yaml"}, k_token);
  CHECK(far_line(render) == "render --no-snapshot --spec <0-b.yaml>");
  CHECK(render.submit_token.empty());
  RemoteCall report = plan_remote_call("report", {"17", "-o", "out/page.html"}, k_token);
  CHECK(far_line(report) == "report 17 -o <0-page.html>");
  REQUIRE(report.downloads.size() == 1);
  CHECK(report.downloads[0].local == "out/page.html");
  CHECK(report.uploads.empty());
  CHECK(far_line(plan_remote_call("report", {"17", "-oout.json", "--json"}, k_token)) == "report 17 -o <0-out.json> --json");
  CHECK(far_line(plan_remote_call("report", {"17", "--output=p.html"}, k_token)) == "report 17 --output <0-p.html>");
  CHECK(far_line(plan_remote_call("report", {"17"}, k_token)) == "report 17");
  CHECK(fetch_script(k_token, "0-p.html") == "exec cat ${XDG_CACHE_HOME:-$HOME/.cache}/hpclaunch/remote/" + k_token + "/0-p.html");
  CHECK(cleanup_script(k_token) == "rm -rf ${XDG_CACHE_HOME:-$HOME/.cache}/hpclaunch/remote/" + k_token);
  CHECK(laptop_output("/home/a/.cache/hpclaunch/remote/" + k_token + "/0-page.html\n", report, k_token) ==
        "out/page.html\n");
  CHECK(laptop_output("other\n", report, k_token) == "other\n");
  CHECK(laptop_output("", report, k_token) == "");
}

TEST_CASE("the far launcher is copied unless it prints the laptop's version line") {
  std::string why;
  FarSide far = parse_probe("x86_64\nhpclaunch 0.1.0 (commit abc)\n", &why);
  CHECK(why.empty());
  CHECK(far.arch == "x86_64");
  CHECK(far.launcher_version == "hpclaunch 0.1.0 (commit abc)");
  CHECK_FALSE(needs_launcher_copy(far, "hpclaunch 0.1.0 (commit abc)"));
  CHECK(needs_launcher_copy(far, "hpclaunch 0.1.0 (commit abd)"));
  far = parse_probe("aarch64\n", &why);
  CHECK(far.arch == "aarch64");
  CHECK(far.launcher_version.empty());
  CHECK(needs_launcher_copy(far, "hpclaunch 0.1.0 (commit abc)"));
  CHECK(parse_probe("x86_64\nsh: 1: something else\n", &why).launcher_version.empty());
  CHECK(parse_probe("", &why).arch.empty());
  CHECK(why == "the far side's `uname -m` answered ''");
  CHECK(parse_probe("Welcome to the cluster\n", &why).arch.empty());
  CHECK(probe_script().starts_with("uname -m; "));
  CHECK(install_script().find("mv -f \"$t\" \"$d/hpclaunch\"") != std::string::npos);
}

TEST_CASE("a submit token is 32 lowercase hex digits: it names files on the far side") {
  CHECK(is_submit_token(k_token));
  CHECK_FALSE(is_submit_token("0123456789ABCDEF0123456789abcdef"));
  CHECK_FALSE(is_submit_token("../../../../etc/passwd0123456789"));
  CHECK_FALSE(is_submit_token(k_token + "0"));
  CHECK_FALSE(is_submit_token(""));
}

TEST_CASE("a token's record reads back; anything else is no record") {
  TokenRecord r{true, 3, "123\n", "hpclaunch: submitted job 123\n"};
  std::optional<TokenRecord> back = parse_token_record(token_record_text(r));
  REQUIRE(back);
  CHECK(back->done);
  CHECK(back->exit_code == 3);
  CHECK(back->out == r.out);
  CHECK(back->err == r.err);
  back = parse_token_record(token_record_text(TokenRecord{}));
  REQUIRE(back);
  CHECK_FALSE(back->done);
  CHECK_FALSE(parse_token_record("{\"state\": \"done\"}"));
  CHECK_FALSE(parse_token_record("{\"state\": \"maybe\"}"));
  CHECK_FALSE(parse_token_record("not json"));
}

TEST_CASE("a token submits once: the second call prints the first's output and status; a torn attempt refuses") {
  test::TempState state("remote-once");
  const std::string dir = (state.base / "tokens").string();
  int runs = 0;
  auto submit = [&] {
    ++runs;
    std::printf("4242\n");
    std::fprintf(stderr, "hpclaunch: submitted job 4242\n");
    return 0;
  };
  CHECK(submit_once(dir, k_token, submit) == 0);
  CHECK(submit_once(dir, k_token, submit) == 0);
  CHECK(runs == 1);
  std::optional<TokenRecord> r = parse_token_record(read_file(dir + "/" + k_token + ".json").value_or(""));
  REQUIRE(r);
  CHECK(r->out == "4242\n");
  CHECK(r->err == "hpclaunch: submitted job 4242\n");
  CHECK((std::filesystem::status(dir).permissions() & std::filesystem::perms::all) == std::filesystem::perms::owner_all);

  const std::string other = "ffffffffffffffffffffffffffffffff";
  CHECK(submit_once(dir, other, [] () -> int { throw Error("--site", "no site given"); }) == 2);
  CHECK(submit_once(dir, other, submit) == 2);  // the refusal is the answer, again
  CHECK(runs == 1);

  const std::string torn = "00000000000000000000000000000000";
  REQUIRE(write_file_atomic(dir + "/" + torn + ".json", token_record_text(TokenRecord{})));
  CHECK(test::error_of_call([&] { submit_once(dir, torn, submit); })
            .find("an earlier submit with token " + torn + " stopped before it recorded its end") != std::string::npos);
  CHECK(runs == 1);
  CHECK(test::error_of_call([&] { submit_once(dir, "../x", submit); }).find("is not a submit token") != std::string::npos);
}

TEST_CASE("a static ELF file names no interpreter; a dynamic one does") {
  // An ELF64 little-endian header with its program headers right after it (phoff 64, 56 bytes each).
  auto elf = [](std::vector<unsigned> types) {
    std::string h(64 + 56 * types.size(), '\0');
    h.replace(0, 4, "\x7f" "ELF");
    h[4] = 2, h[5] = 1, h[18] = 62, h[32] = 64, h[54] = 56, h[56] = static_cast<char>(types.size());
    for (size_t i = 0; i < types.size(); ++i) h[64 + 56 * i] = static_cast<char>(types[i]);
    return h;
  };
  CHECK(elf_is_static(elf({6, 1, 1, 4})));        // PHDR, LOAD, LOAD, NOTE
  CHECK_FALSE(elf_is_static(elf({6, 3, 1, 2})));  // PT_INTERP
  CHECK_FALSE(elf_is_static(elf({})));
  CHECK_FALSE(elf_is_static(elf({1}).substr(0, 66)));  // its program header cut: not known
  CHECK_FALSE(elf_is_static("#!/bin/sh\n"));
  CHECK(elf_arch(elf({1})) == "x86_64");
}

TEST_SUITE_END();

}  // namespace remote_test
