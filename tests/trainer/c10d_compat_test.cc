// trainer/c10d_compat.h's pure part: when to ask TCPStore for its libuv server (the store itself is exercised by
// torch_test.cc's two-rank cases, under Debian's 1.13 here and Debian 13's 2.6 in t0515).
#include <doctest/doctest.h>

#include "c10d_compat.h"

using hpctrain::compat::libuv_requested;

TEST_CASE("the libuv store server is asked for as torch.distributed asks: USE_LIBUV unset or \"1\"") {
  CHECK(libuv_requested(nullptr));
  CHECK(libuv_requested("1"));
  CHECK_FALSE(libuv_requested("0"));
  CHECK_FALSE(libuv_requested(""));
  CHECK_FALSE(libuv_requested("true"));
}
