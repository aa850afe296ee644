// TcpProxy: the control calls and the poll loop that moves bytes between each accepted
// client socket and its upstream socket, with the faults the settings ask for.
#include "common/testing/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blkbench::testing {
namespace {

using SteadyClock = std::chrono::steady_clock;

constexpr int kListenBacklog = 128;
// Token bucket depth, as seconds of traffic at the configured rate: deep enough that a
// 1 ms poll timeout rarely leaves the bucket empty, shallow enough that a throttled
// transfer starts at about the configured rate.
constexpr double kBucketSeconds = 0.1;

bool WouldBlock(int err) { return err == EAGAIN || err == EWOULDBLOCK || err == EINTR; }

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// Closes with a RST instead of a FIN (SO_LINGER {1, 0}), as tcp_disconnect() does for
// a socket closed with unread data.
void Abort(int fd) {
  if (fd < 0) return;
  const linger hard{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &hard, sizeof(hard));
  close(fd);
}

void NoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// A fixed-capacity FIFO of bytes: filled at the tail by recv(), drained from the head
// by send().
class Buffer {
 public:
  Buffer() : data_(TcpProxy::kBufferBytes) {}
  size_t size() const { return end_ - begin_; }
  size_t space() const { return data_.size() - size(); }

  // recv()s up to `max` (<= space()) bytes into the tail; returns recv()'s result.
  ssize_t ReadFrom(int fd, size_t max) {
    if (data_.size() - end_ < max) {  // move the live bytes to the front to make room
      std::memmove(data_.data(), data_.data() + begin_, size());
      end_ -= begin_;
      begin_ = 0;
    }
    const ssize_t n = recv(fd, data_.data() + end_, max, 0);
    if (n > 0) end_ += static_cast<size_t>(n);
    return n;
  }
  // send()s from the head; returns send()'s result.
  ssize_t WriteTo(int fd) {
    const ssize_t n = send(fd, data_.data() + begin_, size(), MSG_NOSIGNAL);
    if (n > 0) begin_ += static_cast<size_t>(n);
    if (begin_ == end_) begin_ = end_ = 0;
    return n;
  }

 private:
  std::vector<char> data_;
  size_t begin_ = 0;
  size_t end_ = 0;
};

// Bytes per second with a burst of kBucketSeconds of traffic; rate 0 is unlimited.
class TokenBucket {
 public:
  // A new rate starts with a full bucket.
  void SetRate(int64_t bytes_per_second, SteadyClock::time_point now) {
    if (bytes_per_second == rate_) return;
    rate_ = bytes_per_second;
    tokens_ = Depth();
    last_ = now;
  }
  // Bytes that may pass now.
  size_t Available(SteadyClock::time_point now) {
    if (rate_ == 0) return std::numeric_limits<size_t>::max();
    const double elapsed = std::chrono::duration<double>(now - last_).count();
    tokens_ = std::min(Depth(), tokens_ + elapsed * static_cast<double>(rate_));
    last_ = now;
    return static_cast<size_t>(tokens_);
  }
  void Take(size_t bytes) {
    if (rate_ != 0) tokens_ -= static_cast<double>(bytes);
  }
  // Whole milliseconds (at least 1) until a byte may pass; meaningful when Available()
  // just returned 0.
  int WaitMs() const {
    const double seconds = (1.0 - tokens_) / static_cast<double>(rate_);
    return std::max(1, static_cast<int>(std::ceil(seconds * 1000.0)));
  }

 private:
  double Depth() const { return std::max(1.0, static_cast<double>(rate_) * kBucketSeconds); }
  int64_t rate_ = 0;
  double tokens_ = 0;
  SteadyClock::time_point last_;
};

// One direction of a pair: bytes recv()d from one socket, buffered, send() to the other.
struct Direction {
  Buffer buffer;
  TokenBucket bucket;
  bool eof = false;   // the source sent FIN
  bool shut = false;  // the FIN was passed on: shutdown(destination, SHUT_WR)

