// RunOrder: repeat-major run order; see run_order.h.
#include "common/run_order.h"

#include <cstddef>

namespace blkbench {

std::vector<RunSlot> RunOrder(uint32_t cells, uint32_t repeats) {
  std::vector<RunSlot> order;
  order.reserve(static_cast<size_t>(cells) * repeats);
  for (uint32_t repeat = 0; repeat < repeats; ++repeat) {
    for (uint32_t cell = 0; cell < cells; ++cell) {
      RunSlot slot;
      slot.cell_index = cell;
      slot.repeat = repeat;
      order.push_back(slot);
    }
  }
  return order;
}

}  // namespace blkbench
