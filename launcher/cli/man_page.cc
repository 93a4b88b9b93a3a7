#include "cli/man_page.h"

#include <fmt/core.h>

#include "util/strings.h"

namespace hpclaunch {

namespace {

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string header(const std::string& title, const std::string& version) {
  return fmt::format(".TH {} 1 \"\" \"hpclaunch {}\" \"hpclaunch manual\"\n", upper(title), version);
}

std::string entry_name(const HelpEntry& e) {
  std::string names = roff_escape(join(e.names, ", "));
  std::string out = e.positional ? "\\fI" + names + "\\fR" : "\\fB" + names + "\\fR";
  if (!e.value.empty()) out += " \\fI" + roff_escape(e.value) + "\\fR";
  return out;
}

std::string entries_section(const char* title, const HelpModel& help, bool positional) {
  std::string out;
  for (const auto& e : help.entries) {
    if (e.positional != positional) continue;
    out += ".TP\n" + entry_name(e) + "\n" + roff_escape(e.text.empty() ? "(no description)" : e.text) + "\n";
  }
  return out.empty() ? out : fmt::format(".SH {}\n{}", title, out);
}

const char* k_main_description =
    "hpclaunch takes a PyTorch\\-style training job from one GPU to many nodes. It knows the sites (built\\-in "
    "profiles of Slurm and PBS clusters, and your own YAML profiles), picks the launch mode and its task "
    "geometry, renders the #SBATCH or #PBS script from a template, shows it and submits it. Inside the job it "
    "sets torch's rendezvous variables for each task, or runs one elastic agent per node that does torchrun's job.\n"
    ".PP\n"
    "The rendered scripts call this binary by its absolute path, so it must be reachable from the compute nodes "
    "at the same path (a home or project file system).\n";

const char* k_main_tail =
    ".SH EXIT STATUS\n"
    ".TP\n0\nsuccess\n"
    ".TP\n1\na failure of something outside: the scheduler refused, a job failed, a file could not be written\n"
    ".TP\n2\nbad input: one line \\fBhpclaunch: error:\\fR naming the flag or file:line, what is wrong and the fix; "
    "nothing is written or submitted\n"
    ".SH FILES\n"
    ".TP\n\\fI$XDG_CONFIG_HOME/hpclaunch/sites/*.yaml\\fR\nyour own site profiles (default "
    "\\fI~/.config/hpclaunch/sites\\fR), beside the built\\-in ones\n"
    ".TP\n\\fI$XDG_STATE_HOME/hpclaunch/\\fR\nthe index of jobs submitted from this machine (\\fBhpclaunch jobs\\fR)\n"
    ".SH ENVIRONMENT\n"
    ".TP\n\\fBHPCLAUNCH_PROBE\\fR\nthe hpclaunch\\-probe that \\fBhpclaunch check\\fR runs (default: beside hpclaunch)\n"
    ".SH SEE ALSO\n"
    "The documentation installed in \\fIshare/doc/hpclaunch\\fR (README.md, docs/*.md).\n";

}  // namespace

std::string roff_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  // A line starting with . or ' would be read as a request.
  std::string fixed;
  for (const auto& line : split(out, '\n')) {
    if (!fixed.empty()) fixed += '\n';
    if (!line.empty() && (line[0] == '.' || line[0] == '\'')) fixed += "\\&";
    fixed += line;
  }
  return fixed;
}

std::string main_man_page(const std::vector<CommandDoc>& commands, const std::string& version) {
  std::string out = header("hpclaunch", version);
  out += ".SH NAME\nhpclaunch \\- render, submit and run distributed training jobs on HPC clusters\n";
  out += ".SH SYNOPSIS\n\\fBhpclaunch\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fB\\-\\-\\fR \\fICMD\\fR "
         "[\\fIARG\\fR...]]\n.br\n\\fBhpclaunch \\-\\-version\\fR | \\fB\\-\\-help\\fR\n";
  out += ".SH DESCRIPTION\n";
  out += k_main_description;
  out += ".SH COMMANDS\n";
  for (const auto& c : commands)
    out += fmt::format(".TP\n\\fBhpclaunch {}\\fR\n{} (\\fB\\%hpclaunch\\-{}\\fR(1))\n", roff_escape(c.name),
                       roff_escape(c.summary), roff_escape(c.name));
  out += ".SH OPTIONS\n.TP\n\\fB\\-\\-version\\fR\nthe version and the commit it was built from\n"
         ".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nthe list of commands; \\fBhpclaunch COMMAND \\-\\-help\\fR "
         "describes a command's options\n";
  out += k_main_tail;
  return out;
}

std::string command_man_page(const CommandDoc& command, const std::string& version) {
  const HelpModel& help = command.help;
  std::string out = header("hpclaunch-" + command.name, version);
  out += fmt::format(".SH NAME\nhpclaunch\\-{} \\- {}\n", roff_escape(command.name), roff_escape(command.summary));
  out += fmt::format(".SH SYNOPSIS\n\\fBhpclaunch {}\\fR {}\n", roff_escape(command.name), roff_escape(help.usage));
  out += ".SH DESCRIPTION\n" + roff_escape(help.description.empty() ? command.summary : help.description) + "\n";
  if (!help.notes.empty()) out += ".PP\n" + roff_escape(help.notes) + "\n";
  out += entries_section("ARGUMENTS", help, true);
  out += entries_section("OPTIONS", help, false);
  out += ".SH SEE ALSO\n\\fBhpclaunch\\fR(1)\n";
  return out;
}

}  // namespace hpclaunch
