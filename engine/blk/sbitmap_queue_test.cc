// Tests for SbitmapQueue: wake_batch, the three wake-up schemes on scripted waits and
// frees, wake_by_tags, batch modes, waiter bookkeeping and determinism.
#include "engine/blk/sbitmap_queue.h"

#include <random>
#include <vector>

#include "engine/blk/blk_mq_tag.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using Woken = std::vector<WaiterId>;

SbitmapQueue Make(unsigned depth, WakeScheme scheme, bool wake_by_tags = false,
                  BatchMode batch = BatchMode::kSinglePass,
                  ShallowMode shallow = ShallowMode::kPerWord) {
  SbitmapQueueOptions o;
  o.sbitmap.seed = 7;
  o.sbitmap.shallow_mode = shallow;
  o.wake_scheme = scheme;
  o.wake_by_tags = wake_by_tags;
  o.batch_mode = batch;
  absl::StatusOr<SbitmapQueue> sbq = SbitmapQueue::Create(depth, o);
  EXPECT_TRUE(sbq.ok()) << sbq.status();
  return *std::move(sbq);
}

void FillAll(SbitmapQueue& sbq) {
  sbq.mutable_sbitmap().set_hint(0, 0);
  while (sbq.Get(0) >= 0) {
  }
}

Woken ToVector(const WokenList& w) { return Woken(w.begin(), w.end()); }

// Frees tags [from, to) one by one and returns every waiter the frees woke, in order.
Woken ClearTags(SbitmapQueue& sbq, unsigned from, unsigned to) {
  Woken woken;
  for (unsigned tag = from; tag < to; ++tag) {
    const WokenList w = sbq.Clear(tag, 0);
    woken.insert(woken.end(), w.begin(), w.end());
  }
  return woken;
}

TEST(SbitmapQueueTest, WakeBatchValues) {
  for (ShallowMode mode : {ShallowMode::kPerWord, ShallowMode::kWholeBitmap}) {
    SbitmapQueue sbq = Make(64, WakeScheme::kQueueWideSpill, false, BatchMode::kSinglePass, mode);
    EXPECT_EQ(sbq.wake_batch(), 8u);  // 5.14-6.9 mq-deadline, 64 sched tags.
    sbq.SetMinShallowDepth(1);        // 6.10+ mq-deadline.
    EXPECT_EQ(sbq.wake_batch(), 1u);
  }
  EXPECT_EQ(Make(32, WakeScheme::kQueueWide).wake_batch(), 4u);
  EXPECT_EQ(Make(16, WakeScheme::kQueueWide).wake_batch(), 2u);
  EXPECT_EQ(Make(1023, WakeScheme::kQueueWide).wake_batch(), 8u);

  // Per word, a min_shallow_depth above the word width does not limit; whole-bitmap
  // it is a count of bits over the whole map.
  SbitmapQueue per_word = Make(64, WakeScheme::kQueueWide);
  per_word.SetMinShallowDepth(24);
  EXPECT_EQ(per_word.wake_batch(), 8u);  // min(16, 24) * 4 / 8
  per_word.SetMinShallowDepth(4);
  EXPECT_EQ(per_word.wake_batch(), 2u);  // 4 * 4 / 8
  SbitmapQueue whole =
      Make(64, WakeScheme::kQueueWide, false, BatchMode::kSinglePass, ShallowMode::kWholeBitmap);
  whole.SetMinShallowDepth(24);
  EXPECT_EQ(whole.wake_batch(), 3u);  // 24 / 8
}

TEST(SbitmapQueueTest, CountdownResetsWaitCountsWhenWakeBatchChanges) {
  SbitmapQueue sbq = Make(64, WakeScheme::kPerQueueCountdown);
  EXPECT_EQ(sbq.wait_cnt(3), 8);
  sbq.SetMinShallowDepth(1);
  for (int ws = 0; ws < kSbqWaitQueues; ++ws) EXPECT_EQ(sbq.wait_cnt(ws), 1);
}

TEST(SbitmapQueueTest, WaitPtrIsRoundRobin) {
  WaitIndex wi;
  std::vector<int> seq;
  seq.reserve(10);
  for (int i = 0; i < 10; ++i) seq.push_back(SbitmapQueue::WaitPtr(wi));
  EXPECT_THAT(seq, ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 0, 1));
}

