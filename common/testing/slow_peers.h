// SlowPeers: hostile clients for tests of servers that face the network — TCP connections
// from chosen loopback addresses that send a request a byte at a time, or nothing, and
// reconnect whenever the server closes them.
#ifndef BLKBENCH_COMMON_TESTING_SLOW_PEERS_H_
#define BLKBENCH_COMMON_TESTING_SLOW_PEERS_H_

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace blkbench::testing {

// A blocking TCP connection from `source` (an IPv4 address of this host, e.g.
// "127.0.0.2": all of 127/8 is loopback) to 127.0.0.1:port; -1 if it failed.
int ConnectFrom(const std::string& source, int port);

// True once the server ended `fd` (EOF or a reset), polling up to `wait`; false while it
// is still open. Input the server sent is read and dropped.
bool ClosedByServer(int fd, absl::Duration wait);

// The first bytes of a TLS 1.2/1.3 ClientHello announcing a 512-byte record, padded to
// `size` bytes: a server reading it waits for the rest of the record.
std::string PartialClientHello(size_t size = 400);
// The start of an HTTP GET whose header never ends, `size` bytes long.
std::string PartialHttpHead(size_t size = 400);

// How long the server took to close a connection from `source` that sends `bytes` one
// every `interval` (nothing if empty); absl::InfiniteDuration() if still open after
// `give_up`.
absl::Duration TimeUntilClosed(int port, const std::string& source, const std::string& bytes,
                               absl::Duration interval, absl::Duration give_up);

// One thread keeping a connection open from each of `sources` (repeat an address for
// several) to 127.0.0.1:port, each sending the next byte of `bytes` every `interval`
// (nothing if `bytes` is empty) and reconnecting when the server closes it.
class SlowPeers {
 public:
  SlowPeers(int port, std::vector<std::string> sources, std::string bytes,
            absl::Duration interval = absl::Milliseconds(100));
  ~SlowPeers();  // stops the thread and closes every connection
  SlowPeers(const SlowPeers&) = delete;
  SlowPeers& operator=(const SlowPeers&) = delete;

  // How many times the server closed one of the connections.
  int closed_by_server() const { return closed_by_server_.load(); }

 private:
  void Run();

  const int port_;
  const std::vector<std::string> sources_;
  const std::string bytes_;
  const absl::Duration interval_;
  absl::Notification stop_;
  std::atomic<int> closed_by_server_{0};
  std::thread thread_;
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_COMMON_TESTING_SLOW_PEERS_H_
