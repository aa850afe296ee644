// FlatMap against std::map: the same contents, order and answers after every operation
// the schedulers use.
#include "engine/sched/flat_map.h"

#include <cstdint>
#include <map>
#include <utility>

#include "common/rng.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using Key = std::pair<uint64_t, uint64_t>;

TEST(FlatMapTest, AgreesWithStdMap) {
  FlatMap<Key, int> flat;
  std::map<Key, int> ref;
  Rng rng(3);
  for (int i = 0; i < 20000; ++i) {
    const Key k{rng.Uniform(64), rng.Uniform(4)};
    switch (rng.Uniform(6)) {
      case 0:
      case 1: {
        const auto [fit, finserted] = flat.emplace(k, i);
        const auto [rit, rinserted] = ref.emplace(k, i);
        ASSERT_EQ(finserted, rinserted);
        ASSERT_EQ(fit->second, rit->second);
        break;
      }
      case 2:
        ASSERT_EQ(flat.erase(k), ref.erase(k));
        break;
      case 3: {
        const auto f = flat.lower_bound(k);
        const auto r = ref.lower_bound(k);
        ASSERT_EQ(f == flat.end(), r == ref.end());
        if (r != ref.end()) {
          ASSERT_EQ(f->first, r->first);
        }
        ASSERT_EQ(f == flat.begin(), r == ref.begin());
        break;
      }
      case 4: {
        const auto f = flat.upper_bound(k);
        const auto r = ref.upper_bound(k);
        ASSERT_EQ(f == flat.end(), r == ref.end());
        if (r != ref.end()) {
          ASSERT_EQ(f->first, r->first);
        }
        break;
      }
      default:
        flat[k] = i;
        ref[k] = i;
        ASSERT_EQ(flat.find(k)->second, i);
        if (!ref.empty() && rng.Uniform(8) == 0) {  // erase by iterator, as a FIFO pops
          flat.erase(flat.begin());
          ref.erase(ref.begin());
        }
        break;
    }
    ASSERT_EQ(flat.size(), ref.size());
  }
  auto r = ref.begin();
  for (const auto& [key, value] : flat) {
    ASSERT_EQ(key, r->first);
    ASSERT_EQ(value, r->second);
    ++r;
  }
  EXPECT_EQ(flat.find(Key{999, 0}), flat.end());
}

}  // namespace
}  // namespace blkbench::engine
