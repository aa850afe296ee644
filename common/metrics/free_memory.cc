// ReturnFreeMemoryToSystem: malloc_trim on glibc; see free_memory.h.
#include "common/metrics/free_memory.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace blkbench {

void ReturnFreeMemoryToSystem() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace blkbench
