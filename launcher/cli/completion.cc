#include "cli/completion.h"

#include <fmt/core.h>

#include <algorithm>

#include "util/strings.h"

namespace hpclaunch {

namespace {

bool has_name(const HelpEntry& e, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (std::find(e.names.begin(), e.names.end(), n) != e.names.end()) return true;
  return false;
}

std::string command_names(const std::vector<CommandDoc>& commands) {
  std::vector<std::string> names;
  for (const auto& c : commands) names.push_back(c.name);
  return join(names, " ");
}

// The option names of one command, and whether it takes a command after its options.
std::vector<std::string> option_names(const CommandDoc& c) {
  std::vector<std::string> out;
  for (const auto& e : c.help.entries)
    if (!e.positional) out.insert(out.end(), e.names.begin(), e.names.end());
  return out;
}

// The commands that run a command given after `--` (their --help shows no positional for it).
bool takes_program(const CommandDoc& c) {
  for (const char* name : {"submit", "render", "exec", "agent", "local-srun"})
    if (c.name == name) return true;
  return false;
}

// Shell words that list the sites and the jobs by asking the hpclaunch being completed.
const char* k_bash_helpers =
    "_hpclaunch_sites() { \"$1\" sites 2>/dev/null | awk 'NR > 1 { print $1 }'; }\n"
    "_hpclaunch_jobs() { \"$1\" jobs 2>/dev/null | awk 'NR > 1 && $1 != \"-\" { print $1 }'; }\n";

std::string bash_words(ValueKind kind, const std::vector<std::string>& launchers, const std::string& commands) {
  switch (kind) {
    case ValueKind::site: return "$(_hpclaunch_sites \"$self\")";
    case ValueKind::launcher: return join(launchers, " ");
    case ValueKind::job: return "$(_hpclaunch_jobs \"$self\")";
    case ValueKind::shell: return "bash zsh fish";
    case ValueKind::command: return commands;
    default: return "";
  }
}

std::string bash_reply(ValueKind kind, const std::vector<std::string>& launchers, const std::string& commands) {
  std::string words = bash_words(kind, launchers, commands);
  if (kind == ValueKind::sites_word)
    return "case $prev in show|check) COMPREPLY=($(compgen -W \"$(_hpclaunch_sites \"$self\")\" -- \"$cur\")) ;; "
           "sites) COMPREPLY=($(compgen -W \"show check learn\" -- \"$cur\")) ;; esac";
  if (kind == ValueKind::program) return "COMPREPLY=($(compgen -c -- \"$cur\"))";
  if (kind == ValueKind::file_or_job)
    return "COMPREPLY=($(compgen -W \"$(_hpclaunch_jobs \"$self\")\" -- \"$cur\") $(compgen -f -- \"$cur\"))";
  if (words.empty()) return "";  // files, or free text: readline's default
  return "COMPREPLY=($(compgen -W \"" + words + "\" -- \"$cur\"))";
}

std::string zsh_quote(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else if (c == '[' || c == ']' || c == ':' || c == '\\') out += std::string("\\") + c;
    else out += c;
  }
  return out;
}

std::string zsh_action(ValueKind kind, const std::vector<std::string>& launchers, const std::string& commands) {
  switch (kind) {
    case ValueKind::file: return "_files";
    case ValueKind::site: return "_hpclaunch_sites";
    case ValueKind::launcher: return "(" + join(launchers, " ") + ")";
    case ValueKind::job: return "_hpclaunch_jobs";
    case ValueKind::file_or_job: return "_hpclaunch_file_or_job";
    case ValueKind::shell: return "(bash zsh fish)";
    case ValueKind::command: return "(" + commands + ")";
    default: return " ";
  }
}

std::string fish_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string fish_values(ValueKind kind, const std::vector<std::string>& launchers, const std::string& commands) {
  switch (kind) {
    case ValueKind::file: return "-r -F";
    case ValueKind::site: return "-x -a '(__hpclaunch_sites)'";
    case ValueKind::launcher: return "-x -a " + fish_quote(join(launchers, " "));
    case ValueKind::job: return "-x -a '(__hpclaunch_jobs)'";
    case ValueKind::file_or_job: return "-r -F -a '(__hpclaunch_jobs)'";
    case ValueKind::shell: return "-x -a 'bash zsh fish'";
    case ValueKind::command: return "-x -a " + fish_quote(commands);
    case ValueKind::flag: return "";
    default: return "-x";
  }
}

}  // namespace

