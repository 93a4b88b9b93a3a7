// IDX reader: headers, lengths, gzip and plain files, and the real Fashion-MNIST package when installed.
#include <doctest/doctest.h>

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <unistd.h>

#include "idx_file.h"
#include "util/error.h"

using hpctrain::parse_idx;
using hpctrain::read_idx_file;

namespace {

std::vector<uint8_t> idx_bytes(std::vector<uint32_t> dims, const std::vector<uint8_t>& body) {
  std::vector<uint8_t> out{0, 0, 8, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    out.push_back(static_cast<uint8_t>(d >> 24));
    out.push_back(static_cast<uint8_t>(d >> 16));
    out.push_back(static_cast<uint8_t>(d >> 8));
    out.push_back(static_cast<uint8_t>(d));
  }
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

std::string temp_name(const char* suffix) {
  return "/tmp/hpctrain-idx-" + std::to_string(::getpid()) + suffix;
}

}  // namespace

TEST_SUITE_BEGIN("IdxFile");

TEST_CASE("an IDX header gives the dimensions and the body the bytes") {
  const auto a = parse_idx(idx_bytes({2, 3}, {1, 2, 3, 4, 5, 6}), "x");
  CHECK(a.dims == std::vector<int64_t>{2, 3});
  CHECK(a.data == std::vector<uint8_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("bad magic, another element type and a wrong length are refused with the file's name") {
  CHECK_THROWS_WITH_AS(parse_idx({1, 2, 3, 4}, "f.gz"), doctest::Contains("f.gz: not an IDX file"), hpclaunch::Error);
  auto floats = idx_bytes({1}, {0, 0, 0, 0});
  floats[2] = 0x0D;
  CHECK_THROWS_WITH_AS(parse_idx(floats, "f"), doctest::Contains("is not unsigned byte"), hpclaunch::Error);
  CHECK_THROWS_WITH_AS(parse_idx(idx_bytes({2, 3}, {1, 2, 3}), "f"), doctest::Contains("header says 6"),
                       hpclaunch::Error);
  CHECK_THROWS_AS(parse_idx({0, 0, 8, 3, 0}, "f"), hpclaunch::Error);
}

TEST_CASE("dimensions whose product passes 2^64 are refused, not wrapped around to the body's length") {
  // Found by fuzz/idx.cc: 65536^4 wrapped to 0, so an empty body passed for four huge dimensions (and
  // torch::from_blob would have read far past it).
  CHECK_THROWS_WITH_AS(parse_idx(idx_bytes({65536, 65536, 65536, 65536}, {}), "f"), doctest::Contains("f: "),
                       hpclaunch::Error);
  CHECK_THROWS_AS(parse_idx(idx_bytes({4194304, 4194304, 1048576, 1}, {}), "f"), hpclaunch::Error);
}

TEST_CASE("gzip and plain files read the same") {
  const auto bytes = idx_bytes({3}, {7, 8, 9});
  const std::string gz = temp_name(".gz"), plain = temp_name(".raw");
  gzFile out = gzopen(gz.c_str(), "wb");
  gzwrite(out, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(out);
  std::ofstream(plain, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  CHECK(read_idx_file(gz).data == std::vector<uint8_t>{7, 8, 9});
  CHECK(read_idx_file(plain).data == std::vector<uint8_t>{7, 8, 9});
  std::remove(gz.c_str());
  std::remove(plain.c_str());
  CHECK_THROWS_WITH_AS(read_idx_file("/nonexistent/x.gz"), doctest::Contains("/nonexistent/x.gz: cannot open"),
                       hpclaunch::Error);
}

TEST_CASE("Debian's Fashion-MNIST labels: 10000 test labels in 0..9") {
  const std::string path = "/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz";
  if (!std::ifstream(path)) return;  // dataset-fashion-mnist not installed: nothing to check
  const auto a = read_idx_file(path);
  CHECK(a.dims == std::vector<int64_t>{10000});
  for (uint8_t label : a.data) CHECK(label < 10);
}

TEST_SUITE_END();
