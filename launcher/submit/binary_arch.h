// Before a job is submitted: the hpclaunch the script runs on the compute nodes is this very binary
// (self_executable), so it must be built for the nodes' architecture (CSC Roihu's GPU nodes are aarch64, its CPU
// login nodes x86_64). The profile says the nodes' architecture (node.arch); the binary's is in its ELF header.
#pragma once
#include <string>
#include <string_view>

#include "site/profile.h"

namespace hpclaunch {

// The architecture an ELF file's header names, as `uname -m` and Slurm's Arch spell it ("x86_64", "aarch64",
// "ppc64le", ...); "" when `head` (the file's first bytes) is no ELF header or names a machine not known here.
std::string elf_arch(std::string_view head);

// Whether the ELF file whose first bytes are `head` (its program headers included: 4 KiB is plenty) is linked
// statically: it names no program interpreter (PT_INTERP), so it runs on any Linux of its architecture. False for
// what is no 64-bit little-endian ELF file. Pure.
bool elf_is_static(std::string_view head);

// The one-line reason a binary of `binary_arch` cannot run on `site`'s compute nodes; "" when it can, or when
// either architecture is unknown (a user profile without node.arch, a file that is not ELF). Pure.
std::string arch_mismatch(const SiteProfile& site, const std::string& binary_arch, const std::string& binary_path);

// Reads `binary_path`'s header and throws the Error (exit 2, naming --site) arch_mismatch describes. Nothing for
// the local site (its jobs run on this machine).
void check_binary_arch(const SiteProfile& site, const std::string& binary_path);

}  // namespace hpclaunch