// Depth 16 (4 words of 4, wake_batch 2). Waiter 1 on ws0; 2 and 3 on ws1; 4 on ws2;
// waiter 5 joins ws0 after the fourth free. Woken waiters finish at once (they got a
// tag), leaving ws_active. Returns the waiters woken by each of 8 frees.
std::vector<Woken> RunSpillScript(WakeScheme scheme) {
  SbitmapQueue sbq = Make(16, scheme);
  EXPECT_EQ(sbq.wake_batch(), 2u);
  FillAll(sbq);
  EXPECT_TRUE(sbq.Wait(0, 1).ok());
  EXPECT_TRUE(sbq.Wait(1, 2).ok());
  EXPECT_TRUE(sbq.Wait(1, 3).ok());
  EXPECT_TRUE(sbq.Wait(2, 4).ok());
  std::vector<Woken> out;
  for (unsigned tag = 0; tag < 8; ++tag) {
    if (tag == 4) {
      EXPECT_TRUE(sbq.Wait(0, 5).ok());
    }
    out.push_back(ToVector(sbq.Clear(tag, 0)));
    for (WaiterId id : out.back()) {
      EXPECT_TRUE(sbq.FinishWait(id));
    }
  }
  return out;
}

TEST(SbitmapQueueTest, WakeOrderPre62CountdownAnd62QueueWide) {
  const std::vector<Woken> expected = {{}, {1}, {}, {2, 3}, {}, {4}, {}, {5}};
  EXPECT_EQ(RunSpillScript(WakeScheme::kPerQueueCountdown), expected);
  EXPECT_EQ(RunSpillScript(WakeScheme::kQueueWide), expected);
}

TEST(SbitmapQueueTest, WakeOrder65SpillsIntoNextQueues) {
  // ws0 runs short at the 2nd free, so the batch spills to ws1; at the 4th, ws2 runs
  // short and the rest goes round to ws1. After the 6th free nobody waits, so the
  // 7th and 8th are not even counted.
  const std::vector<Woken> expected = {{}, {1, 2}, {}, {4, 3}, {}, {5}, {}, {}};
  EXPECT_EQ(RunSpillScript(WakeScheme::kQueueWideSpill), expected);
}

// A waiter that gives up leaves a partial countdown behind on its queue (pre-6.2),
// while the 6.2+ counter is queue-wide.
std::vector<Woken> RunCancelScript(WakeScheme scheme) {
  SbitmapQueue sbq = Make(16, scheme);
  FillAll(sbq);
  std::vector<Woken> out;
  EXPECT_TRUE(sbq.Wait(0, 1).ok());
  out.push_back(ToVector(sbq.Clear(0, 0)));
  EXPECT_TRUE(sbq.CancelWait(1));
  EXPECT_TRUE(sbq.Wait(1, 2).ok());
  EXPECT_TRUE(sbq.Wait(1, 3).ok());
  out.push_back(ToVector(sbq.Clear(1, 0)));
  out.push_back(ToVector(sbq.Clear(2, 0)));
  return out;
}

TEST(SbitmapQueueTest, CountdownIsPerQueueButQueueWideCounterIsShared) {
  EXPECT_EQ(RunCancelScript(WakeScheme::kPerQueueCountdown), (std::vector<Woken>{{}, {}, {2, 3}}));
  EXPECT_EQ(RunCancelScript(WakeScheme::kQueueWide), (std::vector<Woken>{{}, {2, 3}, {}}));
}

TEST(SbitmapQueueTest, WakeByTagsCountsTagsNeeded) {
  for (bool by_tags : {false, true}) {
    SbitmapQueue sbq = Make(64, WakeScheme::kPerQueueCountdown, by_tags);
    FillAll(sbq);
    ASSERT_TRUE(sbq.Wait(0, 10, 4).ok());
    ASSERT_TRUE(sbq.Wait(0, 11, 4).ok());
    ASSERT_TRUE(sbq.Wait(0, 12, 4).ok());
    ASSERT_TRUE(sbq.Wait(0, 13, 1).ok());
    const Woken woken = ClearTags(sbq, 0, 8);
    if (by_tags) {
      EXPECT_THAT(woken, ElementsAre(10, 11));  // 4 + 4 tags fill the batch of 8.
    } else {
      EXPECT_THAT(woken, ElementsAre(10, 11, 12, 13));
    }
  }
}

