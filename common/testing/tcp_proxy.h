// TcpProxy: a fault-injecting TCP forwarder for chaos tests. It sits between two real
// daemons on loopback and, on request, stalls, resets, refuses or throttles their traffic.
#ifndef BLKBENCH_COMMON_TESTING_TCP_PROXY_H_
#define BLKBENCH_COMMON_TESTING_TCP_PROXY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace blkbench::testing {

// Forwards TCP connections from 127.0.0.1:port() to 127.0.0.1:target_port, one upstream
// connection per accepted client connection, bytes unchanged, half-closes (FIN) passed on.
// An error on either side of a pair aborts both sides with a RST, as a dead network path
// would look to each end.
//
// Not modelled: packet-level faults (reordering, corruption, duplicated segments), latency
// without loss, IPv6 or non-loopback targets, and per-connection faults — every fault
// applies to all connections at once.
//
// Thread-safe. One background thread runs poll() over the listening socket, every
// connection pair and an eventfd that wakes it for control calls; the destructor stops it
// and closes every socket. Each control call returns only once the thread has applied
// it, so a test may act on the new behaviour straight away (e.g. write after Stall()
// and know the bytes will be held).
// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0, then closed), for
// daemons that must be told their port; 0 if none could be had.
int FreeTcpPort();

class TcpProxy {
 public:
  // Bytes buffered per direction per connection; a side is not read while its peer's
  // buffer is full, so back-pressure reaches the sender as on a direct connection.
  static constexpr int64_t kBufferBytes = 256 * 1024;

  // Listens on 127.0.0.1 on an ephemeral port. InvalidArgument unless 0 < target_port
  // < 65536; the errno's status (absl::ErrnoToStatus) when the listening socket or the
  // eventfd cannot be made. Nothing need listen on target_port yet: each upstream
  // connection is made when its client arrives, and a client whose upstream connect
  // fails is reset.
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(int target_port);
  ~TcpProxy();
  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  int port() const { return port_; }

  // Stops moving bytes both ways, like a partition that loses packets rather than
  // refusing them: connections stay open and nothing on them is read, written or
  // closed (so the senders' kernel buffers fill). New connections are accepted but not
  // connected upstream. Idempotent.
  void Stall();
  // Forwards again: bytes the proxy had already read are delivered, connections
  // accepted during the stall are connected upstream. Idempotent.
  void Resume();
  // Aborts every current connection, client and upstream side, with a RST (SO_LINGER
  // {1, 0}, then close), including ones still waiting in the listen backlog. On return
  // every connection made before the call is gone; later ones are forwarded normally.
  void ResetAll();
  // While true, each new connection is accepted and reset at once (the client sees
  // ECONNRESET or EOF, the target sees nothing). Existing connections are unaffected.
  void SetRefuse(bool refuse);
  // Limits each direction of each connection to `bytes_per_second` (a token bucket
  // holding 100 ms of traffic, full at start); 0 (the default) is unlimited. Applies to
  // existing connections too.
  void Throttle(int64_t bytes_per_second);

  // Connections accepted so far, refused and reset ones included.
  uint64_t connections() const { return connections_.load(); }
  // Bytes written to either side so far, both directions summed.
  uint64_t bytes_forwarded() const { return bytes_forwarded_.load(); }

 private:
  // What the control calls set and the loop thread reads at the top of each turn.
  struct Settings {
    bool stalled = false;
    bool refuse = false;
    int64_t bytes_per_second = 0;
    uint64_t reset_generation = 0;  // bumped by ResetAll
  };
  class Loop;  // the poll loop and its connection pairs (tcp_proxy.cc)

  TcpProxy(int listen_fd, int wake_fd, int port, int target_port);
  // Runs `change` on the settings under mu_, wakes the loop and waits until it has
  // applied them (or has exited).
  void Update(absl::FunctionRef<void(Settings&)> change);
  void Run();   // the loop thread's body
  void Wake();  // makes the loop's poll() return (eventfd write)

  const int listen_fd_;
  const int wake_fd_;  // eventfd
  const int port_;
  const int target_port_;
  std::atomic<uint64_t> connections_{0};
  std::atomic<uint64_t> bytes_forwarded_{0};

  absl::Mutex mu_;
  Settings settings_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;          // bumped by each control call
  uint64_t applied_epoch_ ABSL_GUARDED_BY(mu_) = 0;  // the last epoch the loop applied
  bool loop_exited_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_TCP_PROXY_H_
