// Parses fio's cpus_allowed CPU list syntax ("0-3,6") into CPU numbers for
// sched_setaffinity (fio options.c str_cpus_allowed_cb / set_cpus_allowed).
#ifndef BLKBENCH_AGENT_EXECUTOR_CPU_LIST_H_
#define BLKBENCH_AGENT_EXECUTOR_CPU_LIST_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace blkbench {

// Returns the sorted, de-duplicated CPUs named by `list`: comma-separated CPU numbers
// and inclusive ranges "a-b" (a <= b), blanks around items allowed. An empty list gives
// an empty vector (no affinity). InvalidArgument on any other syntax or on a CPU number
// >= max_cpus.
absl::StatusOr<std::vector<uint32_t>> ParseCpuList(std::string_view list, uint32_t max_cpus);

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_EXECUTOR_CPU_LIST_H_
