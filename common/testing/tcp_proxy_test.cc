// Tests of TcpProxy over real loopback sockets: an echo server (or a bare listener the test
// accepts from itself) behind the proxy, and clients in the test. Every wait is a poll()
// on an event; the only timed waits are the short "nothing arrives" checks.
#include "common/testing/tcp_proxy.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gtest/gtest.h"

namespace blkbench::testing {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kWaitMs = 10'000;  // for anything expected to happen: generous for ASan
constexpr int kQuietMs = 300;    // for negative checks only: "nothing arrives within"
constexpr size_t kKiB = 1024;

// An owned file descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// A blocking listener on 127.0.0.1 and an ephemeral port, stored in *port.
absl::StatusOr<Fd> Listen(int* port) {
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof(addr);
  if (fd.get() < 0 || bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) < 0 ||
      listen(fd.get(), 16) < 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) < 0) {
    return absl::ErrnoToStatus(errno, "listen on 127.0.0.1:0");
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

absl::StatusOr<Fd> Connect(int port) {
  Fd fd(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  const sockaddr_in addr = Loopback(port);
  if (fd.get() < 0 || connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr))) {
    return absl::ErrnoToStatus(errno, absl::StrCat("connect to 127.0.0.1:", port));
  }
  return fd;
}

// Whether any of `fds` becomes readable (data, EOF or error) within `ms`.
bool ReadableWithin(std::initializer_list<int> fds, int ms) {
  std::vector<pollfd> polled;
  for (int fd : fds) polled.push_back(pollfd{fd, POLLIN, 0});
  return poll(polled.data(), polled.size(), ms) > 0;
}

int RemainingMs(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max<int>(0, static_cast<int>(left.count()));
}

absl::StatusOr<Fd> AcceptWithin(int listen_fd, int ms) {
  if (!ReadableWithin({listen_fd}, ms)) return absl::DeadlineExceededError("no connection");
  Fd fd(accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
  if (fd.get() < 0) return absl::ErrnoToStatus(errno, "accept");
  return fd;
}

absl::Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, "send");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

// One recv() of whatever has arrived, once something has within `ms` (else
// DeadlineExceeded); DataLoss at EOF.
absl::StatusOr<std::string> ReadSome(int fd, int ms, size_t max = 64 * kKiB) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  std::string got(max, '\0');
  while (ReadableWithin({fd}, RemainingMs(deadline))) {
    const ssize_t r = recv(fd, got.data(), got.size(), 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return absl::ErrnoToStatus(errno, "recv");
    if (r == 0) return absl::DataLossError("EOF");
    got.resize(static_cast<size_t>(r));
    return got;
  }
  return absl::DeadlineExceededError("nothing to read");
}

// Exactly `n` bytes, within `ms` in all.
absl::StatusOr<std::string> Read(int fd, size_t n, int ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  std::string got;
  while (got.size() < n) {
    absl::StatusOr<std::string> some =
        ReadSome(fd, RemainingMs(deadline), std::min<size_t>(64 * kKiB, n - got.size()));
    if (!some.ok()) {
      return absl::Status(some.status().code(),
                          absl::StrCat(some.status().message(), " after ", got.size(), " bytes"));
    }
    got += *some;
  }
  return got;
}

// Everything until EOF, within `ms` in all.
absl::StatusOr<std::string> ReadToEof(int fd, int ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  std::string got;
  while (true) {
    absl::StatusOr<std::string> some = ReadSome(fd, RemainingMs(deadline));
    if (absl::IsDataLoss(some.status())) return got;
    if (!some.ok()) return some.status();
    got += *some;
  }
}

// Discards data until the connection ends; returns the errno it ended with (0 for EOF), or
// -1 when it is still open after `ms`.
int WaitForEnd(int fd, int ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(ms);
  char chunk[4096];
  while (ReadableWithin({fd}, RemainingMs(deadline))) {
    const ssize_t r = recv(fd, chunk, sizeof(chunk), 0);
    if (r == 0) return 0;
    if (r < 0 && errno != EINTR) return errno;
  }
  return -1;
}

// Byte `i` of a test stream: not periodic at any buffer size the proxy might use.
char PatternByte(uint64_t i) { return static_cast<char>((i * 2654435761u) >> 13); }
std::string Pattern(size_t n, uint64_t offset = 0) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = PatternByte(offset + i);
  return s;
}

