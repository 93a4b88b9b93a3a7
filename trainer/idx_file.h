// Reads MNIST-format IDX files (plain or gzip): the format of Debian's dataset-fashion-mnist package.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hpctrain {

struct IdxArray {
  std::vector<int64_t> dims;   // e.g. {60000, 28, 28} for images, {60000} for labels
  std::vector<uint8_t> data;   // unsigned bytes (type code 0x08), row-major
};

// Parses a whole decompressed IDX file. Throws hpclaunch::Error naming `where` on a bad header or length.
IdxArray parse_idx(const std::vector<uint8_t>& bytes, const std::string& where);

// Reads `path`, gunzipping when it is gzip (zlib reads plain files unchanged), then parse_idx.
IdxArray read_idx_file(const std::string& path);

}  // namespace hpctrain
