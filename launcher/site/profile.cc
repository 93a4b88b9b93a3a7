#include "site/profile.h"

#include <algorithm>
#include <regex>

namespace hpclaunch {

bool SiteProfile::allows(LaunchMode m) const {
  return std::find(launchers.begin(), launchers.end(), m) != launchers.end();
}

std::vector<std::string> SiteProfile::scheduler_option(const std::string& key) const {
  auto it = scheduler_options.find(key);
  return it == scheduler_options.end() ? std::vector<std::string>{} : it->second.values;
}

std::string SiteProfile::scheduler_text(const std::string& key) const {
  std::vector<std::string> values = scheduler_option(key);
  return values.empty() ? "" : values.front();
}

const Queue* SiteProfile::find_queue(const std::string& queue_name) const {
  for (const auto& q : queues)
    if (q.name == queue_name) return &q;
  return nullptr;
}

const Queue* SiteProfile::default_queue() const {
  for (const auto& q : queues)
    if (q.is_default) return &q;
  return nullptr;
}

Container container_for_image(const Container& c, const std::string& image) {
  Container out = c;
  for (const auto& form : c.images) {
    if (!std::regex_search(image, std::regex(form.match))) continue;
    if (!form.srun_options.empty()) out.srun_options = form.srun_options;
    if (!form.edf.empty()) out.edf = form.edf;
    break;
  }
  return out;
}

}  // namespace hpclaunch
