// Where a subcommand's --help text goes: stdout, or a string while `hpclaunch man` and `hpclaunch completion`
// read every command's help to make the man pages and the completion scripts from it.
#pragma once
#include <string>

#include <vector>

#include "cli/commands.h"
#include "cli/help_model.h"

namespace hpclaunch {

// Every command prints its --help through this.
void print_help(const std::string& text);

// `hpclaunch NAME --help`'s text, read without printing it or running the command.
std::string command_help(const Command& c);

// Every command of the table with its parsed --help, in the table's order.
std::vector<CommandDoc> command_docs();

}  // namespace hpclaunch
