// Tests for Sbitmap: word layout, hints, shallow limits and batch windows, checked
// against hand-traced runs of the lib/sbitmap.c code they mirror.
#include "engine/blk/sbitmap.h"

#include <algorithm>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

using ::testing::ElementsAre;

Sbitmap Make(unsigned depth, int nr_cpus = 1, ShallowMode mode = ShallowMode::kPerWord) {
  SbitmapOptions o;
  o.nr_cpus = nr_cpus;
  o.seed = 42;
  o.shallow_mode = mode;
  absl::StatusOr<Sbitmap> sb = Sbitmap::Create(depth, o);
  EXPECT_TRUE(sb.ok()) << sb.status();
  return *std::move(sb);
}

// Allocates every bit from CPU 0 starting at hint 0; returns them in allocation order.
std::vector<int> FillAll(Sbitmap& sb) {
  sb.set_hint(0, 0);
  std::vector<int> tags;
  for (int tag = sb.Get(0); tag >= 0; tag = sb.Get(0)) tags.push_back(tag);
  return tags;
}

std::vector<int> MaskTags(uint64_t mask, unsigned offset) {
  std::vector<int> tags;
  for (int i = 0; i < 64; ++i) {
    if (mask & (uint64_t{1} << i)) tags.push_back(static_cast<int>(offset) + i);
  }
  return tags;
}

struct Layout {
  unsigned depth;
  int shift;
  unsigned map_nr;
  unsigned last_word_depth;
};

TEST(SbitmapTest, WordLayoutFollowsCalculateShift) {
  const Layout layouts[] = {
      {32, 3, 4, 8},     {64, 4, 4, 16},    {128, 5, 4, 32}, {256, 6, 4, 64},
      {1023, 6, 16, 63}, {1024, 6, 16, 64}, {16, 2, 4, 4},   {3, 6, 1, 3},
  };
  for (const Layout& l : layouts) {
    SCOPED_TRACE(l.depth);
    EXPECT_EQ(Sbitmap::CalculateShift(l.depth), l.shift);
    Sbitmap sb = Make(l.depth);
    EXPECT_EQ(sb.shift(), l.shift);
    EXPECT_EQ(sb.map_nr(), l.map_nr);
    EXPECT_EQ(sb.WordDepth(0), std::min(l.depth, 1u << l.shift));
    EXPECT_EQ(sb.WordDepth(l.map_nr - 1), l.last_word_depth);
    EXPECT_EQ(FillAll(sb).size(), l.depth);
    EXPECT_EQ(sb.Weight(), l.depth);
    EXPECT_EQ(sb.Get(0), -1);
  }
}

TEST(SbitmapTest, CreateRejectsBadArguments) {
  EXPECT_FALSE(Sbitmap::Create(0, {}).ok());
  SbitmapOptions no_cpus;
  no_cpus.nr_cpus = 0;
  EXPECT_FALSE(Sbitmap::Create(64, no_cpus).ok());
  SbitmapOptions wide;
  wide.shift = 7;
  EXPECT_FALSE(Sbitmap::Create(64, wide).ok());
}

TEST(SbitmapTest, InitialHintsAreSeededAndDeterministic) {
  Sbitmap a = Make(1023, 8);
  Sbitmap b = Make(1023, 8);
  bool all_zero = true;
  for (int cpu = 0; cpu < 8; ++cpu) {
    EXPECT_EQ(a.hint(cpu), b.hint(cpu));
    EXPECT_LT(a.hint(cpu), 1023u);
    all_zero = all_zero && a.hint(cpu) == 0;
  }
  EXPECT_FALSE(all_zero);
}

TEST(SbitmapTest, SequentialGetsFillWordsInOrder) {
  Sbitmap sb = Make(64);
  std::vector<int> tags = FillAll(sb);
  ASSERT_EQ(tags.size(), 64u);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(tags[i], i);
  EXPECT_EQ(sb.hint(0), 0u);  // A failed get resets the hint.
}

