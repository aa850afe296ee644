// The HTTP server's poll loop; see request_reader.h.
#include "common/http/request_reader.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace blkbench {
namespace {

// How long accept(2) rests after EMFILE/ENFILE: the listening socket stays readable, and
// polling it at once again would spin until a connection closes.
constexpr absl::Duration kAcceptPause = absl::Milliseconds(100);

// The peer's IP address as text ("127.0.0.2", "::1"), the key of the per-peer cap.
std::string PeerAddress(const sockaddr_storage& addr) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&addr)->sin_addr, buf, sizeof(buf));
  } else if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_addr, buf, sizeof(buf));
  }
  return buf;
}

int PollMillis(absl::Duration left) {
  if (left <= absl::ZeroDuration()) return 0;
  return static_cast<int>(std::min<int64_t>(
      absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))), INT_MAX));
}

}  // namespace

struct RequestReader::Conn {
  enum class Phase { kHandshake, kHead, kDrain };
  Conn(Socket s, std::string p, Phase ph, absl::Time d)
      : socket(std::move(s)), peer(std::move(p)), phase(ph), deadline(d) {}
  Socket socket;
  std::string peer;
  Phase phase;
  absl::Time deadline;  // the request deadline, or the end of the drain
  IoWait wait = IoWait::kReadable;
  std::string head;
};

