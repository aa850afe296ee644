// Helpers of tests/limits_test.cc; see limits_test_util.h.
#include "tests/limits_test_util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "grpcpp/generic/generic_stub.h"

namespace blkbench::testing {

RawAgent::RawAgent(const std::string& address, int index) {
  grpc::ChannelArguments args;
  args.SetInt("blkbench.test.connection", index);
  stub_ = v1::AgentService::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  stream_ = stub_->Connect(&ctx_);
}

RawAgent::~RawAgent() {
  if (finished_) return;
  ctx_.TryCancel();
  stream_->Finish();
}

grpc::Status RawAgent::Register(const std::string& agent_id) {
  v1::AgentMessage reg;
  reg.mutable_register_()->set_agent_id(agent_id);
  reg.mutable_register_()->set_instance_id(agent_id + "-raw");
  stream_->Write(reg);  // a refused stream may already be over: Finish tells
  v1::ControllerMessage msg;
  while (stream_->Read(&msg)) {
    if (msg.has_registered()) return grpc::Status::OK;
  }
  return Finish();
}

bool RawAgent::Send(const v1::AgentMessage& msg) { return stream_->Write(msg); }

bool RawAgent::WaitForRenewed(uint64_t seq) {
  v1::ControllerMessage msg;
  while (stream_->Read(&msg)) {
    if (!msg.has_renewed()) continue;
    ++renewed_;
    if (msg.renewed().seq() == seq) return true;
  }
  return false;
}

grpc::Status RawAgent::Finish() {
  v1::ControllerMessage msg;
  while (stream_->Read(&msg)) {
    if (msg.has_renewed()) ++renewed_;
  }
  finished_ = true;
  return stream_->Finish();
}

grpc::Status RawAgent::Close() {
  stream_->WritesDone();
  return Finish();
}

namespace {

// Waits for the completion of the operation started with `tag`; its ok bit.
bool Await(grpc::CompletionQueue& cq, void* tag) {
  void* got = nullptr;
  bool ok = false;
  if (!cq.Next(&got, &ok) || got != tag) return false;
  return ok;
}

}  // namespace

grpc::Status RawCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                     const std::vector<std::string>& messages, bool half_close) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call = stub.PrepareCall(&ctx, method, &cq);
  int tag = 0;
  call->StartCall(&tag);
  bool open = Await(cq, &tag);
  for (const std::string& m : messages) {
    if (!open) break;
    grpc::Slice slice(m);
    grpc::ByteBuffer buffer(&slice, 1);
    call->Write(buffer, &tag);
    open = Await(cq, &tag);
  }
  if (open && half_close) {
    call->WritesDone(&tag);
    Await(cq, &tag);
  }
  // Read until the server ends the call (a unary reply counts as one message).
  grpc::ByteBuffer reply;
  do {
    call->Read(&reply, &tag);
  } while (Await(cq, &tag));
  grpc::Status status;
  call->Finish(&status, &tag);
  Await(cq, &tag);
  cq.Shutdown();
  void* ignored;
  bool ok;
  while (cq.Next(&ignored, &ok)) {
  }
  return status;
}

ThreadCensus CountThreads() {
  ThreadCensus census;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    ++census.total;
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name.rfind("grpcpp_sync_ser", 0) == 0) ++census.sync_server;
    ++census.by_name[name];
  }
  return census;
}

std::ostream& operator<<(std::ostream& os, const ThreadCensus& census) {
  os << census.total << " threads:";
  for (const auto& [name, n] : census.by_name) os << " " << name << " x" << n;
  return os;
}

int CoreThreadAllowance() {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  constexpr int kTimerManager = 4;
  return 2 * (2 * cores) + kTimerManager + (cores + 1);
}

int ConnectTcp(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

int64_t MsUntilClosed(int fd, int64_t limit_ms) {
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start)
        .count();
  };
  char buf[4096];
  while (elapsed() < limit_ms) {
    pollfd p{fd, POLLIN, 0};
    const int left = static_cast<int>(limit_ms - elapsed());
    if (::poll(&p, 1, std::max(left, 1)) <= 0) continue;
    if (::read(fd, buf, sizeof(buf)) <= 0) return elapsed();
  }
  return -1;
}

}  // namespace blkbench::testing
