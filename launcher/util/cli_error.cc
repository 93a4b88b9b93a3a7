#include "util/cli_error.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <regex>

#include "util/strings.h"

namespace hpclaunch {

namespace {

std::string see_help(const std::string& program) { return "see `" + program + " --help`"; }

std::string where_of(const CLI::App& app, const std::string& program) {
  return app.get_name() == program ? std::string() : app.get_name();
}

}  // namespace

bool looks_like_flag(const std::string& word) { return word.size() > 1 && word[0] == '-'; }

std::string first_unexpected(const CLI::ParseError& e) {
  // "The following arguments were not expected: m1_g --acount" (CLI11 lists them last first).
  std::string what = e.what();
  size_t colon = what.find(": ");
  return colon == std::string::npos ? std::string() : split(what.substr(colon + 2), ' ').back();
}

Error unknown_option(const std::string& flag, const CLI::App& app, const std::string& program) {
  std::vector<std::string> flags;
  for (const CLI::Option* o : app.get_options())
    for (const auto& n : o->get_lnames()) flags.push_back("--" + n);
  return Error(flag, "unknown option" + did_you_mean(flag, flags), see_help(program));
}

Error cli_error(const CLI::ParseError& e, const CLI::App& app, const std::string& program,
                const std::string& stray_fix) {
  std::string what = e.what();
  if (dynamic_cast<const CLI::ConversionError*>(&e)) {
    // CLI11 says "Could not convert: --nodes = two"; name the flag first, as every other error does.
    static const std::regex k_conv("Could not convert: (\\S+) = (.*)");
    std::smatch m;
    if (std::regex_match(what, m, k_conv))
      return Error(m[1].str(), "'" + m[2].str() + "' is not a valid value", see_help(program));
  } else if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::string first = first_unexpected(e);
    if (looks_like_flag(first)) return unknown_option(first, app, program);
    return Error(where_of(app, program), "unexpected argument" + (first.empty() ? "" : " '" + first + "'"),
                 (stray_fix.empty() ? "" : stray_fix + "; ") + see_help(program));
  }
  return Error(where_of(app, program), what, see_help(program));
}

Parsed parse_cli(CLI::App& app, const std::vector<std::string>& args, const std::string& program,
                 const std::string& stray_fix) {
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes the vector back to front
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    return Parsed::help;
  } catch (const CLI::CallForVersion&) {
    return Parsed::version;
  } catch (const CLI::ParseError& e) {
    throw cli_error(e, app, program, stray_fix);
  }
  return Parsed::flags;
}

int run_main(const std::string& program, const std::function<int()>& body, std::FILE* err) {
  try {
    return body();
  } catch (const Error& e) {
    std::fflush(stdout);
    std::fprintf(err, "%s: error: %s\n", program.c_str(), e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::fflush(stdout);
    std::fprintf(err, "%s: error: %s\n", program.c_str(), what.substr(0, what.find('\n')).c_str());
    return k_exit_failure;
  }
}

}  // namespace hpclaunch
