// RqHash against an ordered map of (end, sequence): the same answer to every lookup
// after every add and delete, as mq-deadline's merge hash used it before.
#include "engine/sched/rq_hash.h"

#include <cstdint>
#include <iterator>
#include <map>
#include <utility>

#include "common/rng.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

TEST(RqHashTest, FindsTheNewestAtAnEndAsAnOrderedMapDoes) {
  RqHash<int> hash;
  std::map<std::pair<uint64_t, uint64_t>, int> ref;
  Rng rng(7);
  uint64_t next_seq = 1;
  for (int i = 0; i < 50000; ++i) {
    // Few distinct ends, so many share one; sequences mostly new, sometimes re-added old.
    const uint64_t end = rng.Uniform(64);
    switch (rng.Uniform(4)) {
      case 0:
      case 1: {
        uint64_t seq = next_seq++;
        if (rng.Uniform(4) == 0 && seq > 10) seq = rng.Uniform(seq);  // a reposition
        if (ref.count({end, seq}) != 0) break;
        hash.Add(end, seq, i + 1);  // never 0: Find's "none"
        ref[{end, seq}] = i + 1;
        break;
      }
      case 2: {
        if (ref.empty()) break;
        auto it = ref.begin();
        std::advance(it, static_cast<long>(rng.Uniform(ref.size())));
        ASSERT_TRUE(hash.Del(it->first.first, it->first.second));
        ref.erase(it);
        break;
      }
      default:
        ASSERT_FALSE(hash.Del(end, UINT64_MAX));
        break;
    }
    const uint64_t probe = rng.Uniform(64);
    auto it = ref.upper_bound({probe, UINT64_MAX});
    const int want = it == ref.begin() || (--it)->first.first != probe ? 0 : it->second;
    ASSERT_EQ(hash.Find(probe), want) << "op " << i;
    ASSERT_EQ(hash.size(), ref.size());
  }
}

}  // namespace
}  // namespace blkbench::engine
