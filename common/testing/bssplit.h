// Test helper: fills a JobSpec's bssplit list (bssplit or write_bssplit) from
// (size, percent) pairs, as fio's bssplit=4k/30:128k/70 lists them.
#ifndef BLKBENCH_COMMON_TESTING_BSSPLIT_H_
#define BLKBENCH_COMMON_TESTING_BSSPLIT_H_

#include <cstdint>
#include <initializer_list>
#include <utility>

#include "blkbench/v1/workload.pb.h"

namespace blkbench::testing {

inline void AddBsSplit(google::protobuf::RepeatedPtrField<v1::BsSplit>* split,
                       std::initializer_list<std::pair<uint64_t, uint32_t>> entries) {
  for (const auto& [bs, percent] : entries) {
    v1::BsSplit* e = split->Add();
    e->set_bs(bs);
    e->set_percent(percent);
  }
}

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_BSSPLIT_H_