// Seed 001's patch 5 leaves get_wake_nr() reporting a budget the queue's waiters do not
// cover; __sbq_wake_up() then calls sbitmap_queue_wake_all(), which wakes one exclusive
// waiter on every active queue from wake_index.
TEST(SbitmapQueueTest, WakeByTagsWakesEveryQueueWhenOneCannotCoverTheBatch) {
  SbitmapQueue sbq = Make(64, WakeScheme::kPerQueueCountdown, true);
  FillAll(sbq);
  ASSERT_TRUE(sbq.Wait(0, 10, 4).ok());  // queue 0 needs 4 of the batch of 8
  ASSERT_TRUE(sbq.Wait(2, 20, 1).ok());
  ASSERT_TRUE(sbq.Wait(2, 21, 1).ok());
  ASSERT_TRUE(sbq.Wait(5, 50, 1).ok());
  const Woken woken = ClearTags(sbq, 0, 8);
  EXPECT_THAT(woken, ElementsAre(10, 20, 50));  // then the head of queues 2 and 5
  EXPECT_EQ(sbq.waiters_in(2), 1u);
}

// Seed 001's patch 6: each wake-up records whether more than twice wake_batch tags were
// free, which lets new I/O take tags again under tag-no-preempt.
TEST(SbitmapQueueTest, ForceTagPreemptionIsSetByAWakeUpThatFindsManyFreeTags) {
  SbitmapQueue sbq = Make(64, WakeScheme::kPerQueueCountdown, true);
  ASSERT_EQ(sbq.wake_batch(), 8u);
  FillAll(sbq);
  ASSERT_TRUE(sbq.Wait(0, 1, 1).ok());
  (void)ClearTags(sbq, 0, 8);
  EXPECT_FALSE(sbq.force_tag_preemption());  // 8 free at the wake-up: not > 16
  (void)ClearTags(sbq, 8, 18);               // nobody waits
  ASSERT_TRUE(sbq.Wait(1, 2, 1).ok());
  (void)ClearTags(sbq, 18, 26);
  EXPECT_TRUE(sbq.force_tag_preemption());  // 26 free at the second wake-up
}

TEST(SbitmapQueueTest, WakeByTagsWithSpillUsesTagBudget) {
  SbitmapQueue sbq = Make(64, WakeScheme::kQueueWideSpill, true);
  FillAll(sbq);
  ASSERT_TRUE(sbq.Wait(0, 1, 4).ok());
  ASSERT_TRUE(sbq.Wait(1, 2, 2).ok());
  ASSERT_TRUE(sbq.Wait(1, 3, 2).ok());
  ASSERT_TRUE(sbq.Wait(1, 4, 2).ok());
  const Woken woken = ClearTags(sbq, 0, 8);
  EXPECT_THAT(woken, ElementsAre(1, 2, 3));  // 4 + 2 + 2 = 8.
}