TEST(SbitmapTest, HintFollowsFreesAndAdvancesOnlyWhenUsed) {
  Sbitmap sb = Make(64, 2);
  FillAll(sb);
  sb.DeferredClearBit(37);
  sb.UpdateCpuHint(1, 37);
  sb.DeferredClearBit(33);
  sb.UpdateCpuHint(1, 33);
  sb.DeferredClearBit(40);
  sb.UpdateCpuHint(0, 40);
  EXPECT_FALSE(sb.TestBit(33));
  EXPECT_EQ(sb.cleared(2), (uint64_t{1} << 1) | (uint64_t{1} << 5) | (uint64_t{1} << 8));

  // CPU 1's hint (33) selects word 2; the search starts at the word's bit 0 and the
  // deferred clears are folded in only because the word looks full.
  EXPECT_EQ(sb.Get(1), 33);
  EXPECT_EQ(sb.cleared(2), 0u);
  EXPECT_EQ(sb.hint(1), 34u);  // Used the hint itself: advance.
  EXPECT_EQ(sb.Get(1), 37);
  EXPECT_EQ(sb.hint(1), 34u);  // 37 != hint: unchanged.
  EXPECT_EQ(sb.Get(0), 40);
  EXPECT_EQ(sb.hint(0), 41u);
  EXPECT_EQ(sb.Get(0), -1);
  EXPECT_EQ(sb.hint(0), 0u);
}

TEST(SbitmapTest, ShallowDepthPerWordCapsEveryWord) {
  Sbitmap sb = Make(64, 1, ShallowMode::kPerWord);
  sb.set_hint(0, 0);
  int got = 0;
  while (sb.GetShallow(0, 4) >= 0) ++got;
  EXPECT_EQ(got, 16);  // 4 bits in each of the 4 words of 16.
  for (unsigned w = 0; w < 4; ++w) EXPECT_EQ(sb.word(w), 0xFu);
  EXPECT_GE(sb.Get(0), 0);  // A non-shallow get can still use the rest.
}

TEST(SbitmapTest, ShallowDepthWholeBitmapCapsTheTotal) {
  Sbitmap sb = Make(64, 1, ShallowMode::kWholeBitmap);
  sb.set_hint(0, 0);
  int got = 0;
  while (sb.GetShallow(0, 4) >= 0) ++got;
  EXPECT_EQ(got, 4);  // 4 bits over the whole map: one per word.
  for (unsigned w = 0; w < 4; ++w) EXPECT_EQ(sb.word(w), 0x1u);

  // 50 of 64: remainder bits go to the first words (13, 13, 12, 12).
  Sbitmap sb50 = Make(64, 1, ShallowMode::kWholeBitmap);
  EXPECT_EQ(sb50.ShallowWordDepth(0, 50), 13u);
  EXPECT_EQ(sb50.ShallowWordDepth(1, 50), 13u);
  EXPECT_EQ(sb50.ShallowWordDepth(2, 50), 12u);
  EXPECT_EQ(sb50.ShallowWordDepth(3, 50), 12u);
  got = 0;
  while (sb50.GetShallow(0, 50) >= 0) ++got;
  EXPECT_EQ(got, 50);
}

TEST(SbitmapTest, BatchWindowReturnsOnlyBitsThatWereFree) {
  Sbitmap sb = Make(64);
  FillAll(sb);
  for (unsigned t : {2u, 5u, 6u}) {
    sb.DeferredClearBit(t);
    sb.UpdateCpuHint(0, t);
  }
  unsigned offset = 0;
  const uint64_t mask = sb.GetBatch(0, 4, &offset);
  // Word 0 looked full, so its cleared bits were folded in; the first zero bit is 2
  // and the window 2..5 holds only 2 and 5 free. Tag 6 stays free.
  EXPECT_EQ(offset, 2u);
  EXPECT_THAT(MaskTags(mask, offset), ElementsAre(2, 5));
  EXPECT_TRUE(sb.TestBit(3));
  EXPECT_FALSE(sb.TestBit(6));
  EXPECT_EQ(sb.hint(0), 6u);  // The window's last bit (5) is not the hint: unchanged.
}

