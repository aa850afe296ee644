// Sbitmap: a deterministic, single-threaded model of the kernel's scalable bitmap
// (struct sbitmap, lib/sbitmap.c) — the word layout, deferred clears and per-CPU hints.
#ifndef BLKBENCH_ENGINE_BLK_SBITMAP_H_
#define BLKBENCH_ENGINE_BLK_SBITMAP_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace blkbench::engine {

inline constexpr int kBitsPerLong = 64;  // BITS_PER_LONG on 64-bit kernels.

// How GetShallow() interprets its shallow_depth argument.
enum class ShallowMode {
  // Up to ~6.16: at most shallow_depth bits of *each word* are usable
  // (__sbitmap_get_shallow passes min(word depth, shallow_depth) to __sbitmap_get_word).
  kPerWord,
  // ~6.17+: shallow_depth bits of the *whole bitmap*, spread over the words by
  // __map_depth_with_shallow().
  kWholeBitmap,
};

struct SbitmapOptions {
  int shift = -1;            // Bits per word = 2^shift; < 0 picks sbitmap_calculate_shift().
  bool round_robin = false;  // BLK_MQ_F_TAG_RR: strict round-robin allocation.
  int nr_cpus = 1;           // Number of per-CPU alloc_hint slots.
  uint64_t seed = 0;         // Replaces the kernel's prandom for initial hints.
  ShallowMode shallow_mode = ShallowMode::kPerWord;
  // ~5.19-6.2 (commit fbb564a55780 "lib/sbitmap: Fix invalid loop in
  // __sbitmap_queue_get_batch()", removed again by Kemeng Shi's Dec 2022 cleanup):
  // a batch window must be entirely free, otherwise the word is skipped; deferred
  // clears are folded before looking. Otherwise the current rule: partial windows.
  bool batch_whole_window = false;
};

// A bitmap of `depth` bits split into words of 2^shift bits. Allocated bits are set in
// `word`; freed bits are first recorded in `cleared` and folded back into `word` only
// when an allocation finds the word exhausted (sbitmap_deferred_clear). Not
// thread-safe: the engine is a single-threaded discrete-event model, so each kernel
// atomic is modelled as an uncontended read-modify-write.
class Sbitmap {
 public:
  // Mirrors sbitmap_calculate_shift(): 64-bit words, shrunk until there are at least
  // 4 words (e.g. 64 bits -> 16 x 4, 1023 -> 64 x 16).
  static int CalculateShift(unsigned depth);

  // Mirrors sbitmap_init_node(). InvalidArgument if depth is 0, nr_cpus < 1 or the
  // shift gives words wider than 64 bits.
  static absl::StatusOr<Sbitmap> Create(unsigned depth, const SbitmapOptions& options);

  unsigned depth() const { return depth_; }
  int shift() const { return shift_; }
  unsigned bits_per_word() const { return 1u << shift_; }
  unsigned map_nr() const { return static_cast<unsigned>(map_.size()); }
  ShallowMode shallow_mode() const { return shallow_mode_; }
  bool round_robin() const { return round_robin_; }
  int nr_cpus() const { return static_cast<int>(hints_.size()); }
  // Bits in word `index` (the last word may be partial) — the kernel's __map_depth().
  unsigned WordDepth(unsigned index) const;

  // Allocates one bit using `cpu`'s hint. Returns the bit, or -1 if none is free.
  // Mirrors sbitmap_get(). REQUIRES: 0 <= cpu < nr_cpus().
  int Get(int cpu);
  // Like Get() but limited by shallow_depth (per word or whole bitmap, see
  // ShallowMode). Mirrors sbitmap_get_shallow().
  int GetShallow(int cpu, unsigned shallow_depth);
  // One pass of batch allocation: a contiguous window of nr_tags bits starting at the
  // first zero bit of the first word (from the hint's word on) where the window fits.
  // Returns the mask of bits actually obtained (bits already set inside the window are
  // not returned, so possibly fewer than nr_tags), relative to *offset; 0 on failure.
  // Mirrors __sbitmap_queue_get_batch() / sbitmap_find_bits_in_word() (6.7+ shape).
  // REQUIRES: 1 <= nr_tags <= 64.
  uint64_t GetBatch(int cpu, int nr_tags, unsigned* offset);

  // Frees `bit` into the deferred `cleared` mask (sbitmap_deferred_clear_bit).
  void DeferredClearBit(unsigned bit);
  // Frees `bit` directly in `word`, skipping the deferred mask, as
  // sbitmap_queue_clear_batch() does.
  void ClearBitNow(unsigned bit);
  // Sets cpu's hint to `bit` if valid — sbitmap_update_cpu_hint().
  void UpdateCpuHint(int cpu, unsigned bit);

  // True if `bit` is allocated (set in word and not pending in cleared).
  bool TestBit(unsigned bit) const;
  // Number of allocated bits — sbitmap_weight().
  unsigned Weight() const;
  bool AnyBitSet() const { return Weight() != 0; }

  // Introspection for tests and the engine's observability.
  uint64_t word(unsigned index) const { return map_[index].word; }
  uint64_t cleared(unsigned index) const { return map_[index].cleared; }
  unsigned hint(int cpu) const { return hints_[cpu]; }
  void set_hint(int cpu, unsigned hint) { hints_[cpu] = hint; }

  // Bits of word `index` usable under shallow_depth (per ShallowMode).
  unsigned ShallowWordDepth(unsigned index, unsigned shallow_depth) const;

 private:
  struct Word {
    uint64_t word = 0;     // Set bits are allocated (or freed but still deferred).
    uint64_t cleared = 0;  // Freed bits not yet folded back into word.
  };

  Sbitmap() = default;

  unsigned HintBeforeGet(int cpu);
  void HintAfterGet(int cpu, unsigned hint, int nr);
  bool DeferredClear(Word& w);
  int FindBitInWord(unsigned index, unsigned depth, unsigned hint, bool wrap);
  int FindBit(unsigned shallow_depth, unsigned index, unsigned hint, bool wrap);
  uint64_t FindBitsInWord(unsigned index, int nr_tags, unsigned* nr);
  uint64_t FindFreeWindowInWord(unsigned index, int nr_tags, unsigned* nr);
  uint64_t NextRandom();

  unsigned depth_ = 0;
  int shift_ = 0;
  bool round_robin_ = false;
  bool batch_whole_window_ = false;
  ShallowMode shallow_mode_ = ShallowMode::kPerWord;
  uint64_t rng_state_ = 0;
  std::vector<Word> map_;
  std::vector<unsigned> hints_;  // Per-CPU alloc_hint.
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_BLK_SBITMAP_H_