// Writes `payload` on another thread while reading as many bytes back on this one.
absl::StatusOr<std::string> RoundTrip(int fd, const std::string& payload, int ms = kWaitMs) {
  absl::Status written;
  std::thread writer([&] { written = WriteAll(fd, payload); });
  absl::StatusOr<std::string> echoed = Read(fd, payload.size(), ms);
  if (!echoed.ok()) shutdown(fd, SHUT_RDWR);  // unblocks the writer
  writer.join();
  if (!written.ok()) return written;
  return echoed;
}

// Echoes each connection on its own thread until EOF, then shuts its side too.
class EchoServer {
 public:
  static absl::StatusOr<std::unique_ptr<EchoServer>> Start() {
    int port = 0;
    absl::StatusOr<Fd> listener = Listen(&port);
    if (!listener.ok()) return listener.status();
    auto server = std::unique_ptr<EchoServer>(new EchoServer(std::move(*listener), port));
    server->acceptor_ = std::thread(&EchoServer::AcceptLoop, server.get());
    return server;
  }
  ~EchoServer() {
    shutdown(listener_.get(), SHUT_RDWR);  // a blocked accept() returns EINVAL
    acceptor_.join();
    absl::MutexLock lock(&mu_);
    for (const Fd& fd : connections_) shutdown(fd.get(), SHUT_RDWR);  // unblocks each echo
    for (std::thread& t : threads_) t.join();
  }
  int port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  EchoServer(Fd listener, int port) : listener_(std::move(listener)), port_(port) {}
  void AcceptLoop() {
    while (true) {
      const int fd = accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0 && errno == EINTR) continue;
      if (fd < 0) return;
      accepted_.fetch_add(1);
      absl::MutexLock lock(&mu_);
      connections_.emplace_back(fd);
      threads_.emplace_back([fd] {
        char chunk[64 * kKiB];
        ssize_t n;
        while ((n = recv(fd, chunk, sizeof(chunk), 0)) > 0 || (n < 0 && errno == EINTR)) {
          if (n > 0 && !WriteAll(fd, std::string_view(chunk, static_cast<size_t>(n))).ok()) return;
        }
        if (n == 0) shutdown(fd, SHUT_WR);
      });
    }
  }

  Fd listener_;
  const int port_;
  std::atomic<int> accepted_{0};
  std::thread acceptor_;
  absl::Mutex mu_;
  std::vector<Fd> connections_ ABSL_GUARDED_BY(mu_);  // closed after their threads end
  std::vector<std::thread> threads_ ABSL_GUARDED_BY(mu_);
};

class TcpProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<EchoServer>> echo = EchoServer::Start();
    ASSERT_TRUE(echo.ok()) << echo.status();
    echo_ = std::move(*echo);
    absl::StatusOr<std::unique_ptr<TcpProxy>> proxy = TcpProxy::Start(echo_->port());
    ASSERT_TRUE(proxy.ok()) << proxy.status();
    proxy_ = std::move(*proxy);
  }

  std::unique_ptr<EchoServer> echo_;
  std::unique_ptr<TcpProxy> proxy_;  // destroyed first: closing its sockets ends the echoes
};

TEST_F(TcpProxyTest, ForwardsAMegabyteIntactAndPassesTheFinBothWays) {
  absl::StatusOr<Fd> client = Connect(proxy_->port());
  ASSERT_TRUE(client.ok()) << client.status();
  const std::string payload = Pattern(1 << 20);
  absl::StatusOr<std::string> echoed = RoundTrip(client->get(), payload);
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_TRUE(*echoed == payload) << "the echoed megabyte differs";

  // Our FIN reaches the echo server, whose FIN comes back: EOF, not a reset.
  ASSERT_EQ(shutdown(client->get(), SHUT_WR), 0);
  absl::StatusOr<std::string> rest = ReadToEof(client->get(), kWaitMs);
  ASSERT_TRUE(rest.ok()) << rest.status();
  EXPECT_EQ(*rest, "");
  EXPECT_EQ(proxy_->connections(), 1u);
  EXPECT_EQ(proxy_->bytes_forwarded(), 2 * payload.size());
}