TEST(SbitmapQueueTest, WaiterBookkeeping) {
  SbitmapQueue sbq = Make(16, WakeScheme::kQueueWideSpill);
  EXPECT_FALSE(sbq.has_waiters());
  EXPECT_EQ(sbq.Wait(8, 1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(sbq.Wait(0, 1, 0).code(), absl::StatusCode::kInvalidArgument);
  ASSERT_TRUE(sbq.Wait(0, 1).ok());
  EXPECT_EQ(sbq.Wait(3, 1).code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(sbq.has_waiters());
  EXPECT_EQ(sbq.ws_active(), 1);

  FillAll(sbq);
  EXPECT_THAT(ToVector(sbq.Clear(0, 0)), IsEmpty());
  EXPECT_THAT(ToVector(sbq.Clear(1, 0)), ElementsAre(1));
  EXPECT_FALSE(sbq.has_waiters());   // Off the queue ...
  EXPECT_EQ(sbq.ws_active(), 1);     // ... but still counted until it runs.
  ASSERT_TRUE(sbq.Wait(2, 1).ok());  // Lost the race: waits again, not counted twice.
  EXPECT_EQ(sbq.ws_active(), 1);
  EXPECT_EQ(sbq.waiters_in(2), 1u);
  EXPECT_TRUE(sbq.FinishWait(1));
  EXPECT_FALSE(sbq.FinishWait(1));
  EXPECT_EQ(sbq.ws_active(), 0);
  EXPECT_EQ(sbq.waiters_in(2), 0u);
  EXPECT_EQ(sbq.stats().waits, 2u);
  EXPECT_EQ(sbq.stats().woken, 1u);
  EXPECT_EQ(sbq.stats().frees, 2u);
}

TEST(SbitmapQueueTest, ClearBatchCountsOnceBefore62) {
  for (WakeScheme scheme : {WakeScheme::kPerQueueCountdown, WakeScheme::kQueueWideSpill}) {
    SbitmapQueue sbq = Make(16, scheme);
    FillAll(sbq);
    ASSERT_TRUE(sbq.Wait(0, 1).ok());
    const std::vector<int> tags = {4, 5};
    const WokenList w = sbq.ClearBatch(tags, 0);
    EXPECT_EQ(w.size, scheme == WakeScheme::kPerQueueCountdown ? 0 : 1);
    EXPECT_FALSE(sbq.sbitmap().TestBit(4));
    EXPECT_EQ(sbq.sbitmap().cleared(1), 0u);  // Batch frees skip the deferred mask.
    EXPECT_EQ(sbq.sbitmap().hint(0), 5u);
  }
}

// 1023 tags (16 x 64), all allocated, then every even tag freed: the fragmentation of
// scattered completions (ENGINE.md 10(4)).
SbitmapQueue Fragmented(BatchMode mode) {
  SbitmapQueue sbq = Make(1023, WakeScheme::kQueueWideSpill, false, mode);
  FillAll(sbq);
  for (unsigned tag = 0; tag < 1023; tag += 2) sbq.Clear(tag, 0);
  sbq.mutable_sbitmap().set_hint(0, 0);
  return sbq;
}

TEST(SbitmapQueueTest, SinglePassBatchOnFragmentedMap) {
  SbitmapQueue sbq = Fragmented(BatchMode::kSinglePass);
  const BatchTags got = sbq.GetBatchTags(0, 32);
  EXPECT_EQ(got.size, 16);
  EXPECT_EQ(got.passes, 1);
  for (int i = 0; i < got.size; ++i) EXPECT_EQ(got.tags[i], 2 * i);
  EXPECT_EQ(sbq.stats().batch_tags_requested, 32u);
  EXPECT_EQ(sbq.stats().batch_tags_obtained, 16u);
}

TEST(SbitmapQueueTest, MultiPassBatchOnFragmentedMap) {
  SbitmapQueue sbq = Fragmented(BatchMode::kMultiPass);
  const BatchTags got = sbq.GetBatchTags(0, 32);
  // Windows 0-31, 32-47, 48-55, 56-59, 60-61, 62: 16 + 8 + 4 + 2 + 1 + 1 tags.
  EXPECT_EQ(got.size, 32);
  EXPECT_EQ(got.passes, 6);
  for (int i = 0; i < got.size; ++i) EXPECT_EQ(got.tags[i], 2 * i);
  EXPECT_EQ(sbq.stats().batch_passes, 6u);
}

TEST(SbitmapQueueTest, MultiPassStopsWhenNoWindowFits) {
  for (BatchMode mode : {BatchMode::kSinglePass, BatchMode::kMultiPass}) {
    SbitmapQueue sbq = Make(64, WakeScheme::kQueueWideSpill, false, mode);
    FillAll(sbq);
    for (unsigned tag : {5u, 20u, 40u, 62u}) sbq.Clear(tag, 0);
    sbq.mutable_sbitmap().set_hint(0, 0);
    const BatchTags got = sbq.GetBatchTags(0, 8);
    // Tag 62 (bit 14 of word 3) never fits a window of 5 or more.
    if (mode == BatchMode::kMultiPass) {
      EXPECT_THAT(std::vector<int>(got.begin(), got.end()), ElementsAre(5, 20, 40));
    } else {
      EXPECT_THAT(std::vector<int>(got.begin(), got.end()), ElementsAre(5));
    }
  }
}

TEST(SbitmapQueueTest, TagRulesAndProfiles) {
  EXPECT_TRUE(CanBatchAllocate(0, false, false));
  EXPECT_FALSE(CanBatchAllocate(48, false, false));
  EXPECT_FALSE(CanBatchAllocate(0, true, false));
  EXPECT_FALSE(CanBatchAllocate(0, false, true));
  EXPECT_EQ(PlugNrIosAfterAlloc(BatchMode::kSinglePass, 32, 16), 1);
  EXPECT_EQ(PlugNrIosAfterAlloc(BatchMode::kMultiPass, 32, 16), 16);
  EXPECT_EQ(PlugNrIosAfterAlloc(BatchMode::kMultiPass, 32, 0), 1);

  EXPECT_EQ(MechanismsForKernel(5, 18).wake_scheme, WakeScheme::kPerQueueCountdown);
  EXPECT_EQ(MechanismsForKernel(6, 2).wake_scheme, WakeScheme::kQueueWide);
  EXPECT_EQ(MechanismsForKernel(6, 10).wake_scheme, WakeScheme::kQueueWideSpill);
  EXPECT_EQ(MechanismsForKernel(6, 16).shallow_mode, ShallowMode::kPerWord);
  EXPECT_EQ(MechanismsForKernel(6, 17).shallow_mode, ShallowMode::kWholeBitmap);
  EXPECT_EQ(MechanismsForKernel(6, 18).batch_mode, BatchMode::kSinglePass);
  EXPECT_EQ(MechanismsForKernel(6, 19).batch_mode, BatchMode::kMultiPass);
  EXPECT_FALSE(MechanismsForKernel(5, 15).batch_alloc);
  EXPECT_TRUE(MechanismsForKernel(6, 1).batch_whole_window);
  EXPECT_FALSE(MechanismsForKernel(6, 8).batch_whole_window);
  const SbitmapQueueOptions o = SbqOptionsForKernel(5, 18, 4, 1, true);
  EXPECT_EQ(o.wake_scheme, WakeScheme::kPerQueueCountdown);
  EXPECT_TRUE(o.wake_by_tags);
  EXPECT_EQ(o.sbitmap.nr_cpus, 4);
}

// Random mixed traffic; returns a hash of every result. Also checks that the bitmap's
// weight always equals the tags held.
uint64_t RandomRunHash(WakeScheme scheme, uint64_t seed) {
  SbitmapQueueOptions o;
  o.sbitmap.nr_cpus = 4;
  o.sbitmap.seed = seed;
  o.wake_scheme = scheme;
  o.batch_mode = BatchMode::kMultiPass;
  SbitmapQueue sbq = *SbitmapQueue::Create(128, o);
  std::mt19937_64 rng(1234);
  std::vector<int> held;
  WaitIndex wi;
  uint64_t hash = 1469598103934665603ULL;
  auto mix = [&hash](uint64_t v) { hash = (hash ^ v) * 1099511628211ULL; };
  WaiterId next_waiter = 1;
  std::vector<WaiterId> woken;
  for (int step = 0; step < 20000; ++step) {
    const int cpu = static_cast<int>(rng() % 4);
    const uint64_t op = rng() % 10;
    if (op < 3) {
      const int tag = sbq.Get(cpu);
      mix(static_cast<uint64_t>(tag));
      if (tag >= 0) {
        held.push_back(tag);
      } else {
        EXPECT_TRUE(sbq.Wait(SbitmapQueue::WaitPtr(wi), next_waiter++, 1 + rng() % 4).ok());
      }
    } else if (op < 4) {
      for (int tag : sbq.GetBatchTags(cpu, 1 + static_cast<int>(rng() % 32))) {
        mix(static_cast<uint64_t>(tag));
        held.push_back(tag);
      }
    } else if (!held.empty()) {
      const size_t i = rng() % held.size();
      const int tag = held[i];
      held[i] = held.back();
      held.pop_back();
      for (WaiterId id : sbq.Clear(static_cast<unsigned>(tag), cpu)) {
        mix(id);
        woken.push_back(id);
      }
      if (!woken.empty() && rng() % 2 == 0) {
        EXPECT_TRUE(sbq.FinishWait(woken.back()));
        woken.pop_back();
      }
    }
    EXPECT_EQ(sbq.sbitmap().Weight(), held.size());
  }
  mix(sbq.stats().woken);
  mix(sbq.stats().batch_tags_obtained);
  return hash;
}

TEST(SbitmapQueueTest, Deterministic) {
  for (WakeScheme scheme :
       {WakeScheme::kPerQueueCountdown, WakeScheme::kQueueWide, WakeScheme::kQueueWideSpill}) {
    EXPECT_EQ(RandomRunHash(scheme, 99), RandomRunHash(scheme, 99));
  }
  // The seed only moves the initial hints, which changes the tags handed out.
  EXPECT_NE(RandomRunHash(WakeScheme::kQueueWideSpill, 1),
            RandomRunHash(WakeScheme::kQueueWideSpill, 2));
}

}  // namespace
}  // namespace blkbench::engine
