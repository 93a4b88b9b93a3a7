// IDX reader: see idx_file.h. The header is 0x00 0x00 TYPE NDIMS, then NDIMS big-endian uint32 sizes.
#include "idx_file.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>

#include "util/error.h"

namespace hpctrain {

using hpclaunch::Error;

IdxArray parse_idx(const std::vector<uint8_t>& bytes, const std::string& where) {
  if (bytes.size() < 4 || bytes[0] != 0 || bytes[1] != 0)
    throw Error(where, "not an IDX file (bad magic number)", "point --data-dir at MNIST-format *-ubyte(.gz) files");
  if (bytes[2] != 0x08)
    throw Error(where, "IDX element type " + std::to_string(bytes[2]) + " is not unsigned byte (8)",
                "only MNIST-style uint8 images and labels are read");
  const size_t ndims = bytes[3];
  if (ndims == 0 || bytes.size() < 4 + 4 * ndims) throw Error(where, "truncated IDX header", "re-install the data set");
  IdxArray out;
  size_t count = 1;
  for (size_t d = 0; d < ndims; ++d) {
    const uint8_t* p = &bytes[4 + 4 * d];
    const uint32_t size = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
    out.dims.push_back(size);
    // A product past 2^64 would wrap around, and a small body could match it.
    if (__builtin_mul_overflow(count, size_t{size}, &count))
      throw Error(where, "IDX dimensions too large to hold in memory", "the file is corrupt; re-install the data set");
  }
  const size_t offset = 4 + 4 * ndims;
  if (bytes.size() - offset != count)
    throw Error(where, "IDX body has " + std::to_string(bytes.size() - offset) + " bytes, header says " +
                           std::to_string(count),
                "the file is truncated or corrupt; re-install the data set");
  out.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(offset), bytes.end());
  return out;
}

IdxArray read_idx_file(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr)
    throw Error(path, std::string("cannot open: ") + std::strerror(errno),
                "install dataset-fashion-mnist or pass --data-dir, or use --synthetic");
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  int n = 0;
  while ((n = gzread(file, buffer, sizeof buffer)) > 0) bytes.insert(bytes.end(), buffer, buffer + n);
  int code = Z_OK;
  const char* message = gzerror(file, &code);
  const bool failed = n < 0 || (code != Z_OK && code != Z_STREAM_END);
  const std::string why = failed ? message : "";
  gzclose(file);
  if (failed) throw Error(path, "cannot decompress: " + why, "re-install the data set");
  return parse_idx(bytes, path);
}

}  // namespace hpctrain
