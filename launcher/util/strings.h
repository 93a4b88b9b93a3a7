// Small string helpers that know nothing of hpclaunch.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hpclaunch {

std::vector<std::string> split(std::string_view s, char sep);
std::string join(const std::vector<std::string>& parts, std::string_view sep);
// "a, b or c" ("a or b", "a", "").
std::string join_or(const std::vector<std::string>& parts);
std::string_view trim(std::string_view s);
std::string ascii_lower(std::string_view s);  // A-Z to a-z, every other byte as it is
// `s` with every `from` replaced by `to`.
std::string replace_all(std::string s, std::string_view from, std::string_view to);
bool parse_int(std::string_view s, long long* out);  // whole string, base 10, optional sign
// A release "N.N" or "N.N.N" (a scheduler's: "24.11", "24.5", "25.05.3") as {major, minor}, compared as numbers;
// nullopt for anything else. The one reading of a release: a profile's scheduler_version and a dialect's checks.
std::optional<std::pair<int, int>> parse_release(std::string_view s);
// Whether `s` holds any of `needles` (none: false).
bool contains_any(std::string_view s, const std::vector<std::string>& needles);
// `s` split at `sep`, where a doubled `sep` stands for one in an item (torchrun's comma-separated lists:
// "a,,b,c" -> {"a,b", "c"}); empty items are dropped.
std::vector<std::string> split_escaped(std::string_view s, char sep);

// Rows as a table: each column as wide as its widest cell (UTF-8 characters counted once), two spaces between
// columns, the last column unpadded; a line each, with its newline.
std::string format_table(const std::vector<std::vector<std::string>>& rows);

// Levenshtein distance.
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` if it is close enough to be a plausible typo.
std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace hpclaunch
