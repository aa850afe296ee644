// Injectable clocks: monotonic time for leases and timers, wall time for records.
#ifndef BLKBENCH_COMMON_CLOCK_H_
#define BLKBENCH_COMMON_CLOCK_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace blkbench {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic milliseconds (leases, timeouts). Never goes backwards.
  virtual int64_t MonotonicMs() = 0;
  // Unix epoch milliseconds (timestamps shown to people and stored).
  virtual int64_t WallMs() = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t MonotonicMs() override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  int64_t WallMs() override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
};

// A clock that moves only when told to; for tests of leases and timeouts.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t start_ms = 1'000'000) : now_(start_ms) {}
  int64_t MonotonicMs() override { return now_.load(); }
  int64_t WallMs() override { return 1'700'000'000'000 + now_.load(); }
  void AdvanceMs(int64_t ms) { now_ += ms; }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_CLOCK_H_
