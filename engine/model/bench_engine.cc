// engine_bench: how fast the engine simulates — simulated requests per CPU-second (and
// per wall-clock second) for a CPU-bound null_blk workload (with each elevator) and a
// seek-bound HDD workload. CPU time is the process's, so a busy machine slows the wall
// figure but not the CPU one.
#include <cstdio>
#include <ctime>
#include <string>

#include "blkbench/v1/workload.pb.h"
#include "engine/model/engine_runner.h"

namespace {

using blkbench::v1::CellSpec;

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void Report(const char* name, const CellSpec& cell) {
  blkbench::RunContext ctx;
  ctx.cell = cell;
  ctx.sample_interval = std::chrono::milliseconds(100);
  auto runner = blkbench::engine::NewEngineRunner();
  const double cpu_start = ProcessCpuSeconds();
  const auto result = runner->Run(ctx);
  const double cpu_s = ProcessCpuSeconds() - cpu_start;
  if (!result.ok()) {
    std::printf("%s: %s\n", name, std::string(result.status().message()).c_str());
    return;
  }
  const auto& in = result->internals();
  const double ios = static_cast<double>(result->io().read_ios() + result->io().write_ios());
  const double wall_s = in.at("engine.wall_ns") * 1e-9;
  std::printf(
      "%-28s sim %.3f s  %12.0f ios  %10.0f sim IOPS  wall %.3f s  %10.0f req/wall-s  "
      "cpu %.3f s  %10.0f req/cpu-s  %6.0f ns cpu/req  events %.0f\n",
      name, in.at("engine.sim_ns") * 1e-9, ios, result->iops(), wall_s, ios / wall_s, cpu_s,
      ios / cpu_s, cpu_s * 1e9 / ios, in.at("engine.events"));
}

}  // namespace

int main() {
  CellSpec nullblk;
  nullblk.mutable_target()->set_device_class("sim:null_blk");
  nullblk.mutable_target()->set_kernel("sim:6.16");
  (*nullblk.mutable_device_params())["null_blk.irqmode"] = "0";
  (*nullblk.mutable_device_params())["null_blk.completion_nsec"] = "0";
  (*nullblk.mutable_device_params())["null_blk.submit_queues"] = "16";
  (*nullblk.mutable_device_params())["null_blk.hw_queue_depth"] = "1024";
  auto* j = nullblk.mutable_job();
  j->set_rw(blkbench::v1::RANDREAD);
  j->set_bs(4096);
  j->set_iodepth(32);
  j->set_numjobs(16);
  j->set_iodepth_batch_submit(8);
  j->set_iodepth_batch_complete_min(8);
  j->set_ioengine(blkbench::v1::IO_URING);
  j->set_time_based(true);
  j->set_runtime_ns(200'000'000);  // 200 ms simulated
  Report("null_blk none QD32x16j", nullblk);

  // The same job through each elevator (seed 000's shape: lock-bound on a 128-core box),
  // 1 s simulated: an elevator simulates ~10x fewer requests per simulated second.
  CellSpec sched = nullblk;
  sched.mutable_job()->set_runtime_ns(1'000'000'000);
  sched.mutable_target()->set_machine("server-128-4node");
  (*sched.mutable_device_params())["null_blk.submit_queues"] = "128";
  for (const char* name : {"mq-deadline", "bfq", "kyber"}) {
    sched.mutable_queue()->set_scheduler(name);
    // kyber passes ~14M requests per simulated second; 200 ms of it is plenty.
    if (std::string(name) == "kyber") sched.mutable_job()->set_runtime_ns(200'000'000);
    Report((std::string("null_blk ") + name + " QD32x16j").c_str(), sched);
  }

  CellSpec hdd;
  hdd.mutable_target()->set_device_class("sim:hdd");
  auto* h = hdd.mutable_job();
  h->set_rw(blkbench::v1::RANDREAD);
  h->set_bs(4096);
  h->set_iodepth(32);
  h->set_numjobs(4);
  h->set_ioengine(blkbench::v1::IO_URING);
  h->set_time_based(true);
  h->set_runtime_ns(20'000'000'000);  // 20 s simulated
  Report("hdd randread QD32x4j", hdd);
  return 0;
}
