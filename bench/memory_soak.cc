// memory_soak: drives N runs of a short sim cell through a running blkbench-controller and
// blkbench-agent (started by bench/memory_soak.sh) and prints both daemons' resident set
// (VmRSS from /proc/PID/status) every --every runs as a Markdown table, so growth per run
// shows (docs/performance.md, "Daemon memory over runs").
//
// Runs come as experiments of --batch repeats of one cell, submitted one after another;
// the next is submitted when the previous ended. Every --every runs (a multiple of
// --batch) a row: runs done, seconds since start, controller and agent RSS in KiB.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "blkbench/v1/controller.grpc.pb.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, controller, "", "the controller's address (unix:/path or host:port)");
ABSL_FLAG(int, controller_pid, 0, "the controller's pid (its VmRSS is reported)");
ABSL_FLAG(int, agent_pid, 0, "the agent's pid (its VmRSS is reported)");
ABSL_FLAG(int, runs, 10'000, "runs in all (rounded up to a multiple of --batch)");
ABSL_FLAG(int, every, 1'000, "a row every this many runs (a multiple of --batch)");
ABSL_FLAG(int, batch, 100, "runs per experiment (its repeats)");
ABSL_FLAG(std::string, runtime, "20ms", "each run's runtime");
ABSL_FLAG(std::string, device_class, "sim:null_blk", "the cell's device class");
ABSL_FLAG(std::string, out, "", "write the table here (default: stdout)");

namespace {

using blkbench::v1::ControllerService;

// VmRSS of `pid` in KiB; -1 when it cannot be read (the process is gone).
long RssKib(int pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

std::string Matrix(int repeats) {
  return absl::StrCat("name: memory-soak\nrepeats: ", repeats,
                      "\njob: {rw: randread, bs: 4k, iodepth: 4, direct: 1, ioengine: io_uring, "
                      "size: 64m, time_based: 1, runtime: ",
                      absl::GetFlag(FLAGS_runtime), "}\ntarget: {device_class: \"",
                      absl::GetFlag(FLAGS_device_class), "\"}\n");
}

bool Ended(blkbench::v1::ExperimentState s) {
  return s == blkbench::v1::EXPERIMENT_DONE || s == blkbench::v1::EXPERIMENT_FAILED ||
         s == blkbench::v1::EXPERIMENT_CANCELED;
}

// Submits one experiment and follows its watch stream until it ended. Its state, or
// "" with the error on stderr.
bool RunExperiment(ControllerService::Stub& stub, int repeats, int* failed_runs) {
  blkbench::v1::SubmitExperimentRequest req;
  req.set_file_name("memory_soak.yaml");
  req.set_matrix_text(Matrix(repeats));
  blkbench::v1::Experiment exp;
  grpc::ClientContext submit_ctx;
  grpc::Status s = stub.SubmitExperiment(&submit_ctx, req, &exp);
  if (!s.ok()) {
    std::fprintf(stderr, "memory_soak: submit: %s\n", s.error_message().c_str());
    return false;
  }
  grpc::ClientContext watch_ctx;
  blkbench::v1::WatchExperimentRequest watch;
  watch.set_id(exp.id());
  auto reader = stub.WatchExperiment(&watch_ctx, watch);
  blkbench::v1::WatchEvent ev;
  while (reader->Read(&ev)) {
    if (!Ended(ev.experiment().state())) continue;
    for (const auto& run : ev.experiment().runs()) {
      if (run.state() != blkbench::v1::RUN_DONE) ++*failed_runs;
    }
    watch_ctx.TryCancel();
    while (reader->Read(&ev)) {
    }
    reader->Finish();
    return true;
  }
  s = reader->Finish();
  std::fprintf(stderr, "memory_soak: watch of experiment %llu ended: %s\n",
               static_cast<unsigned long long>(exp.id()), s.error_message().c_str());
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int batch = absl::GetFlag(FLAGS_batch);
  const int every = absl::GetFlag(FLAGS_every);
  if (absl::GetFlag(FLAGS_controller).empty() || batch <= 0 || every <= 0 || every % batch != 0) {
    std::fprintf(stderr,
                 "usage: memory_soak --controller ADDR --controller_pid P --agent_pid P "
                 "[--runs N] [--every K] [--batch B] (K a multiple of B)\n");
    return 2;
  }
  auto channel =
      grpc::CreateChannel(absl::GetFlag(FLAGS_controller), grpc::InsecureChannelCredentials());
  auto stub = ControllerService::NewStub(channel);
  std::ostringstream table;
  const int cpid = absl::GetFlag(FLAGS_controller_pid);
  const int apid = absl::GetFlag(FLAGS_agent_pid);
  auto row = [&](int runs, double seconds) {
    const std::string line =
        absl::StrFormat("| %d | %.0f | %ld | %ld |\n", runs, seconds, RssKib(cpid), RssKib(apid));
    std::fputs(line.c_str(), stderr);  // progress as it comes
    table << line;
  };
  table << "| runs | seconds | controller VmRSS KiB | agent VmRSS KiB |\n|---:|---:|---:|---:|\n";
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  row(0, 0);
  int failed = 0;
  int done = 0;
  for (const int total = absl::GetFlag(FLAGS_runs); done < total;) {
    if (!RunExperiment(*stub, batch, &failed)) return 1;
    done += batch;
    if (done % every == 0) row(done, elapsed());
  }
  if (failed > 0) table << "\n" << failed << " of " << done << " runs did not end DONE\n";
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) {
    std::fputs(table.str().c_str(), stdout);
  } else {
    std::ofstream(out) << table.str();
  }
  return failed > 0 ? 1 : 0;
}