TEST(TcpProxyHalfCloseTest, DataStillFlowsTowardsTheSideThatSentFin) {
  int target_port = 0;
  absl::StatusOr<Fd> listener = Listen(&target_port);
  ASSERT_TRUE(listener.ok()) << listener.status();
  absl::StatusOr<std::unique_ptr<TcpProxy>> proxy = TcpProxy::Start(target_port);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  absl::StatusOr<Fd> client = Connect((*proxy)->port());
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Fd> server = AcceptWithin(listener->get(), kWaitMs);
  ASSERT_TRUE(server.ok()) << server.status();

  ASSERT_TRUE(WriteAll(client->get(), "request").ok());
  ASSERT_EQ(shutdown(client->get(), SHUT_WR), 0);
  absl::StatusOr<std::string> request = ReadToEof(server->get(), kWaitMs);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(*request, "request");

  // The reply is written only after the server has seen the client's FIN.
  ASSERT_TRUE(WriteAll(server->get(), "reply after your FIN").ok());
  ASSERT_EQ(shutdown(server->get(), SHUT_WR), 0);
  absl::StatusOr<std::string> reply = ReadToEof(client->get(), kWaitMs);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_EQ(*reply, "reply after your FIN");
}

TEST_F(TcpProxyTest, StallHoldsBytesAndNewConnectionsUntilResume) {
  absl::StatusOr<Fd> client = Connect(proxy_->port());
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<std::string> warm = RoundTrip(client->get(), "warm-up");
  ASSERT_TRUE(warm.ok()) << warm.status();

  proxy_->Stall();
  ASSERT_TRUE(WriteAll(client->get(), "held").ok());
  absl::StatusOr<Fd> late = Connect(proxy_->port());  // accepted, not forwarded
  ASSERT_TRUE(late.ok()) << late.status();
  ASSERT_TRUE(WriteAll(late->get(), "late").ok());
  EXPECT_FALSE(ReadableWithin({client->get(), late->get()}, kQuietMs));
  EXPECT_EQ(echo_->accepted(), 1);

  proxy_->Resume();
  absl::StatusOr<std::string> held = Read(client->get(), 4, kWaitMs);
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_EQ(*held, "held");
  absl::StatusOr<std::string> late_echo = Read(late->get(), 4, kWaitMs);
  ASSERT_TRUE(late_echo.ok()) << late_echo.status();
  EXPECT_EQ(*late_echo, "late");
  EXPECT_EQ(echo_->accepted(), 2);
}

TEST_F(TcpProxyTest, StallMidTransferLosesNothing) {
  absl::StatusOr<Fd> client = Connect(proxy_->port());
  ASSERT_TRUE(client.ok()) << client.status();
  const std::string payload = Pattern(4 << 20);
  absl::Status written;
  std::thread writer([&] { written = WriteAll(client->get(), payload); });
  absl::StatusOr<std::string> first = Read(client->get(), 256 * kKiB, kWaitMs);
  ASSERT_TRUE(first.ok()) << first.status();

  proxy_->Stall();
  std::string echoed = *first;
  // Take what was already past the proxy, until nothing more comes.
  for (absl::StatusOr<std::string> more = ReadSome(client->get(), kQuietMs); more.ok();
       more = ReadSome(client->get(), kQuietMs)) {
    echoed += *more;
  }
  proxy_->Resume();
  absl::StatusOr<std::string> rest = Read(client->get(), payload.size() - echoed.size(), kWaitMs);
  if (!rest.ok()) shutdown(client->get(), SHUT_RDWR);
  writer.join();
  ASSERT_TRUE(written.ok()) << written;
  ASSERT_TRUE(rest.ok()) << rest.status();
  echoed += *rest;
  EXPECT_TRUE(echoed == payload) << "the echoed bytes differ";
}

TEST(TcpProxyResetTest, ResetAllSendsRstToBothSidesAndLaterConnectionsWork) {
  int target_port = 0;
  absl::StatusOr<Fd> listener = Listen(&target_port);
  ASSERT_TRUE(listener.ok()) << listener.status();
  absl::StatusOr<std::unique_ptr<TcpProxy>> proxy = TcpProxy::Start(target_port);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  absl::StatusOr<Fd> client = Connect((*proxy)->port());
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Fd> server = AcceptWithin(listener->get(), kWaitMs);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE(WriteAll(client->get(), "x").ok());
  ASSERT_TRUE(Read(server->get(), 1, kWaitMs).ok());

  (*proxy)->ResetAll();
  EXPECT_EQ(WaitForEnd(client->get(), kWaitMs), ECONNRESET);
  EXPECT_EQ(WaitForEnd(server->get(), kWaitMs), ECONNRESET);

  absl::StatusOr<Fd> client2 = Connect((*proxy)->port());
  ASSERT_TRUE(client2.ok()) << client2.status();
  absl::StatusOr<Fd> server2 = AcceptWithin(listener->get(), kWaitMs);
  ASSERT_TRUE(server2.ok()) << server2.status();
  ASSERT_TRUE(WriteAll(client2->get(), "y").ok());
  absl::StatusOr<std::string> y = Read(server2->get(), 1, kWaitMs);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(*y, "y");
}

