// idle_streams_bench: opens N agent streams against a running controller (each on its
// own connection, registered as bench-<i>, then idle) and prints the controller's
// threads and RSS (from /proc/PID/status) before and with them; bench/idle_streams.sh.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "blkbench/v1/agent.grpc.pb.h"
#include "grpcpp/grpcpp.h"

ABSL_FLAG(std::string, controller, "127.0.0.1:7450", "controller address");
ABSL_FLAG(int, streams, 1000, "agent streams to open");
ABSL_FLAG(int, pid, 0, "the controller's process id (for /proc/PID/status)");

namespace {

struct Usage {
  long threads = 0;
  long rss_kb = 0;
};

Usage Read(int pid) {
  Usage u;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string key;
  while (status >> key) {
    if (key == "Threads:") status >> u.threads;
    if (key == "VmRSS:") status >> u.rss_kb;
  }
  return u;
}

struct Stream {
  std::unique_ptr<blkbench::v1::AgentService::Stub> stub;
  grpc::ClientContext ctx;
  std::unique_ptr<
      grpc::ClientReaderWriter<blkbench::v1::AgentMessage, blkbench::v1::ControllerMessage>>
      rw;
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int pid = absl::GetFlag(FLAGS_pid);
  const Usage before = Read(pid);
  std::vector<std::unique_ptr<Stream>> streams;
  int admitted = 0, refused = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < absl::GetFlag(FLAGS_streams); ++i) {
    auto s = std::make_unique<Stream>();
    grpc::ChannelArguments args;
    args.SetInt("blkbench.bench.connection", i);  // a connection per agent, as in a lab
    s->stub = blkbench::v1::AgentService::NewStub(grpc::CreateCustomChannel(
        absl::GetFlag(FLAGS_controller), grpc::InsecureChannelCredentials(), args));
    s->rw = s->stub->Connect(&s->ctx);
    blkbench::v1::AgentMessage reg;
    reg.mutable_register_()->set_agent_id("bench-" + std::to_string(i));
    reg.mutable_register_()->set_instance_id("bench");
    s->rw->Write(reg);
    blkbench::v1::ControllerMessage msg;
    bool registered = false;
    while (!registered && s->rw->Read(&msg)) registered = msg.has_registered();
    if (registered) {
      ++admitted;
      streams.push_back(std::move(s));
    } else {
      s->rw->Finish();
      ++refused;
    }
  }
  const double open_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const Usage with = Read(pid);
  std::printf(
      "streams %d admitted %d refused %d open_s %.1f threads_before %ld threads_with %ld "
      "rss_before_mb %.1f rss_with_mb %.1f\n",
      absl::GetFlag(FLAGS_streams), admitted, refused, open_s, before.threads, with.threads,
      static_cast<double>(before.rss_kb) / 1024, static_cast<double>(with.rss_kb) / 1024);
  for (auto& s : streams) s->ctx.TryCancel();
  for (auto& s : streams) s->rw->Finish();
  return 0;
}
