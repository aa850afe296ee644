// Helpers shared by the blk-mq model's tests: a cell for a simulated device, a run
// through the Runner, and readers of the result.
#ifndef BLKBENCH_ENGINE_MODEL_ENGINE_TEST_UTIL_H_
#define BLKBENCH_ENGINE_MODEL_ENGINE_TEST_UTIL_H_

#include <chrono>
#include <string>
#include <vector>

#include "engine/model/engine_runner.h"
#include "gtest/gtest.h"

namespace blkbench::engine::test {

// A time-based io_uring job on device "sim:<kind>".
inline v1::CellSpec Cell(const std::string& kind, v1::RwMode rw, uint64_t bs, uint32_t iodepth,
                         uint32_t numjobs, uint64_t runtime_ns) {
  v1::CellSpec cell;
  cell.mutable_target()->set_device_class("sim:" + kind);
  v1::JobSpec& j = *cell.mutable_job();
  j.set_rw(rw);
  j.set_bs(bs);
  j.set_iodepth(iodepth);
  j.set_numjobs(numjobs);
  j.set_iodepth_batch_submit(1);  // fio's defaults, as the matrix parser writes them
  j.set_iodepth_batch_complete_min(1);
  j.set_ioengine(v1::IO_URING);
  j.set_time_based(true);
  j.set_runtime_ns(runtime_ns);
  return cell;
}

// Runs the cell on the engine (samples every 5 ms of simulated time, collected if asked).
inline v1::RunResult RunCell(const v1::CellSpec& cell, std::vector<v1::Sample>* samples = nullptr) {
  RunContext ctx;
  ctx.cell = cell;
  ctx.sample_interval = std::chrono::milliseconds(5);
  if (samples != nullptr) ctx.on_sample = [samples](const v1::Sample& s) { samples->push_back(s); };
  absl::StatusOr<v1::RunResult> r = NewEngineRunner()->Run(ctx);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : v1::RunResult();
}

inline uint64_t Ios(const v1::RunResult& r) { return r.io().read_ios() + r.io().write_ios(); }

// An internals value; -1 (and a test failure) if the key is missing.
inline double In(const v1::RunResult& r, const std::string& key) {
  auto it = r.internals().find(key);
  EXPECT_NE(it, r.internals().end()) << key;
  return it == r.internals().end() ? -1 : it->second;
}

}  // namespace blkbench::engine::test

#endif  // BLKBENCH_ENGINE_MODEL_ENGINE_TEST_UTIL_H_
