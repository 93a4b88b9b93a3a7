#include "submit/binary_arch.h"

#include <fmt/core.h>

#include <fstream>

#include "dialect/dialect.h"
#include "util/error.h"

namespace hpclaunch {

namespace {

// ELF e_machine values (the System V ABI's table; glibc's elf.h names them EM_*).
const char* machine_name(unsigned machine, bool is_64) {
  switch (machine) {
    case 3: return "i686";          // EM_386
    case 20: return "ppc";          // EM_PPC
    case 21: return "ppc64le";      // EM_PPC64 (the little-endian form HPC sites run)
    case 40: return "armv7l";       // EM_ARM
    case 62: return "x86_64";       // EM_X86_64
    case 183: return "aarch64";     // EM_AARCH64
    case 243: return is_64 ? "riscv64" : "riscv32";  // EM_RISCV
    default: return "";
  }
}

// The names a profile or a scheduler may give the same machine.
std::string canonical(std::string arch) {
  if (arch == "arm64") return "aarch64";
  if (arch == "amd64" || arch == "x64") return "x86_64";
  if (arch == "ppc64") return "ppc64le";
  return arch;
}

bool known(const std::string& arch) {
  for (const char* a : {"i686", "ppc", "ppc64le", "armv7l", "x86_64", "aarch64", "riscv64", "riscv32"})
    if (arch == a) return true;
  return false;
}

}  // namespace

std::string elf_arch(std::string_view head) {
  if (head.size() < 20 || head.substr(0, 4) != "\x7f" "ELF") return "";
  const bool is_64 = head[4] == 2;       // EI_CLASS: ELFCLASS64
  const bool big_endian = head[5] == 2;  // EI_DATA: ELFDATA2MSB
  const auto b0 = static_cast<unsigned char>(head[18]), b1 = static_cast<unsigned char>(head[19]);
  return machine_name(big_endian ? (b0 << 8) | b1 : (b1 << 8) | b0, is_64);
}

bool elf_is_static(std::string_view head) {
  if (head.size() < 64 || head.substr(0, 4) != "\x7f" "ELF" || head[4] != 2 || head[5] != 1) return false;
  auto number = [&](size_t at, size_t bytes) {
    unsigned long long v = 0;
    for (size_t i = bytes; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(head[at + i]);
    return v;
  };
  const unsigned long long phoff = number(32, 8), entry_size = number(54, 2), count = number(56, 2);
  if (entry_size < 4) return false;
  for (unsigned long long i = 0; i < count; ++i) {
    const unsigned long long at = phoff + i * entry_size;
    if (at + 4 > head.size()) return false;  // headers beyond what was read: not known to be static
    if (number(at, 4) == 3) return false;     // PT_INTERP: ld.so loads it
  }
  return count > 0;
}

std::string arch_mismatch(const SiteProfile& site, const std::string& binary_arch, const std::string& binary_path) {
  const std::string nodes = canonical(site.node.arch), binary = canonical(binary_arch);
  if (!known(nodes) || !known(binary) || nodes == binary) return "";
  return fmt::format("this hpclaunch ({}) is built for {}, but {}'s compute nodes are {}: the job script runs it there, "
                     "so every task would fail to start",
                     binary_path, binary, site.name, nodes);
}

void check_binary_arch(const SiteProfile& site, const std::string& binary_path) {
  if (dialect_for(site.scheduler).runs_here()) return;
  std::ifstream in(binary_path, std::ios::binary);
  char head[64] = {};
  in.read(head, sizeof head);
  std::string why = arch_mismatch(site, elf_arch(std::string_view(head, static_cast<size_t>(in.gcount()))), binary_path);
  if (why.empty()) return;
  throw Error("--site", why,
              fmt::format("submit with an hpclaunch built for {} (built on one of {}'s {} login nodes, or the static "
                          "build for {}: docs/install.md); nothing was submitted",
                          site.node.arch, site.name, site.node.arch, site.node.arch));
}

}  // namespace hpclaunch
