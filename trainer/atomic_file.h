// Writes a file so that readers see the old contents or the new, never a mix: a temporary file beside it,
// fsync, rename over the target, fsync of the folder. A crash or kill at any point leaves the target intact.
#pragma once
#include <string>
#include <vector>

namespace hpctrain {

// What a file is to its writer, for the one line a failed write says: "PATH: cannot write WHAT (the step, the
// temporary file and the system's reason); FIX".
struct FileRole {
  std::string what;  // e.g. "the checkpoint"
  std::string fix;   // e.g. "check the checkpoint folder's space and rights"
};
inline const FileRole k_checkpoint_file{"the checkpoint", "check the checkpoint folder's space and rights"};

// Throws hpclaunch::Error (exit 1) naming the target when a step fails; the temporary file is removed then.
void write_file_atomically(const std::string& path, const std::vector<char>& bytes, const FileRole& role);

// The temporary name used for `path` by this process: "<dir>/.<name>.tmp.<pid>".
std::string temporary_path_for(const std::string& path);

// Removes leftover "<dir>/.<name>.tmp.*" files of an interrupted save; returns how many.
int remove_stale_temporaries(const std::string& path);

// Test hook: when HPCLAUNCH_TRAIN_FAULT=partial-save, write_file_atomically writes half the temporary file
// and calls _exit(86), as if the process were killed mid-save.
inline constexpr int k_exit_fault_injected = 86;

}  // namespace hpctrain
