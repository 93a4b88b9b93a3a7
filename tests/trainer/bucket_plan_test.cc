// Gradient bucket planning: reverse order, caps, kinds kept apart, every parameter exactly once.
#include <doctest/doctest.h>

#include <algorithm>

#include "bucket_plan.h"

using hpctrain::ParamInfo;
using hpctrain::plan_buckets;

TEST_SUITE_BEGIN("BucketPlan");

TEST_CASE("parameters go in reverse order and a bucket closes once it reaches the cap") {
  const std::vector<ParamInfo> p{{4, "f"}, {4, "f"}, {4, "f"}, {4, "f"}, {4, "f"}};
  const auto plan = plan_buckets(p, 8, 8);
  CHECK(plan == std::vector<std::vector<size_t>>{{4, 3}, {2, 1}, {0}});
}

TEST_CASE("the first bucket has its own smaller cap") {
  const std::vector<ParamInfo> p{{4, "f"}, {4, "f"}, {4, "f"}, {4, "f"}};
  CHECK(plan_buckets(p, 100, 4) == std::vector<std::vector<size_t>>{{3}, {2, 1, 0}});
}

TEST_CASE("a parameter larger than the cap gets a bucket of its own") {
  const std::vector<ParamInfo> p{{1, "f"}, {1000, "f"}, {1, "f"}};
  CHECK(plan_buckets(p, 10, 10) == std::vector<std::vector<size_t>>{{2, 1}, {0}});
}

TEST_CASE("parameters of different dtype or device never share a bucket") {
  const std::vector<ParamInfo> p{{4, "f"}, {4, "h"}, {4, "f"}, {4, "h"}};
  const auto plan = plan_buckets(p, 100, 100);
  CHECK(plan == std::vector<std::vector<size_t>>{{3, 1}, {2, 0}});
}

TEST_CASE("every parameter lands in exactly one bucket for any sizes and caps") {
  for (size_t n = 0; n < 12; ++n) {
    for (int64_t cap = 1; cap < 40; cap += 3) {
      std::vector<ParamInfo> p;
      for (size_t i = 0; i < n; ++i) p.push_back({static_cast<int64_t>((i * 7) % 11 + 1), i % 3 ? "f" : "d"});
      const auto plan = plan_buckets(p, cap, std::max<int64_t>(1, cap / 2));
      std::vector<size_t> all;
      for (const auto& b : plan) {
        CHECK_FALSE(b.empty());
        for (size_t i : b) CHECK(p[i].kind == p[b.front()].kind);
        all.insert(all.end(), b.begin(), b.end());
      }
      std::sort(all.begin(), all.end());
      CHECK(all.size() == n);
      for (size_t i = 0; i < all.size(); ++i) CHECK(all[i] == i);
    }
  }
}

TEST_SUITE_END();
