// RequestReader: the HTTP server's one I/O thread. It accepts connections, applies the
// connection caps, and drives every pending connection's TLS handshake and request head
// with poll(2) on non-blocking sockets, under one deadline for both, so a peer that sends
// slowly (or nothing) costs a descriptor and a few KB here, never a worker. Whole heads go
// to the workers; answered connections come back to be drained and closed here too.
#ifndef BLKBENCH_COMMON_HTTP_REQUEST_READER_H_
#define BLKBENCH_COMMON_HTTP_REQUEST_READER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/http/tls_socket.h"

namespace blkbench {

// What an HTTP client may make the server hold. The defaults suit a daemon scraped every
// few seconds by a handful of Prometheus servers; tests shorten them.
struct HttpLimits {
  // From accept to the blank line ending the request head, TLS handshake included: one
  // budget for all of it, however the peer spaces its bytes. Then the connection is closed.
  absl::Duration request_deadline = absl::Seconds(10);
  // Writing the whole response, once the handler has returned.
  absl::Duration response_deadline = absl::Seconds(30);
  // After the response: how long the peer's leftovers are read and dropped (so closing
  // does not reset a response still in flight) before the connection is closed anyway.
  absl::Duration drain = absl::Seconds(1);
  // Connections held at once, at any stage; one more is closed as soon as it is accepted.
  int max_connections = 256;
  // Of those, from one source IP address.
  int max_connections_per_peer = 8;
  // The request line and headers (GET has no body); a longer head gets 431.
  size_t max_head_bytes = 16 << 10;
};

// A connection whose request head arrived whole (or grew past max_head_bytes).
struct ReadyRequest {
  Socket socket{-1};  // non-blocking; for TLS, handshake done
  std::string head;   // request line and headers, without the blank line ending them
  bool head_too_large = false;
  std::string peer;  // source IP: its slot is released when the connection closes
};

// Counts since the start, for tests and metrics.
struct HttpConnectionStats {
  int open = 0;                    // accepted and not yet closed, at any stage
  uint64_t refused_total_cap = 0;  // closed at accept: max_connections held already
  uint64_t refused_peer_cap = 0;   // closed at accept: max_connections_per_peer held already
  uint64_t deadline_exceeded = 0;  // closed before their request head was whole in time
};

// Thread-safe. Owns the thread; borrows the listening socket and the TLS context, which
// must outlive it.
class RequestReader {
 public:
  using OnReady = std::function<void(ReadyRequest)>;

  // Starts the thread, accepting from `listen_fd` (made non-blocking) and serving TLS
  // with `tls` (null: plain HTTP). `on_ready` runs on the thread, must not block, and
  // must eventually pass every request's socket back to Finish. Internal when no eventfd
  // can be made.
  static absl::StatusOr<std::unique_ptr<RequestReader>> Start(int listen_fd, SSL_CTX* tls,
                                                              const HttpLimits& limits,
                                                              OnReady on_ready);
  // REQUIRES: every ready request given back to Finish. Waits for the connections still
  // draining (each at most limits.drain), then closes what is left.
  ~RequestReader();

  // Stops accepting, and closes the connections whose head is not whole yet. Once it
  // returns, on_ready_ is not called again.
  void StopAccepting();
  // Takes back a connection whose response was written: close_notify and shutdown here,
  // and the thread drains and closes it, releasing its slot.
  void Finish(ReadyRequest request);

  HttpConnectionStats stats() const;

 private:
  struct Conn;
  RequestReader(int listen_fd, SSL_CTX* tls, const HttpLimits& limits, OnReady on_ready);
  void Loop();
  // Where a connection stands after Advance.
  enum class Step { kWaiting, kClose, kHandedOff };
  void AcceptAll(absl::Time now);
  // Moves the connections Finish took back into conns_, to drain.
  void TakeFinished(absl::Time now);
  // Takes a slot for a new connection from `peer`, or counts the refusal: false beyond
  // the caps.
  bool Admit(const std::string& peer, absl::Time now);
  // Closes the draining connections (of `peer`; "" for all) whose client has closed
  // already. A client that closes and reconnects at once is otherwise refused for its own
  // answered connections: its FIN is queued before the new connection is accepted, but
  // the loop reads it only at its next poll.
  void ReapDrained(const std::string& peer, absl::Time now);
  // Advances a connection as far as its peer's bytes allow.
  Step Advance(Conn& c);
  Step ReadHead(Conn& c);
  void Release(const std::string& peer);
  void Wake();

  const int listen_fd_;
  SSL_CTX* const tls_;
  const HttpLimits limits_;
  const OnReady on_ready_;
  int wake_fd_ = -1;  // eventfd: Finish, StopAccepting and the destructor ring it
  std::thread thread_;

  // The loop thread's own.
  std::vector<std::unique_ptr<Conn>> conns_;
  std::map<std::string, int> per_peer_;
  absl::Time accept_paused_until_ = absl::InfinitePast();  // out of descriptors

  mutable absl::Mutex mu_;
  std::vector<ReadyRequest> finished_ ABSL_GUARDED_BY(mu_);
  bool accepting_ ABSL_GUARDED_BY(mu_) = true;
  bool accept_stopped_ ABSL_GUARDED_BY(mu_) = false;  // the loop saw !accepting_
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  HttpConnectionStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_HTTP_REQUEST_READER_H_