  bool CanRead(SteadyClock::time_point now) {
    return !eof && buffer.space() > 0 && bucket.Available(now) > 0;
  }
  bool WaitingForTokens(SteadyClock::time_point now) {
    return !eof && buffer.space() > 0 && bucket.Available(now) == 0;
  }
};

struct Pair {
  int client = -1;
  int upstream = -1;       // -1 until the upstream connect() is started
  bool connected = false;  // the upstream connect() has completed
  bool dead = false;       // both sockets closed; removed at the next turn
  Direction up;            // client → upstream
  Direction down;          // upstream → client
  int client_slot = -1;    // index into this turn's pollfds, -1 when not polled
  int upstream_slot = -1;
};

// The events to poll a socket for; its slot is -1 when there is nothing to learn from
// it. A socket we have shut for writing reports POLLHUP as soon as its peer's FIN
// arrives, so it is left out while we want nothing from it, or poll() would spin.
int Slot(std::vector<pollfd>& fds, int fd, short events, bool shut_for_writing) {
  if (fd < 0 || (events == 0 && shut_for_writing)) return -1;
  fds.push_back(pollfd{fd, events, 0});
  return static_cast<int>(fds.size()) - 1;
}

}  // namespace

// The loop thread's state: every pair and the pollfd set, touched by that thread only.
class TcpProxy::Loop {
 public:
  explicit Loop(TcpProxy& proxy) : proxy_(proxy) {}
  ~Loop() {
    for (auto& pair : pairs_) Close(*pair, /*reset=*/false);
  }

  // Acts on what changed from `previous` to `next` before any further I/O.
  void Apply(const Settings& next, const Settings& previous) {
    if (next.reset_generation != previous.reset_generation) {
      for (auto& pair : pairs_) Close(*pair, /*reset=*/true);
      Accept(next, /*reset=*/true);  // connections still in the backlog are current too
    }
    const auto now = SteadyClock::now();
    for (auto& pair : pairs_) {
      pair->up.bucket.SetRate(next.bytes_per_second, now);
      pair->down.bucket.SetRate(next.bytes_per_second, now);
    }
  }

  // One poll() and the I/O it allows. False when poll() fails for good.
  bool Turn(const Settings& settings) {
    std::erase_if(pairs_, [](const auto& pair) { return pair->dead; });
    if (!settings.stalled) {
      for (auto& pair : pairs_) {
        if (pair->upstream < 0) Connect(*pair);
      }
    }
    const auto now = SteadyClock::now();
    int timeout_ms = -1;
    fds_.assign({pollfd{proxy_.wake_fd_, POLLIN, 0}, pollfd{proxy_.listen_fd_, POLLIN, 0}});
    for (auto& pair : pairs_) {
      pair->client_slot = pair->upstream_slot = -1;
      if (settings.stalled || pair->dead) continue;
      short client = 0;
      short upstream = 0;
      if (pair->up.CanRead(now)) client |= POLLIN;
      if (pair->down.buffer.size() > 0) client |= POLLOUT;
      if (!pair->connected) {
        upstream = POLLOUT;  // the non-blocking connect() completes
      } else {
        if (pair->down.CanRead(now)) upstream |= POLLIN;
        if (pair->up.buffer.size() > 0) upstream |= POLLOUT;
      }
      for (Direction* d : {&pair->up, &pair->down}) {
        if (d->WaitingForTokens(now)) {
          const int wait = d->bucket.WaitMs();
          timeout_ms = timeout_ms < 0 ? wait : std::min(timeout_ms, wait);
        }
      }
      pair->client_slot = Slot(fds_, pair->client, client, pair->down.shut);
      pair->upstream_slot = Slot(fds_, pair->upstream, upstream, pair->up.shut);
    }

    if (poll(fds_.data(), fds_.size(), timeout_ms) < 0) return errno == EINTR || errno == ENOMEM;
    if (fds_[0].revents & POLLIN) {
      uint64_t count;
      const ssize_t drained = read(proxy_.wake_fd_, &count, sizeof(count));
      (void)drained;  // EAGAIN only: nothing more to drain
    }
    for (auto& pair : pairs_) {
      const short client = pair->client_slot < 0 ? short{0} : fds_[pair->client_slot].revents;
      const short upstream = pair->upstream_slot < 0 ? short{0} : fds_[pair->upstream_slot].revents;
      if (client != 0 || upstream != 0) Pump(*pair, client, upstream);
    }
    if (fds_[1].revents & POLLIN) Accept(settings, /*reset=*/settings.refuse);
    return true;
  }