TEST_F(TcpProxyTest, RefuseClosesNewConnectionsAtOnceAndSparesExistingOnes) {
  absl::StatusOr<Fd> existing = Connect(proxy_->port());
  ASSERT_TRUE(existing.ok()) << existing.status();
  ASSERT_TRUE(RoundTrip(existing->get(), "before").ok());

  proxy_->SetRefuse(true);
  absl::StatusOr<Fd> refused = Connect(proxy_->port());  // the kernel completes the handshake
  ASSERT_TRUE(refused.ok()) << refused.status();
  const int end = WaitForEnd(refused->get(), kWaitMs);
  EXPECT_TRUE(end == 0 || end == ECONNRESET) << "ended with " << end;
  absl::StatusOr<std::string> during = RoundTrip(existing->get(), "during");
  ASSERT_TRUE(during.ok()) << during.status();
  EXPECT_EQ(*during, "during");
  EXPECT_EQ(proxy_->connections(), 2u);
  EXPECT_EQ(echo_->accepted(), 1);

  proxy_->SetRefuse(false);
  absl::StatusOr<Fd> after = Connect(proxy_->port());
  ASSERT_TRUE(after.ok()) << after.status();
  absl::StatusOr<std::string> echoed = RoundTrip(after->get(), "after");
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_EQ(*echoed, "after");
}

TEST_F(TcpProxyTest, ThrottleHoldsTheRateDown) {
  proxy_->Throttle(64 * kKiB);
  absl::StatusOr<Fd> client = Connect(proxy_->port());
  ASSERT_TRUE(client.ok()) << client.status();
  const std::string payload = Pattern(128 * kKiB);
  const auto start = Clock::now();
  absl::StatusOr<std::string> echoed = RoundTrip(client->get(), payload, 3 * kWaitMs);
  const auto elapsed = Clock::now() - start;
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_TRUE(*echoed == payload) << "the echoed bytes differ";
  // 128 KiB at 64 KiB/s, less the 6.4 KiB burst: about 1.9 s; a lower bound only.
  EXPECT_GE(elapsed, std::chrono::milliseconds(1500));
}

TEST(TcpProxyBackPressureTest, ASilentTargetStopsTheSenderAndLosesNothing) {
  int target_port = 0;
  absl::StatusOr<Fd> listener = Listen(&target_port);
  ASSERT_TRUE(listener.ok()) << listener.status();
  absl::StatusOr<std::unique_ptr<TcpProxy>> proxy = TcpProxy::Start(target_port);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  absl::StatusOr<Fd> client = Connect((*proxy)->port());
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<Fd> server = AcceptWithin(listener->get(), kWaitMs);
  ASSERT_TRUE(server.ok()) << server.status();

  // The server reads nothing: the client's writes must stop once the kernel buffers and
  // the proxy's bounded buffer are full.
  constexpr uint64_t kLimit = 64 << 20;
  uint64_t sent = 0;
  pollfd writable{client->get(), POLLOUT, 0};
  while (sent < kLimit) {
    const std::string chunk = Pattern(64 * kKiB, sent);
    const ssize_t n = send(client->get(), chunk.data(), chunk.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<uint64_t>(n);
      continue;
    }
    ASSERT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK) << strerror(errno);
    if (poll(&writable, 1, kQuietMs) == 0) break;
  }
  EXPECT_LT(sent, kLimit);

  absl::StatusOr<std::string> received = Read(server->get(), sent, kWaitMs);
  ASSERT_TRUE(received.ok()) << received.status();
  EXPECT_TRUE(*received == Pattern(sent)) << "the " << sent << " bytes differ";
}

TEST(TcpProxyStartTest, AClientOfAnUnreachableTargetIsClosed) {
  int dead_port = 0;
  {
    absl::StatusOr<Fd> listener = Listen(&dead_port);  // closed at once: nothing listens
    ASSERT_TRUE(listener.ok()) << listener.status();
  }
  absl::StatusOr<std::unique_ptr<TcpProxy>> proxy = TcpProxy::Start(dead_port);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  absl::StatusOr<Fd> client = Connect((*proxy)->port());
  ASSERT_TRUE(client.ok()) << client.status();
  const int end = WaitForEnd(client->get(), kWaitMs);
  EXPECT_TRUE(end == 0 || end == ECONNRESET) << "ended with " << end;
}

TEST(TcpProxyStartTest, RejectsPortsOutOfRange) {
  EXPECT_EQ(TcpProxy::Start(0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TcpProxy::Start(65536).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace blkbench::testing
