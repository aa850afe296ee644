// What `trace: 1` costs a real run: the same randread 4k cell on one device through the
// agent's RunExecutor (RealDevicePreparation, the io_uring executor), with and without
// the block trace, and with the trace plus its blkparse text (`blkbench run --trace`:
// also Q and G events, every line written to --text_out), in ABC-CBA order per round so
// drift on a shared machine cancels. Prints each run's IOPS and the medians' ratios.
// Needs root (tracefs, the device). bench/trace_overhead.sh sets up a loop device.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "agent/config.h"
#include "agent/run_executor.h"
#include "agent/runners.h"

ABSL_FLAG(std::string, device, "", "block device to read (allowlisted for the bench only)");
ABSL_FLAG(std::string, state_dir, "/tmp/blkbench-trace-bench", "journal directory");
ABSL_FLAG(int, rounds, 4, "rounds of plain, trace, text, text, trace, plain");
ABSL_FLAG(std::string, text_out, "/tmp/blkbench-trace-bench.txt",
          "where the text runs write their blkparse lines (rewritten by each; removed at the end)");
ABSL_FLAG(int, runtime_ms, 3000, "each run's length");
ABSL_FLAG(int, iodepth, 32, "io_uring queue depth");

namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string device = absl::GetFlag(FLAGS_device);
  if (device.empty()) {
    fprintf(stderr, "usage: blkbench-trace-bench --device /dev/loopN [--rounds 4]\n");
    return 2;
  }
  blkbench::AgentConfig config;
  config.state_dir = absl::GetFlag(FLAGS_state_dir);
  config.sim_devices.clear();
  config.devices = {{device, "bench"}};
  auto journal = blkbench::QueueSettingsJournal::Open(config.state_dir);
  if (!journal.ok()) {
    fprintf(stderr, "journal: %s\n", journal.status().ToString().c_str());
    return 1;
  }
  blkbench::RunExecutor executor(config, **journal, blkbench::DefaultRunnerFactory());
  if (executor.OfferDevices().offered.size() != 1) {
    fprintf(stderr, "%s cannot be offered\n", device.c_str());
    return 1;
  }
  blkbench::v1::RunAssignment a;
  a.set_device_path(device);
  a.set_sample_interval_ms(1000);
  blkbench::v1::JobSpec* job = a.mutable_cell()->mutable_job();
  job->set_rw(blkbench::v1::RANDREAD);
  job->set_bs(4096);
  job->set_direct(true);
  job->set_ioengine(blkbench::v1::IO_URING);
  job->set_iodepth(absl::GetFlag(FLAGS_iodepth));
  job->set_numjobs(1);
  job->set_thread(true);
  job->set_iodepth_batch_submit(1);
  job->set_iodepth_batch_complete_min(1);
  job->set_time_based(true);
  job->set_runtime_ns(int64_t{absl::GetFlag(FLAGS_runtime_ms)} * 1'000'000);
  const char* kMode[] = {"plain", "trace", "text"};
  const std::string text_out = absl::GetFlag(FLAGS_text_out);
  std::vector<double> iops[3];
  std::atomic<bool> cancel{false};
  uint64_t run_id = 0;
  for (int round = 0; round < absl::GetFlag(FLAGS_rounds); ++round) {
    for (int mode : {0, 1, 2, 2, 1, 0}) {
      a.set_run_id(++run_id);
      a.mutable_cell()->set_trace(mode > 0 ? 1 : 0);
      std::ofstream text;
      if (mode == 2) text.open(text_out, std::ios::trunc);
      blkbench::v1::RunFinished f = executor.Execute(
          a, cancel, [](const blkbench::v1::Sample&) {}, mode == 2 ? &text : nullptr);
      text.close();
      if (mode == 2 && !text) {
        fprintf(stderr, "cannot write %s\n", text_out.c_str());
        return 1;
      }
      if (f.outcome() != blkbench::v1::RUN_OUTCOME_SUCCEEDED) {
        fprintf(stderr, "run %llu: %s\n", static_cast<unsigned long long>(run_id),
                f.error().c_str());
        return 1;
      }
      const auto& in = f.result().internals();
      const auto lost = in.find("trace_lost_events");
      const auto issued = in.find("trace_issued");
      if (lost != in.end() && lost->second > 0) {
        printf("%s %d %.0f (trace lost %.0f events; %.0f issues seen of %.0f I/Os)\n", kMode[mode],
               round, f.result().iops(), lost->second, issued != in.end() ? issued->second : 0.0,
               static_cast<double>(f.result().io().read_ios() + f.result().io().write_ios()));
      } else {
        printf("%s %d %.0f\n", kMode[mode], round, f.result().iops());
      }
      iops[mode].push_back(f.result().iops());
    }
  }
  std::remove(text_out.c_str());
  const double plain = Median(iops[0]), trace = Median(iops[1]), text = Median(iops[2]);
  const auto ratio = [](double x, double y) { return y > 0 ? x / y : 0; };
  printf(
      "median IOPS: plain %.0f, trace %.0f, text %.0f; trace/plain %.3f, text/plain %.3f, "
      "text/trace %.3f\n",
      plain, trace, text, ratio(trace, plain), ratio(text, plain), ratio(text, trace));
  return 0;
}