ValueKind value_kind(const std::string& command, const HelpEntry& e) {
  if (e.positional) {
    if (e.names[0] == "JOB") return ValueKind::job;
    if (e.names[0] == "RUN") return ValueKind::file_or_job;
    if (e.names[0] == "SHELL") return ValueKind::shell;
    if (e.names[0] == "COMMAND") return ValueKind::command;
    if (command == "sites") return ValueKind::sites_word;
    if (e.names[0] == "command") return ValueKind::program;
    return ValueKind::file;
  }
  if (e.value.empty()) return ValueKind::flag;
  if (has_name(e, {"--site"})) return ValueKind::site;
  if (has_name(e, {"--launcher"})) return ValueKind::launcher;
  if (has_name(e, {"--after"})) return ValueKind::job;
  if (has_name(e, {"--spec", "--site-file", "--output", "--job-dir", "--log-dir", "--output-dir"}))
    return ValueKind::file;
  return ValueKind::none;
}

std::string bash_completion(const std::vector<CommandDoc>& commands, const std::vector<std::string>& launchers,
                            const std::string& version) {
  std::string names = command_names(commands);
  std::string out = fmt::format(
      "# bash completion for hpclaunch {}: made by `hpclaunch completion bash` from its command table and --help.\n"
      "# Site names and jobs are asked of the hpclaunch being completed, so your own profiles complete too.\n",
      version);
  out += k_bash_helpers;
  out += "_hpclaunch() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} self=${COMP_WORDS[0]/#\\~/$HOME} i\n"
         "  COMPREPLY=()\n"
         "  if ((COMP_CWORD == 1)); then\n"
         "    COMPREPLY=($(compgen -W \"" + names + " --help --version\" -- \"$cur\"))\n"
         "    return\n"
         "  fi\n"
         "  # After `--` comes the job's command: a program, then its arguments (files).\n"
         "  for ((i = 2; i < COMP_CWORD; i++)); do\n"
         "    if [[ ${COMP_WORDS[i]} == -- ]]; then\n"
         "      ((i == COMP_CWORD - 1)) && COMPREPLY=($(compgen -c -- \"$cur\"))\n"
         "      return\n"
         "    fi\n"
         "  done\n"
         "  case ${COMP_WORDS[1]} in\n";
  for (const auto& c : commands) {
    out += "    " + c.name + ")\n      case $prev in\n";
    std::vector<std::string> plain;  // options whose value is a path or free text: readline's default
    for (const auto& e : c.help.entries) {
      if (e.positional) continue;
      ValueKind kind = value_kind(c.name, e);
      if (kind == ValueKind::flag) continue;
      if (std::string r = bash_reply(kind, launchers, names); !r.empty())
        out += "        " + join(e.names, "|") + ") " + r + "; return ;;\n";
      else
        plain.insert(plain.end(), e.names.begin(), e.names.end());
    }
    if (!plain.empty()) out += "        " + join(plain, "|") + ") return ;;\n";
    out += "      esac\n";
    std::vector<std::string> opts = option_names(c);
    if (takes_program(c)) opts.push_back("--");
    out += "      if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"" + join(opts, " ") +
           "\" -- \"$cur\")); return; fi\n";
    for (const auto& e : c.help.entries)
      if (e.positional) {
        if (std::string r = bash_reply(value_kind(c.name, e), launchers, names); !r.empty()) out += "      " + r + "\n";
        break;
      }
    out += "      ;;\n";
  }
  out += "  esac\n}\ncomplete -o bashdefault -o default -F _hpclaunch hpclaunch\n";
  return out;
}