absl::StatusOr<std::unique_ptr<RequestReader>> RequestReader::Start(int listen_fd, SSL_CTX* tls,
                                                                    const HttpLimits& limits,
                                                                    OnReady on_ready) {
  std::unique_ptr<RequestReader> r(new RequestReader(listen_fd, tls, limits, std::move(on_ready)));
  r->wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (r->wake_fd_ < 0) return absl::ErrnoToStatus(errno, "eventfd");
  const int flags = fcntl(listen_fd, F_GETFL);
  if (flags < 0 || fcntl(listen_fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return absl::ErrnoToStatus(errno, "fcntl O_NONBLOCK on the listening socket");
  }
  RequestReader* raw = r.get();
  r->thread_ = std::thread([raw] { raw->Loop(); });
  return r;
}

RequestReader::RequestReader(int listen_fd, SSL_CTX* tls, const HttpLimits& limits,
                             OnReady on_ready)
    : listen_fd_(listen_fd), tls_(tls), limits_(limits), on_ready_(std::move(on_ready)) {}

RequestReader::~RequestReader() {
  {
    absl::MutexLock lock(&mu_);
    accepting_ = false;
    stopping_ = true;
  }
  Wake();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void RequestReader::Wake() {
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void RequestReader::StopAccepting() {
  absl::MutexLock lock(&mu_);
  accepting_ = false;
  Wake();
  mu_.Await(absl::Condition(&accept_stopped_));
}

void RequestReader::Finish(ReadyRequest request) {
  request.socket.BeginClose();
  {
    absl::MutexLock lock(&mu_);
    finished_.push_back(std::move(request));
  }
  Wake();
}

HttpConnectionStats RequestReader::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void RequestReader::Release(const std::string& peer) {
  auto it = per_peer_.find(peer);
  if (--it->second == 0) per_peer_.erase(it);
  absl::MutexLock lock(&mu_);
  --stats_.open;
}

void RequestReader::Loop() {
  std::vector<pollfd> fds;
  for (;;) {
    bool accepting = false;
    bool stopping = false;
    {
      absl::MutexLock lock(&mu_);
      accepting = accepting_;
      stopping = stopping_;
      accept_stopped_ = !accepting;  // no request is handed over after this
    }
    absl::Time now = absl::Now();
    TakeFinished(now);
    if (!accepting) {  // a head not whole yet will never be served now
      for (auto& c : conns_) {
        if (c->phase != Conn::Phase::kDrain) c->deadline = now;
      }
    }
    if (stopping && conns_.empty()) return;

    // Wait for the wake-up, a new connection, or a connection's next bytes, at most until
    // the nearest deadline.
    fds.clear();
    fds.push_back({wake_fd_, POLLIN, 0});
    const bool poll_listener = accepting && now >= accept_paused_until_;
    fds.push_back({poll_listener ? listen_fd_ : -1, POLLIN, 0});
    absl::Time wake_at =
        accepting && !poll_listener ? accept_paused_until_ : absl::InfiniteFuture();
    for (const auto& c : conns_) {
      const short events = c->wait == IoWait::kWritable ? POLLOUT : POLLIN;
      fds.push_back({c->socket.fd(), events, 0});
      wake_at = std::min(wake_at, c->deadline);
    }
    const int timeout = wake_at == absl::InfiniteFuture() ? -1 : PollMillis(wake_at - now);
    if (poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR) {
      absl::MutexLock lock(&mu_);  // cannot go on (ENOMEM): let StopAccepting return
      accept_stopped_ = true;
      return;
    }
    now = absl::Now();
    if (fds[0].revents != 0) {
      uint64_t count;
      (void)!read(wake_fd_, &count, sizeof(count));
    }

    // Advance what is ready, and close what ran out of time; then accept, appending after
    // the connections polled (fds[i + 2] is conns_[i]).
    size_t kept = 0;
    for (size_t i = 0; i < conns_.size(); ++i) {
      Conn& c = *conns_[i];
      Step step = fds[i + 2].revents != 0 ? Advance(c) : Step::kWaiting;
      if (step == Step::kWaiting && now >= c.deadline) {
        if (c.phase != Conn::Phase::kDrain && accepting) {
          absl::MutexLock lock(&mu_);
          ++stats_.deadline_exceeded;
        }
        step = Step::kClose;
      }
      if (step == Step::kClose) Release(c.peer);
      if (step == Step::kWaiting && kept++ != i) conns_[kept - 1] = std::move(conns_[i]);
    }
    conns_.resize(kept);
    if (poll_listener && fds[1].revents != 0) AcceptAll(now);
  }
}

void RequestReader::TakeFinished(absl::Time now) {
  std::vector<ReadyRequest> finished;
  {
    absl::MutexLock lock(&mu_);
    finished.swap(finished_);
  }
  for (ReadyRequest& r : finished) {
    conns_.push_back(std::make_unique<Conn>(std::move(r.socket), std::move(r.peer),
                                            Conn::Phase::kDrain, now + limits_.drain));
  }
}

void RequestReader::ReapDrained(const std::string& peer, absl::Time now) {
  TakeFinished(now);
  size_t kept = 0;
  for (size_t i = 0; i < conns_.size(); ++i) {
    Conn& c = *conns_[i];
    if (c.phase == Conn::Phase::kDrain && (peer.empty() || c.peer == peer) &&
        !c.socket.DrainSome()) {
      Release(c.peer);
      continue;
    }
    if (kept++ != i) conns_[kept - 1] = std::move(conns_[i]);
  }
  conns_.resize(kept);
}

bool RequestReader::Admit(const std::string& peer, absl::Time now) {
  auto held = [&] {
    auto it = per_peer_.find(peer);
    return it == per_peer_.end() ? 0 : it->second;
  };
  if (held() >= limits_.max_connections_per_peer) ReapDrained(peer, now);
  if (stats().open >= limits_.max_connections) ReapDrained("", now);
  absl::MutexLock lock(&mu_);
  if (stats_.open >= limits_.max_connections) {
    ++stats_.refused_total_cap;
    return false;
  }
  if (held() >= limits_.max_connections_per_peer) {
    ++stats_.refused_peer_cap;
    return false;
  }
  ++per_peer_[peer];
  ++stats_.open;
  return true;
}

void RequestReader::AcceptAll(absl::Time now) {
  for (;;) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    const int fd =
        accept4(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        accept_paused_until_ = now + kAcceptPause;
      }
      return;  // EAGAIN: all taken
    }
    std::string peer = PeerAddress(addr);
    if (!Admit(peer, now)) {
      close(fd);
      continue;
    }
    auto c = std::make_unique<Conn>(Socket(fd), std::move(peer),
                                    tls_ != nullptr ? Conn::Phase::kHandshake : Conn::Phase::kHead,
                                    now + limits_.request_deadline);
    // A client usually sends at once after connecting: try now rather than after a poll.
    switch (Advance(*c)) {
      case Step::kWaiting:
        conns_.push_back(std::move(c));
        break;
      case Step::kClose:
        Release(c->peer);
        break;
      case Step::kHandedOff:
        break;
    }
  }
}

RequestReader::Step RequestReader::Advance(Conn& c) {
  switch (c.phase) {
    case Conn::Phase::kDrain:
      return c.socket.DrainSome() ? Step::kWaiting : Step::kClose;
    case Conn::Phase::kHandshake: {
      const IoWait w = c.socket.AcceptTlsStep(tls_);
      if (w == IoWait::kReadable || w == IoWait::kWritable) {
        c.wait = w;
        return Step::kWaiting;
      }
      if (w != IoWait::kNone) return Step::kClose;  // no or a foreign client certificate
      c.phase = Conn::Phase::kHead;
      return ReadHead(c);  // the request may have come with the handshake's last flight
    }
    case Conn::Phase::kHead:
      return ReadHead(c);
  }
  return Step::kClose;
}

RequestReader::Step RequestReader::ReadHead(Conn& c) {
  char buf[4096];
  for (;;) {
    const Socket::ReadResult r = c.socket.ReadSome(buf, sizeof(buf));
    if (r.wait == IoWait::kReadable || r.wait == IoWait::kWritable) {
      c.wait = r.wait;
      return Step::kWaiting;
    }
    if (r.wait != IoWait::kNone) return Step::kClose;  // closed or failed before a whole request
    const size_t from = c.head.size() < 3 ? 0 : c.head.size() - 3;
    c.head.append(buf, r.bytes);
    const size_t end = c.head.find("\r\n\r\n", from);
    if (end == std::string::npos && c.head.size() <= limits_.max_head_bytes) continue;
    ReadyRequest ready{std::move(c.socket), std::move(c.head), end == std::string::npos,
                       std::move(c.peer)};
    if (end != std::string::npos) ready.head.resize(end);
    on_ready_(std::move(ready));
    return Step::kHandedOff;
  }
}

}  // namespace blkbench