TEST(SbitmapTest, BatchWholeWindowEraSkipsPartlyBusyWindows) {
  SbitmapOptions o;
  o.batch_whole_window = true;
  Sbitmap sb = *Sbitmap::Create(64, o);
  sb.set_hint(0, 0);
  for (int i = 0; i < 16; ++i) ASSERT_EQ(sb.Get(0), i);
  for (unsigned t : {2u, 5u, 6u}) sb.DeferredClearBit(t);
  sb.set_hint(0, 0);
  unsigned offset = 0;
  // Window 2..5 holds busy bits 3 and 4: word 0 is skipped, word 1 is empty.
  EXPECT_EQ(sb.GetBatch(0, 4, &offset), 0xFu);
  EXPECT_EQ(offset, 16u);
  EXPECT_FALSE(sb.TestBit(2));
  EXPECT_EQ(sb.cleared(0), 0u);  // Folded before looking.
}

TEST(SbitmapTest, BatchWindowThatDoesNotFitMovesToNextWord) {
  Sbitmap sb = Make(64);
  sb.set_hint(0, 0);
  for (int i = 0; i < 14; ++i) ASSERT_EQ(sb.Get(0), i);
  sb.set_hint(0, 0);
  unsigned offset = 0;
  const uint64_t mask = sb.GetBatch(0, 4, &offset);
  // Bits 14 and 15 are free but 14 + 4 > 16: the window goes to word 1.
  EXPECT_EQ(offset, 16u);
  EXPECT_EQ(mask, 0xFu);
  EXPECT_FALSE(sb.TestBit(14));
  EXPECT_FALSE(sb.TestBit(15));
}

TEST(SbitmapTest, BatchDoesNotFoldDeferredClearsWhenTheWindowFits) {
  Sbitmap sb = Make(64);
  sb.set_hint(0, 0);
  for (int i = 0; i < 8; ++i) ASSERT_EQ(sb.Get(0), i);
  for (unsigned t = 0; t < 4; ++t) sb.DeferredClearBit(t);
  sb.set_hint(0, 0);
  unsigned offset = 0;
  const uint64_t mask = sb.GetBatch(0, 4, &offset);
  EXPECT_EQ(offset, 8u);
  EXPECT_EQ(mask, 0xFu);
  EXPECT_EQ(sb.cleared(0), 0xFu);  // 0..3 are free but still pending.
}

TEST(SbitmapTest, BatchFailsWhenNoWindowFitsAnywhere) {
  Sbitmap sb = Make(64);
  FillAll(sb);
  for (unsigned t : {14u, 30u, 46u, 62u}) sb.DeferredClearBit(t);  // bit 14 of each word
  unsigned offset = 0;
  EXPECT_EQ(sb.GetBatch(0, 4, &offset), 0u);
  EXPECT_EQ(sb.Weight(), 60u);
  EXPECT_EQ(sb.GetBatch(0, 2, &offset), 1u);  // 14 + 2 <= 16 fits: one bit.
}

TEST(SbitmapTest, RoundRobinRefusesBatch) {
  SbitmapOptions o;
  o.round_robin = true;
  Sbitmap sb = *Sbitmap::Create(64, o);
  unsigned offset = 0;
  EXPECT_EQ(sb.GetBatch(0, 4, &offset), 0u);
  EXPECT_EQ(sb.Get(0), 0);
  EXPECT_EQ(sb.Get(0), 1);
  sb.DeferredClearBit(0);
  EXPECT_EQ(sb.Get(0), 2);  // Round-robin continues past the freed bit.
}

}  // namespace
}  // namespace blkbench::engine
