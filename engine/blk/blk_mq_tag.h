// Tag allocation rules of block/blk-mq-tag.c and blk-mq.c that sit around the
// sbitmap_queue, and the kernel-version selection of the modelled sbitmap mechanisms.
#ifndef BLKBENCH_ENGINE_BLK_BLK_MQ_TAG_H_
#define BLKBENCH_ENGINE_BLK_BLK_MQ_TAG_H_

#include "engine/blk/sbitmap_queue.h"

namespace blkbench::engine {

// blk_mq_get_tags(): batch allocation is refused when a shallow depth is set (an
// elevator's limit_depth, e.g. mq-deadline for writes), for reserved tags and for tag
// sets shared between queues. The caller then allocates one tag with blk_mq_get_tag().
inline bool CanBatchAllocate(unsigned shallow_depth, bool reserved, bool shared_tags) {
  return shallow_depth == 0 && !reserved && !shared_tags;
}

// plug->nr_ios after blk_mq_get_new_requests() / blk_mq_rq_cache_fill() allocated with
// data.nr_tags = nr_tags and the batch path (taken only if nr_tags > 1) obtained
// `batch_obtained` tags. Before 6.19 the plug asks for a batch once (nr_ios = 1
// afterwards). 6.19 (Xue He) keeps data.nr_tags: the remainder after a partial batch,
// or 1 when the batch failed (__blk_mq_alloc_requests() sets nr_tags = 1 then).
inline int PlugNrIosAfterAlloc(BatchMode mode, int nr_tags, int batch_obtained) {
  if (mode == BatchMode::kSinglePass) return 1;
  if (nr_tags <= 1) return nr_tags;
  return batch_obtained > 0 ? nr_tags - batch_obtained : 1;
}

// The sbitmap mechanisms of a kernel version (see ENGINE.md section 9).
struct SbqMechanisms {
  WakeScheme wake_scheme = WakeScheme::kQueueWideSpill;
  ShallowMode shallow_mode = ShallowMode::kPerWord;
  BatchMode batch_mode = BatchMode::kSinglePass;
  bool batch_alloc = true;          // Batched tag allocation exists (5.16+).
  bool batch_whole_window = false;  // ~5.19-6.2 [approx.], see SbitmapOptions.
};

inline SbqMechanisms MechanismsForKernel(int major, int minor) {
  const int v = major * 1000 + minor;
  SbqMechanisms m;
  m.wake_scheme = v < 6002   ? WakeScheme::kPerQueueCountdown
                  : v < 6005 ? WakeScheme::kQueueWide
                             : WakeScheme::kQueueWideSpill;
  m.shallow_mode = v >= 6017 ? ShallowMode::kWholeBitmap : ShallowMode::kPerWord;
  m.batch_mode = v >= 6019 ? BatchMode::kMultiPass : BatchMode::kSinglePass;
  m.batch_alloc = v >= 5016;
  m.batch_whole_window = v >= 5019 && v < 6003;
  return m;
}

// Options for a kernel version's sbitmap_queue, with the seed-001 patch flag.
inline SbitmapQueueOptions SbqOptionsForKernel(int major, int minor, int nr_cpus, uint64_t seed,
                                               bool wake_by_tags = false) {
  const SbqMechanisms m = MechanismsForKernel(major, minor);
  SbitmapQueueOptions o;
  o.sbitmap.nr_cpus = nr_cpus;
  o.sbitmap.seed = seed;
  o.sbitmap.shallow_mode = m.shallow_mode;
  o.sbitmap.batch_whole_window = m.batch_whole_window;
  o.wake_scheme = m.wake_scheme;
  o.batch_mode = m.batch_mode;
  o.wake_by_tags = wake_by_tags;
  return o;
}

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_BLK_BLK_MQ_TAG_H_
