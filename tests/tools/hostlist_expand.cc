// Test tool: prints expand_hostlist(ARG) one name a line, as `scontrol show hostnames ARG` does, so that
// tests/integration/t0110-hostlist-scontrol.sh can compare the two. Exit 1 with the error on a malformed list.
#include <cstdio>
#include <exception>

#include "dialect/hostlist.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hostlist_expand LIST\n");
    return 2;
  }
  try {
    for (const auto& host : hpclaunch::expand_hostlist(argv[1], "LIST")) std::printf("%s\n", host.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hostlist_expand: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
