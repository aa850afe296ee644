// Giving the C library's free heap memory back to the kernel, for long-running daemons.
#ifndef BLKBENCH_COMMON_METRICS_FREE_MEMORY_H_
#define BLKBENCH_COMMON_METRICS_FREE_MEMORY_H_

namespace blkbench {

// Why: glibc keeps freed memory in its arenas (one per thread that allocated, up to 8 x
// cores) and returns it to the kernel only from the top of the main heap. A daemon
// whose gRPC, HTTP and worker threads each allocate and free per-run state and scrape
// bodies keeps an RSS near the sum of every arena's peak, long after the heap shrank
// (docs/performance.md, "Daemon memory over runs"). malloc_trim(0) releases the free
// pages of every arena (madvise), so RSS follows the live heap.
//
// Thread-safe. Costs a walk of the arenas' free lists (well under a millisecond at
// tens of MB); call it every few seconds, not per allocation. A no-op off glibc.
void ReturnFreeMemoryToSystem();

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_METRICS_FREE_MEMORY_H_
