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

// FlatMap<Key> against std::map keyed by the same pairs as std::pair (PairKey must
// order as std::pair does).
template <typename Key>
void CheckAgreesWithStdMap() {
  FlatMap<Key, int> flat;
  std::map<std::pair<uint64_t, uint64_t>, int> ref;
  Rng rng(3);
  for (int i = 0; i < 20000; ++i) {
    // Keys near 2^64 too: PairKey compares the pair as one 128-bit number.
    const uint64_t major = rng.Uniform(2) == 0 ? rng.Uniform(64) : UINT64_MAX - rng.Uniform(64);
    const Key k{major, rng.Uniform(2) == 0 ? rng.Uniform(4) : UINT64_MAX - rng.Uniform(4)};
    const std::pair<uint64_t, uint64_t> rk{k.first, k.second};
    switch (rng.Uniform(6)) {
      case 0:
      case 1: {
        const auto [fit, finserted] = flat.emplace(k, i);
        const auto [rit, rinserted] = ref.emplace(rk, i);
        ASSERT_EQ(finserted, rinserted);
        ASSERT_EQ(fit->second, rit->second);
        break;
      }
      case 2:
        ASSERT_EQ(flat.erase(k), ref.erase(rk));
        break;
      case 3: {
        const auto f = flat.lower_bound(k);
        const auto r = ref.lower_bound(rk);
        ASSERT_EQ(f == flat.end(), r == ref.end());
        if (r != ref.end()) {
          ASSERT_EQ(f->first.first, r->first.first);
          ASSERT_EQ(f->first.second, r->first.second);
        }
        ASSERT_EQ(f == flat.begin(), r == ref.begin());
        break;
      }
      case 4: {
        const auto f = flat.upper_bound(k);
        const auto r = ref.upper_bound(rk);
        ASSERT_EQ(f == flat.end(), r == ref.end());
        if (r != ref.end()) {
          ASSERT_EQ(f->first.first, r->first.first);
          ASSERT_EQ(f->first.second, r->first.second);
        }
        break;
      }
      default:
        flat[k] = i;
        ref[rk] = i;
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
    ASSERT_EQ(key.first, r->first.first);
    ASSERT_EQ(key.second, r->first.second);
    ASSERT_EQ(value, r->second);
    ++r;
  }
  EXPECT_EQ(flat.find(Key{999, 0}), flat.end());
}

TEST(FlatMapTest, AgreesWithStdMap) { CheckAgreesWithStdMap<std::pair<uint64_t, uint64_t>>(); }

TEST(FlatMapTest, PairKeyAgreesWithStdMap) { CheckAgreesWithStdMap<PairKey>(); }

}  // namespace
}  // namespace blkbench::engine
