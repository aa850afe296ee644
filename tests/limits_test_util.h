// Helpers of tests/limits_test.cc: a raw agent stream on its own connection, a call
// with raw bytes through grpc::GenericStub, a census of the process's threads, and raw
// TCP connections.
#ifndef BLKBENCH_TESTS_LIMITS_TEST_UTIL_H_
#define BLKBENCH_TESTS_LIMITS_TEST_UTIL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "blkbench/v1/agent.grpc.pb.h"
#include "grpcpp/grpcpp.h"

namespace blkbench::testing {

// AgentService.Connect on a connection of its own (as each real agent has), driven by
// the test. Not thread-safe.
class RawAgent {
 public:
  // `index` makes the channel arguments, and so the connection, distinct.
  RawAgent(const std::string& address, int index);
  ~RawAgent();
  // Sends Register for `agent_id` and reads until Registered: OK when admitted;
  // otherwise the status the controller ended the stream with.
  grpc::Status Register(const std::string& agent_id);
  // Writes `msg`; false once the stream is broken.
  bool Send(const v1::AgentMessage& msg);
  // Reads until a Renewed for heartbeat `seq`; false if the stream ended first.
  bool WaitForRenewed(uint64_t seq);
  // Reads what is left (counting Renewed replies) and returns the final status.
  grpc::Status Finish();
  // Half-closes, then Finish(): the controller ends the stream, OK.
  grpc::Status Close();
  uint64_t heartbeats_renewed() const { return renewed_; }

 private:
  std::unique_ptr<v1::AgentService::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::AgentMessage, v1::ControllerMessage>> stream_;
  bool finished_ = false;
  uint64_t renewed_ = 0;
};

// Calls `method` with each of `messages` as raw bytes (grpc::GenericStub), half-closing
// after them if `half_close`; returns the call's status.
grpc::Status RawCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                     const std::vector<std::string>& messages, bool half_close);

// The threads of this process: all, and the gRPC sync server's ("grpcpp_sync_ser").
struct ThreadCensus {
  int total = 0;
  int sync_server = 0;
  std::map<std::string, int> by_name;  // for failure messages
};
std::ostream& operator<<(std::ostream& os, const ThreadCensus& census);
ThreadCensus CountThreads();

// What gRPC core's own thread pools may add under load, whatever the number of calls:
// the default and resolver executors (2 x cores each, iomgr/executor.cc), the timer
// manager (it adds a thread while one runs timers; a few), and the event engine's pool
// (up to cores + its timer thread).
int CoreThreadAllowance();

// A TCP connection to 127.0.0.1:`port` (blocking fd), or -1.
int ConnectTcp(int port);
// Milliseconds until the peer closed `fd` (a read returned 0 or failed), or -1 if it
// was still open after `limit_ms`. Reads and discards what the peer sends.
int64_t MsUntilClosed(int fd, int64_t limit_ms);

}  // namespace blkbench::testing

#endif  // BLKBENCH_TESTS_LIMITS_TEST_UTIL_H_