 private:
  // accept()s every waiting connection; resets each at once when `reset`.
  void Accept(const Settings& settings, bool reset) {
    while (true) {
      const int fd = accept4(proxy_.listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == ECONNABORTED || errno == EINTR) continue;
        return;  // EAGAIN: backlog empty; EMFILE and the like: retried at the next turn
      }
      proxy_.connections_.fetch_add(1);
      if (reset) {
        Abort(fd);
        continue;
      }
      NoDelay(fd);
      auto pair = std::make_unique<Pair>();
      pair->client = fd;
      const auto now = SteadyClock::now();
      pair->up.bucket.SetRate(settings.bytes_per_second, now);
      pair->down.bucket.SetRate(settings.bytes_per_second, now);
      pairs_.push_back(std::move(pair));
    }
  }

  // Starts the non-blocking upstream connect(); resets the client when it fails.
  void Connect(Pair& pair) {
    pair.upstream = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (pair.upstream < 0) return Close(pair, /*reset=*/true);
    NoDelay(pair.upstream);
    const sockaddr_in target = Loopback(proxy_.target_port_);
    if (connect(pair.upstream, reinterpret_cast<const sockaddr*>(&target), sizeof(target)) == 0) {
      pair.connected = true;
    } else if (errno != EINPROGRESS) {
      Close(pair, /*reset=*/true);
    }
  }

  // Moves what poll() allows both ways; closes the pair once both FINs are passed on,
  // and aborts it on any socket error.
  void Pump(Pair& pair, short client, short upstream) {
    if (!pair.connected && upstream != 0) {
      int err = 0;
      socklen_t len = sizeof(err);
      if (getsockopt(pair.upstream, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
        return Close(pair, /*reset=*/true);
      }
      pair.connected = true;
    }
    if ((client & POLLERR) || (upstream & POLLERR)) return Close(pair, /*reset=*/true);
    const int to_upstream = pair.connected ? pair.upstream : -1;
    if (!Move(pair.up, pair.client, to_upstream, client) ||
        (pair.connected && !Move(pair.down, pair.upstream, pair.client, upstream))) {
      return Close(pair, /*reset=*/true);
    }
    if (pair.up.shut && pair.down.shut) Close(pair, /*reset=*/false);
  }

  // One recv() from `from` (if poll() said so and the buffer and bucket allow), one
  // send() to `to` (if connected and anything is buffered) and the FIN passed on once
  // the source's EOF is drained. False on a socket error.
  bool Move(Direction& d, int from, int to, short from_revents) {
    const auto now = SteadyClock::now();
    if ((from_revents & (POLLIN | POLLHUP)) && !d.eof) {
      const size_t allowed = std::min(d.buffer.space(), d.bucket.Available(now));
      if (allowed > 0) {
        const ssize_t n = d.buffer.ReadFrom(from, allowed);
        if (n > 0) d.bucket.Take(static_cast<size_t>(n));
        if (n == 0) d.eof = true;
        if (n < 0 && !WouldBlock(errno)) return false;
      }
    }
    if (to < 0) return true;
    if (d.buffer.size() > 0) {  // written at once rather than after another poll()
      const ssize_t n = d.buffer.WriteTo(to);
      if (n > 0) proxy_.bytes_forwarded_.fetch_add(static_cast<uint64_t>(n));
      if (n < 0 && !WouldBlock(errno)) return false;
    }
    if (d.eof && d.buffer.size() == 0 && !d.shut) {
      if (shutdown(to, SHUT_WR) < 0) return false;
      d.shut = true;
    }
    return true;
  }

  void Close(Pair& pair, bool reset) {
    if (pair.dead) return;
    for (int fd : {pair.client, pair.upstream}) {
      if (reset) {
        Abort(fd);
      } else if (fd >= 0) {
        close(fd);
      }
    }
    pair.client = pair.upstream = -1;
    pair.dead = true;
  }

  TcpProxy& proxy_;
  std::vector<std::unique_ptr<Pair>> pairs_;
  std::vector<pollfd> fds_;
};

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(int target_port) {
  if (target_port <= 0 || target_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("target port ", target_port, " out of range"));
  }
  const int listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) return absl::ErrnoToStatus(errno, "socket");
  auto fail = [listen_fd](const char* what) {
    const int err = errno;
    close(listen_fd);
    return absl::ErrnoToStatus(err, what);
  };
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof(addr);
  if (bind(listen_fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) < 0) {
    return fail("bind 127.0.0.1:0");
  }
  if (listen(listen_fd, kListenBacklog) < 0) return fail("listen");
  if (getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len) < 0) {
    return fail("getsockname");
  }
  const int wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd < 0) return fail("eventfd");
  auto proxy = std::unique_ptr<TcpProxy>(
      new TcpProxy(listen_fd, wake_fd, ntohs(addr.sin_port), target_port));
  proxy->thread_ = std::thread(&TcpProxy::Run, proxy.get());
  return proxy;
}

