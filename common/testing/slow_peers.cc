// Slow and silent TCP peers for tests; see slow_peers.h.
#include "common/testing/slow_peers.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace blkbench::testing {

int ConnectFrom(const std::string& source, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in from{};
  from.sin_family = AF_INET;
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (inet_pton(AF_INET, source.c_str(), &from.sin_addr) != 1 ||
      bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool ClosedByServer(int fd, absl::Duration wait) {
  const absl::Time until = absl::Now() + wait;
  for (;;) {
    pollfd p{fd, POLLIN, 0};
    const int ms =
        static_cast<int>(std::max<int64_t>(absl::ToInt64Milliseconds(until - absl::Now()), 0));
    if (poll(&p, 1, ms) > 0) {
      char buf[4096];
      const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
      continue;  // bytes from the server (a TLS alert, say): not closed yet
    }
    if (absl::Now() >= until) return false;
  }
}

std::string PartialClientHello(size_t size) {
  // Record: handshake (22), TLS 1.0 record version, 512 bytes. Handshake: ClientHello (1),
  // 508 bytes, client version TLS 1.2; then what would be the random.
  std::string hello = {'\x16', '\x03', '\x01', '\x02', '\x00', '\x01',
                       '\x00', '\x01', '\xfc', '\x03', '\x03'};
  hello.resize(size, 'r');
  return hello;
}

std::string PartialHttpHead(size_t size) {
  std::string head = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
  head.resize(size, 's');
  return head;
}

absl::Duration TimeUntilClosed(int port, const std::string& source, const std::string& bytes,
                               absl::Duration interval, absl::Duration give_up) {
  const int fd = ConnectFrom(source, port);
  if (fd < 0) return absl::ZeroDuration();
  const absl::Time start = absl::Now();
  absl::Duration took = absl::InfiniteDuration();
  for (size_t i = 0; absl::Now() - start < give_up; ++i) {
    if (!bytes.empty() && send(fd, &bytes[i % bytes.size()], 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
        errno != EAGAIN) {
      took = absl::Now() - start;  // EPIPE or ECONNRESET: closed already
      break;
    }
    if (ClosedByServer(fd, interval)) {
      took = absl::Now() - start;
      break;
    }
  }
  close(fd);
  return took;
}

SlowPeers::SlowPeers(int port, std::vector<std::string> sources, std::string bytes,
                     absl::Duration interval)
    : port_(port), sources_(std::move(sources)), bytes_(std::move(bytes)), interval_(interval) {
  thread_ = std::thread([this] { Run(); });
}

SlowPeers::~SlowPeers() {
  stop_.Notify();
  thread_.join();
}

void SlowPeers::Run() {
  struct Peer {
    int fd = -1;
    size_t sent = 0;
  };
  std::vector<Peer> peers(sources_.size());
  for (size_t i = 0; i < peers.size(); ++i) peers[i].fd = ConnectFrom(sources_[i], port_);
  // The interval paces the bytes; it is not waiting for anything to happen.
  while (!stop_.WaitForNotificationWithTimeout(interval_)) {
    for (size_t i = 0; i < peers.size(); ++i) {
      Peer& p = peers[i];
      bool closed = p.fd < 0 || ClosedByServer(p.fd, absl::ZeroDuration());
      if (!closed && !bytes_.empty()) {
        closed =
            send(p.fd, &bytes_[p.sent++ % bytes_.size()], 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
            errno != EAGAIN;
      }
      if (!closed) continue;
      if (p.fd >= 0) {
        close(p.fd);
        closed_by_server_.fetch_add(1);
      }
      p = Peer{ConnectFrom(sources_[i], port_), 0};
    }
  }
  for (Peer& p : peers) {
    if (p.fd >= 0) close(p.fd);
  }
}

}  // namespace blkbench::testing
