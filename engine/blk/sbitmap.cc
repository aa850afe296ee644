// Sbitmap: word search, deferred clears, shallow limits and batch windows, each
// mirroring the lib/sbitmap.c function named beside it.
#include "engine/blk/sbitmap.h"

#include <bit>
#include <cassert>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blkbench::engine {
namespace {

constexpr unsigned kNoShallowLimit = std::numeric_limits<unsigned>::max();

// Bits [0, n) set; n may be 64.
constexpr uint64_t LowMask(unsigned n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

// find_next_zero_bit(&word, depth, from): the first clear bit in [from, depth), or -1.
int FindNextZero(uint64_t word, unsigned depth, unsigned from) {
  if (from >= depth) return -1;
  const uint64_t free = ~word & LowMask(depth) & ~LowMask(from);
  return free == 0 ? -1 : std::countr_zero(free);
}

// __sbitmap_get_word(): search from `hint`, wrapping to bit 0 once if `wrap` and the
// hint is non-zero. Single-threaded, so test_and_set_bit_lock() always wins.
int GetWord(uint64_t& word, unsigned depth, unsigned hint, bool wrap) {
  wrap = wrap && hint != 0;
  int nr = FindNextZero(word, depth, hint);
  if (nr < 0 && wrap) nr = FindNextZero(word, depth, 0);
  if (nr >= 0) word |= uint64_t{1} << nr;
  return nr;
}

}  // namespace

int Sbitmap::CalculateShift(unsigned depth) {
  int shift = std::countr_zero(static_cast<unsigned>(kBitsPerLong));  // ilog2(BITS_PER_LONG)
  // Small maps get narrower words so they spread over at least 4 cache lines.
  if (depth >= 4) {
    while ((4u << shift) > depth) --shift;
  }
  return shift;
}

absl::StatusOr<Sbitmap> Sbitmap::Create(unsigned depth, const SbitmapOptions& options) {
  if (depth == 0) return absl::InvalidArgumentError("sbitmap depth must be > 0");
  if (options.nr_cpus < 1) {
    return absl::InvalidArgumentError(absl::StrCat("nr_cpus must be >= 1, got ", options.nr_cpus));
  }
  const int shift = options.shift < 0 ? CalculateShift(depth) : options.shift;
  if (shift > 6) {
    return absl::InvalidArgumentError(absl::StrCat("shift ", shift, " gives words over 64 bits"));
  }
  Sbitmap sb;
  sb.depth_ = depth;
  sb.shift_ = shift;
  sb.round_robin_ = options.round_robin;
  sb.shallow_mode_ = options.shallow_mode;
  sb.batch_whole_window_ = options.batch_whole_window;
  sb.rng_state_ = options.seed;
  sb.map_.resize((depth + (1u << shift) - 1) >> shift);  // DIV_ROUND_UP
  sb.hints_.assign(options.nr_cpus, 0);
  // init_alloc_hint(): random per-CPU hints unless round-robin (then all 0).
  if (!sb.round_robin_) {
    for (unsigned& h : sb.hints_) h = static_cast<unsigned>(sb.NextRandom() % depth);
  }
  return sb;
}

unsigned Sbitmap::WordDepth(unsigned index) const {
  // __map_depth(): full words, except a possibly partial last one.
  if (index + 1 < map_nr()) return bits_per_word();
  return depth_ - (index << shift_);
}

unsigned Sbitmap::ShallowWordDepth(unsigned index, unsigned shallow_depth) const {
  const unsigned word_depth = WordDepth(index);
  if (shallow_depth == kNoShallowLimit) return word_depth;
  if (shallow_mode_ == ShallowMode::kPerWord) {
    return shallow_depth < word_depth ? shallow_depth : word_depth;
  }
  // __map_depth_with_shallow(): word_depth * shallow / depth, the remainder handed out
  // one extra bit per word to the first words.
  if (shallow_depth >= depth_) return word_depth;
  uint64_t scaled = uint64_t{word_depth} * shallow_depth;
  const uint64_t remainder = scaled % depth_;
  scaled /= depth_;
  if (remainder >= uint64_t{index + 1} * word_depth) ++scaled;
  return static_cast<unsigned>(scaled);
}

uint64_t Sbitmap::NextRandom() {
  // splitmix64: a deterministic stand-in for prandom_u32()/get_random_u32_below().
  uint64_t z = (rng_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

unsigned Sbitmap::HintBeforeGet(int cpu) {
  // update_alloc_hint_before_get(): re-randomise a hint left beyond depth.
  assert(cpu >= 0 && cpu < nr_cpus());
  unsigned& hint = hints_[cpu];
  if (hint >= depth_) hint = static_cast<unsigned>(NextRandom() % depth_);
  return hint;
}

void Sbitmap::HintAfterGet(int cpu, unsigned hint, int nr) {
  // update_alloc_hint_after_get(): reset on failure; advance only if the hint itself
  // was used (or always, for round-robin maps).
  if (nr < 0) {
    hints_[cpu] = 0;
  } else if (static_cast<unsigned>(nr) == hint || round_robin_) {
    unsigned next = static_cast<unsigned>(nr) + 1;
    if (next >= depth_ - 1) next = 0;
    hints_[cpu] = next;
  }
}

bool Sbitmap::DeferredClear(Word& w) {
  // sbitmap_deferred_clear(): fold the cleared mask into the word. (Since ~6.7 the
  // kernel also returns true when the word merely has free bits, to cope with racing
  // allocators; single-threaded, that case never follows a failed search.)
  if (w.cleared == 0) return false;
  w.word &= ~w.cleared;
  w.cleared = 0;
  return true;
}

int Sbitmap::FindBitInWord(unsigned index, unsigned depth, unsigned hint, bool wrap) {
  // sbitmap_find_bit_in_word() (sbitmap_find_bit_in_index() before 6.7).
  Word& w = map_[index];
  while (true) {
    const int nr = GetWord(w.word, depth, hint, wrap);
    if (nr >= 0) return nr;
    if (!DeferredClear(w)) return -1;
  }
}

int Sbitmap::FindBit(unsigned shallow_depth, unsigned index, unsigned hint, bool wrap) {
  // sbitmap_find_bit(): from the hint's word, every word once; only the first word
  // starts at the hint bit. Pre-6.17 __sbitmap_get()/__sbitmap_get_shallow() walk the
  // words the same way with a per-word min(depth, shallow_depth).
  for (unsigned i = 0; i < map_nr(); ++i) {
    const unsigned depth = ShallowWordDepth(index, shallow_depth);
    if (depth != 0) {
      const int nr = FindBitInWord(index, depth, hint, wrap);
      if (nr >= 0) return nr + static_cast<int>(index << shift_);
    }
    hint = 0;
    if (++index >= map_nr()) index = 0;
  }
  return -1;
}

int Sbitmap::Get(int cpu) {
  // sbitmap_get() -> __sbitmap_get(): the hint picks the word; the search inside it
  // starts at bit 0 (and does not wrap) unless the map is round-robin.
  const unsigned hint = HintBeforeGet(cpu);
  const unsigned index = hint >> shift_;
  const unsigned bit = round_robin_ ? hint & (bits_per_word() - 1) : 0;
  const int nr = FindBit(kNoShallowLimit, index, bit, !round_robin_);
  HintAfterGet(cpu, hint, nr);
  return nr;
}

int Sbitmap::GetShallow(int cpu, unsigned shallow_depth) {
  // sbitmap_get_shallow() -> __sbitmap_get_shallow(): starts at the hint bit and wraps.
  const unsigned hint = HintBeforeGet(cpu);
  const int nr = FindBit(shallow_depth, hint >> shift_, hint & (bits_per_word() - 1), true);
  HintAfterGet(cpu, hint, nr);
  return nr;
}

uint64_t Sbitmap::FindBitsInWord(unsigned index, int nr_tags, unsigned* nr) {
  // sbitmap_find_bits_in_word(): the window starts at the word's first zero bit and is
  // OR-ed in whole; bits that were already set are simply not returned.
  Word& w = map_[index];
  const unsigned map_depth = WordDepth(index);
  uint64_t val;
  unsigned bit_nr;
  while (true) {
    val = w.word;
    // Kernel quirk kept on purpose: this compares against "all but the top bit set",
    // not a full word. Full words are caught by the fit test below instead.
    if (val == (uint64_t{1} << (map_depth - 1)) - 1) {
      if (!DeferredClear(w)) return 0;
      continue;
    }
    const int first_zero = FindNextZero(val, map_depth, 0);
    bit_nr = first_zero < 0 ? map_depth : static_cast<unsigned>(first_zero);
    if (bit_nr + static_cast<unsigned>(nr_tags) <= map_depth) break;
    if (!DeferredClear(w)) return 0;
  }
  const uint64_t window = LowMask(static_cast<unsigned>(nr_tags)) << bit_nr;
  w.word = val | window;
  *nr = bit_nr;
  return (window & ~val) >> bit_nr;
}

uint64_t Sbitmap::FindFreeWindowInWord(unsigned index, int nr_tags, unsigned* nr) {
  // ~5.19-6.2 __sbitmap_queue_get_batch() body: fold deferred clears, then take the
  // window at the first zero bit only if every bit in it is free ("goto next").
  Word& w = map_[index];
  const unsigned map_depth = WordDepth(index);
  DeferredClear(w);
  if (w.word == (uint64_t{1} << (map_depth - 1)) - 1) return 0;  // Same quirk.
  const int first_zero = FindNextZero(w.word, map_depth, 0);
  if (first_zero < 0 || static_cast<unsigned>(first_zero + nr_tags) > map_depth) return 0;
  const uint64_t window = LowMask(static_cast<unsigned>(nr_tags)) << first_zero;
  if ((w.word & window) != 0) return 0;
  w.word |= window;
  *nr = static_cast<unsigned>(first_zero);
  return LowMask(static_cast<unsigned>(nr_tags));
}

uint64_t Sbitmap::GetBatch(int cpu, int nr_tags, unsigned* offset) {
  // __sbitmap_queue_get_batch(): one pass over the words from the hint's word; the
  // first word where the window fits wins, even if it yields a single bit.
  assert(nr_tags >= 1 && nr_tags <= kBitsPerLong);
  if (round_robin_) return 0;
  const unsigned hint = HintBeforeGet(cpu);
  unsigned index = hint >> shift_;
  for (unsigned i = 0; i < map_nr(); ++i) {
    unsigned nr = 0;
    const uint64_t mask = batch_whole_window_ ? FindFreeWindowInWord(index, nr_tags, &nr)
                                              : FindBitsInWord(index, nr_tags, &nr);
    if (mask != 0) {
      *offset = nr + (index << shift_);
      // The kernel passes the window's last bit: the hint moves only if that equals it.
      HintAfterGet(cpu, hint, static_cast<int>(*offset) + nr_tags - 1);
      return mask;
    }
    if (++index >= map_nr()) index = 0;
  }
  return 0;
}

void Sbitmap::DeferredClearBit(unsigned bit) {
  assert(TestBit(bit));
  map_[bit >> shift_].cleared |= uint64_t{1} << (bit & (bits_per_word() - 1));
}

void Sbitmap::ClearBitNow(unsigned bit) {
  assert(TestBit(bit));
  map_[bit >> shift_].word &= ~(uint64_t{1} << (bit & (bits_per_word() - 1)));
}

void Sbitmap::UpdateCpuHint(int cpu, unsigned bit) {
  // sbitmap_update_cpu_hint(): the freed bit becomes the CPU's next starting point.
  assert(cpu >= 0 && cpu < nr_cpus());
  if (!round_robin_ && bit < depth_) hints_[cpu] = bit;
}

bool Sbitmap::TestBit(unsigned bit) const {
  if (bit >= depth_) return false;
  const Word& w = map_[bit >> shift_];
  const uint64_t m = uint64_t{1} << (bit & (bits_per_word() - 1));
  return (w.word & m) != 0 && (w.cleared & m) == 0;
}

unsigned Sbitmap::Weight() const {
  // sbitmap_weight(): set bits minus those pending in cleared.
  unsigned weight = 0;
  for (const Word& w : map_) weight += std::popcount(w.word) - std::popcount(w.word & w.cleared);
  return weight;
}

}  // namespace blkbench::engine
