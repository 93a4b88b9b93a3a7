// `hpclaunch sites` (one line per profile), `sites show NAME` (the resolved profile as YAML), and against the
// live scheduler `sites check NAME` and `sites learn NAME` (cli/cmd_sites_survey.cc).
#include <fmt/core.h>

#include "cli/cli_util.h"
#include "cli/json_output.h"
#include "cli/sites_survey.h"
#include "site/registry.h"
#include "util/error.h"
#include "util/strings.h"

namespace hpclaunch {

int cmd_sites(const Args& args) {
  CLI::App app("List the site profiles, or show one resolved.", "sites");
  std::vector<std::string> site_files;
  std::vector<std::string> words;
  app.add_option("--site-file", site_files, "extra site profile YAML (repeatable)")->take_last();
  bool json = false;
  std::string output;
  app.add_option("words", words, "show NAME | check NAME | learn NAME");
  app.add_flag("--json", json, "print as JSON (the list, show, check; docs/json.md)");
  app.add_option("--output,-o", output, "learn: write the profile to this file instead of stdout");
  if (!parse_or_throw(app, args)) return 0;
  SiteRegistry sites = load_sites(site_files, scheduler_checks());
  if (words.empty() && json) fmt::print("{}\n", sites_json(sites).dump());
  if (words.empty() && !json) {
    std::vector<std::vector<std::string>> rows = {{"NAME", "SCHED", "NODE", "STATUS", "TITLE"}};
    for (const SiteProfile* p : sites.all()) {
      std::string shape = fmt::format("{}x{} {}c {}G", p->node.gpus, p->node.gpu_model.empty() ? "slot" : p->node.gpu_model,
                                      p->node.cores,
                                      p->node.memory_gb ? std::to_string(p->node.memory_gb) : std::string("?"));
      std::string title = p->title;
      if (p->retired()) title += " -> " + join(p->successors, ", ");
      rows.push_back({p->name, to_string(p->scheduler), shape, p->retired() ? "retired" : p->status, title});
    }
    fmt::print("{}", format_table(rows));
  }
  if (words.empty()) return 0;
  if (words.size() == 2 && words[0] == "check") return sites_check(sites, words[1], json);
  if (words.size() == 2 && words[0] == "learn") return sites_learn(words[1], output);
  if (words[0] != "show" || words.size() != 2)
    throw Error("sites", "expected `sites`, `sites show NAME`, `sites check NAME` or `sites learn NAME`",
                "run `hpclaunch sites show perlmutter`");
  const SiteProfile& p = sites.get(words[1], "sites show");
  if (json) return fmt::print("{}\n", site_json(p).dump()), 0;
  fmt::print("# {}\n{}", p.file, profile_to_yaml(p));
  return 0;
}

}  // namespace hpclaunch