std::string zsh_completion(const std::vector<CommandDoc>& commands, const std::vector<std::string>& launchers,
                           const std::string& version) {
  std::string names = command_names(commands);
  std::string out = fmt::format(
      "#compdef hpclaunch\n"
      "# zsh completion for hpclaunch {}: made by `hpclaunch completion zsh` from its command table and --help.\n",
      version);
  out += "_hpclaunch_sites() { local -a s; s=(${(f)\"$($_hpclaunch_self sites 2>/dev/null | awk 'NR > 1 { print $1 }')\"}); "
         "_describe -t sites site s; }\n"
         "_hpclaunch_jobs() { local -a j; j=(${(f)\"$($_hpclaunch_self jobs 2>/dev/null | awk 'NR > 1 && $1 != \"-\" { print $1 }')\"}); "
         "_describe -t jobs job j; }\n"
         "_hpclaunch_file_or_job() { _hpclaunch_jobs; _files; }\n"
         "_hpclaunch() {\n"
         "  local _hpclaunch_self=${words[1]/#\\~/$HOME}\n"
         "  local -a commands\n"
         "  commands=(\n";
  for (const auto& c : commands) out += "    '" + zsh_quote(c.name) + ":" + zsh_quote(c.summary) + "'\n";
  out += "  )\n"
         "  if ((CURRENT == 2)); then\n"
         "    _describe -t commands 'hpclaunch command' commands\n"
         "    compadd -- --help --version\n"
         "    return\n"
         "  fi\n"
         "  local cmd=${words[2]}\n"
         "  shift words\n"
         "  ((CURRENT--))\n"
         "  case $cmd in\n";
  for (const auto& c : commands) {
    out += "    " + c.name + ")\n      _arguments -S";
    bool positional = false;
    for (const auto& e : c.help.entries) {
      ValueKind kind = value_kind(c.name, e);
      if (e.positional) {
        positional = true;
        if (kind == ValueKind::sites_word)
          out += " \\\n        ':action:(show check learn)' ':site:_hpclaunch_sites'";
        else if (kind == ValueKind::program)
          out += " \\\n        '*::command:_normal'";
        else
          out += std::string(" \\\n        '") + (e.repeatable ? "*" : "") + ":" + zsh_quote(e.names[0]) + ":" +
                 zsh_action(kind, launchers, names) + "'";
        continue;
      }
      for (const auto& n : e.names) {
        out += std::string(" \\\n        '") + (e.repeatable ? "*" : "") + n + "[" + zsh_quote(e.text) + "]";
        if (kind != ValueKind::flag) out += ":" + zsh_quote(e.value) + ":" + zsh_action(kind, launchers, names);
        out += "'";
      }
    }
    if (!positional && takes_program(c)) out += " \\\n        '*::command:_normal'";
    out += "\n      ;;\n";
  }
  out += "  esac\n}\n_hpclaunch \"$@\"\n";
  return out;
}

std::string fish_completion(const std::vector<CommandDoc>& commands, const std::vector<std::string>& launchers,
                            const std::string& version) {
  std::string names = command_names(commands);
  std::string out = fmt::format(
      "# fish completion for hpclaunch {}: made by `hpclaunch completion fish` from its command table and --help.\n",
      version);
  out += "function __hpclaunch_self; set -l w (commandline -opc); echo $w[1]; end\n"
         "function __hpclaunch_sites; set -l self (__hpclaunch_self); $self sites 2>/dev/null | awk 'NR > 1 { print $1 }'; end\n"
         "function __hpclaunch_jobs; set -l self (__hpclaunch_self); $self jobs 2>/dev/null | awk 'NR > 1 && $1 != \"-\" { print $1 }'; end\n"
         "complete -c hpclaunch -f\n"
         "complete -c hpclaunch -n __fish_use_subcommand -l version -d 'the version and the commit it was built from'\n"
         "complete -c hpclaunch -n __fish_use_subcommand -s h -l help -d 'the list of commands'\n";
  for (const auto& c : commands)
    out += "complete -c hpclaunch -n __fish_use_subcommand -a " + c.name + " -d " + fish_quote(c.summary) + "\n";
  for (const auto& c : commands) {
    std::string when = "-n '__fish_seen_subcommand_from " + c.name + "'";
    for (const auto& e : c.help.entries) {
      ValueKind kind = value_kind(c.name, e);
      if (e.positional) {
        if (kind == ValueKind::sites_word) {
          out += "complete -c hpclaunch -n '__fish_seen_subcommand_from sites; and not __fish_seen_subcommand_from "
                 "show check learn' -a 'show check learn'\n"
                 "complete -c hpclaunch -n '__fish_seen_subcommand_from sites; and __fish_seen_subcommand_from show "
                 "check' -a '(__hpclaunch_sites)'\n";
        } else if (kind == ValueKind::program || kind == ValueKind::file) {
          out += "complete -c hpclaunch " + when + " -F\n";
        } else {
          std::string values = fish_values(kind, launchers, names);
          out += "complete -c hpclaunch " + when + " " + values.substr(values.find("-a")) + "\n";
          if (kind == ValueKind::file_or_job) out += "complete -c hpclaunch " + when + " -F\n";
        }
        continue;
      }
      std::string line = "complete -c hpclaunch " + when;
      for (const auto& n : e.names) {
        if (n.rfind("--", 0) == 0) line += " -l " + n.substr(2);
        else if (n.size() == 2) line += " -s " + n.substr(1);
        else line += " -o " + n.substr(1);
      }
      std::string values = fish_values(kind, launchers, names);
      if (!values.empty()) line += " " + values;
      out += line + " -d " + fish_quote(e.text) + "\n";
    }
    if (takes_program(c) && c.help.entries.end() == std::find_if(c.help.entries.begin(), c.help.entries.end(),
                                                                 [](const HelpEntry& e) { return e.positional; }))
      out += "complete -c hpclaunch " + when + " -F\n";
  }
  return out;
}

}  // namespace hpclaunch