TcpProxy::TcpProxy(int listen_fd, int wake_fd, int port, int target_port)
    : listen_fd_(listen_fd), wake_fd_(wake_fd), port_(port), target_port_(target_port) {}

TcpProxy::~TcpProxy() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
    Wake();
  }
  if (thread_.joinable()) thread_.join();
  close(listen_fd_);
  close(wake_fd_);
}

void TcpProxy::Stall() {
  Update([](Settings& s) { s.stalled = true; });
}
void TcpProxy::Resume() {
  Update([](Settings& s) { s.stalled = false; });
}
void TcpProxy::ResetAll() {
  Update([](Settings& s) { ++s.reset_generation; });
}
void TcpProxy::SetRefuse(bool refuse) {
  Update([refuse](Settings& s) { s.refuse = refuse; });
}
void TcpProxy::Throttle(int64_t bytes_per_second) {
  Update([bytes_per_second](Settings& s) {
    s.bytes_per_second = std::max<int64_t>(0, bytes_per_second);
  });
}

void TcpProxy::Update(absl::FunctionRef<void(Settings&)> change) {
  absl::MutexLock lock(&mu_);
  change(settings_);
  const uint64_t epoch = ++epoch_;
  Wake();
  auto applied = [this, epoch]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return loop_exited_ || applied_epoch_ >= epoch;
  };
  mu_.Await(absl::Condition(&applied));
}

void TcpProxy::Wake() {
  const uint64_t one = 1;
  const ssize_t written = write(wake_fd_, &one, sizeof(one));
  (void)written;  // EAGAIN only: the counter is already non-zero, so the loop wakes anyway
}

void TcpProxy::Run() {
  Loop loop(*this);
  Settings applied;
  while (true) {
    Settings next;
    uint64_t epoch;
    {
      absl::MutexLock lock(&mu_);
      if (stop_) break;
      next = settings_;
      epoch = epoch_;
    }
    loop.Apply(next, applied);
    applied = next;
    {
      absl::MutexLock lock(&mu_);
      applied_epoch_ = epoch;
    }
    if (!loop.Turn(applied)) break;
  }
  absl::MutexLock lock(&mu_);
  loop_exited_ = true;
}

int FreeTcpPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace blkbench::testing
