// Simulated time: nanoseconds since the start of a simulation.
#ifndef BLKBENCH_ENGINE_SIM_TIME_H_
#define BLKBENCH_ENGINE_SIM_TIME_H_

#include <cstdint>
#include <limits>

namespace blkbench::engine {

using SimTime = uint64_t;  // ns
inline constexpr SimTime kNever = std::numeric_limits<SimTime>::max();

inline constexpr SimTime Micros(uint64_t us) { return us * 1'000; }
inline constexpr SimTime Millis(uint64_t ms) { return ms * 1'000'000; }

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_SIM_TIME_H_
