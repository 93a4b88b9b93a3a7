// Sizes as people write them: "256M", "1.5G", "4096" (bytes), K/M/G/T as powers of 1024 (an optional "iB" or "B"
// after the letter). Pure.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hpclaunch {

// The bytes `text` names, or nullopt when it is not a size.
std::optional<std::uint64_t> parse_byte_size(std::string_view text);
// "0 B", "812 B", "3.4 KiB", "256 MiB", "1.2 GiB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace hpclaunch
