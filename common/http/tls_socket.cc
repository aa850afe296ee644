// Plain and TLS sockets; see tls_socket.h.
#include "common/http/tls_socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <utility>

#include "absl/strings/str_cat.h"

namespace blkbench {
namespace {

std::string OpenSslReason() {
  const unsigned long e = ERR_get_error();  // NOLINT(runtime/int): OpenSSL's type
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

// Blocks SIGPIPE in this thread while in scope, and consumes one that a write raised, so
// SSL_write (which uses write(2), not send(MSG_NOSIGNAL)) cannot kill the process.
class NoSigpipe {
 public:
  NoSigpipe() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~NoSigpipe() {
    sigset_t pending;
    sigpending(&pending);
    if (!was_pending_ && sigismember(&pending, SIGPIPE) == 1) {
      const timespec zero{0, 0};
      sigtimedwait(&pipe_, nullptr, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;

 private:
  sigset_t pipe_;
  sigset_t old_;
  bool was_pending_ = false;
};

absl::StatusOr<SslContext> NewContext(const SSL_METHOD* method) {
  SslContext ctx(SSL_CTX_new(method));
  if (!ctx) return absl::InternalError(absl::StrCat("TLS: ", OpenSslReason()));
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  return ctx;
}

absl::Status LoadCertAndKey(SSL_CTX* ctx, const std::string& cert_file,
                            const std::string& key_file) {
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("TLS: cannot use certificate ", cert_file, ": ", OpenSslReason()));
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("TLS: cannot use key ", key_file, ": ", OpenSslReason()));
  }
  return absl::OkStatus();
}

absl::Status LoadCa(SSL_CTX* ctx, const std::string& ca_file) {
  if (SSL_CTX_load_verify_locations(ctx, ca_file.c_str(), nullptr) != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("TLS: cannot use CA ", ca_file, ": ", OpenSslReason()));
  }
  return absl::OkStatus();
}

// What a non-blocking OpenSSL call that returned `rc` waits for.
IoWait SslWait(SSL* ssl, int rc) {
  const int err = SSL_get_error(ssl, rc);
  ERR_clear_error();
  switch (err) {
    case SSL_ERROR_WANT_READ:
      return IoWait::kReadable;
    case SSL_ERROR_WANT_WRITE:
      return IoWait::kWritable;
    case SSL_ERROR_ZERO_RETURN:
      return IoWait::kClosed;
    default:
      return IoWait::kFailed;
  }
}

// Waits until `fd` is ready for `wait`, polling for the time left until `deadline`; false
// when it passes or poll fails. POLLERR and POLLHUP count as ready: the next call on the
// socket reports them.
bool PollUntil(int fd, IoWait wait, absl::Time deadline) {
  for (;;) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd p{fd, static_cast<short>(wait == IoWait::kReadable ? POLLIN : POLLOUT), 0};
    const int64_t ms = std::min<int64_t>(
        absl::ToInt64Milliseconds(absl::Ceil(left, absl::Milliseconds(1))), INT_MAX);
    const int rc = poll(&p, 1, static_cast<int>(ms));
    if (rc > 0) return true;
    if (rc < 0 && errno != EINTR) return false;
  }
}

}  // namespace

void SslCtxFree::operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }

absl::StatusOr<SslContext> NewServerTlsContext(const std::string& cert_file,
                                               const std::string& key_file,
                                               const std::string& client_ca_file) {
  absl::StatusOr<SslContext> ctx = NewContext(TLS_server_method());
  if (!ctx.ok()) return ctx.status();
  if (absl::Status s = LoadCertAndKey(ctx->get(), cert_file, key_file); !s.ok()) return s;
  if (!client_ca_file.empty()) {
    if (absl::Status s = LoadCa(ctx->get(), client_ca_file); !s.ok()) return s;
    SSL_CTX_set_verify(ctx->get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return ctx;
}

absl::StatusOr<SslContext> NewClientTlsContext(const std::string& ca_file,
                                               const std::string& cert_file,
                                               const std::string& key_file) {
  absl::StatusOr<SslContext> ctx = NewContext(TLS_client_method());
  if (!ctx.ok()) return ctx.status();
  if (absl::Status s = LoadCa(ctx->get(), ca_file); !s.ok()) return s;
  SSL_CTX_set_verify(ctx->get(), SSL_VERIFY_PEER, nullptr);
  if (!cert_file.empty()) {
    if (absl::Status s = LoadCertAndKey(ctx->get(), cert_file, key_file); !s.ok()) return s;
  }
  return ctx;
}

Socket::Socket(Socket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), ssl_(std::exchange(other.ssl_, nullptr)) {}

Socket::~Socket() {
  if (ssl_ != nullptr) SSL_free(ssl_);
  if (fd_ >= 0) close(fd_);
}

void Socket::SetTimeouts(absl::Duration timeout) {
  const timeval tv = absl::ToTimeval(timeout);
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

absl::Status Socket::AcceptTls(SSL_CTX* ctx) {
  ssl_ = SSL_new(ctx);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    return absl::InternalError(absl::StrCat("TLS: ", OpenSslReason()));
  }
  NoSigpipe guard;
  if (SSL_accept(ssl_) != 1) {
    return absl::UnauthenticatedError(absl::StrCat("TLS handshake: ", OpenSslReason()));
  }
  return absl::OkStatus();
}

absl::Status Socket::ConnectTls(SSL_CTX* ctx, const std::string& host) {
  ssl_ = SSL_new(ctx);
  if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
    return absl::InternalError(absl::StrCat("TLS: ", OpenSslReason()));
  }
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl_);
  in6_addr ip;
  const bool is_ip =
      inet_pton(AF_INET, host.c_str(), &ip) == 1 || inet_pton(AF_INET6, host.c_str(), &ip) == 1;
  if (is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str()) != 1
            : X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0) != 1) {
    return absl::InternalError(absl::StrCat("TLS: bad host ", host));
  }
  if (!is_ip) SSL_set_tlsext_host_name(ssl_, host.c_str());
  NoSigpipe guard;
  if (SSL_connect(ssl_) != 1) {
    return absl::UnauthenticatedError(
        absl::StrCat("TLS handshake with ", host, ": ", OpenSslReason()));
  }
  return absl::OkStatus();
}

ssize_t Socket::Read(char* buf, size_t n) {
  if (ssl_ == nullptr) {
    for (;;) {
      const ssize_t got = recv(fd_, buf, n, 0);
      if (got < 0 && errno == EINTR) continue;
      return got < 0 ? -1 : got;
    }
  }
  size_t got = 0;
  // A read can write too (an alert, a TLS 1.3 key update or session ticket): to a peer
  // that is gone, that raises SIGPIPE, which killed a test process scraped by a real
  // Prometheus on a loaded machine.
  NoSigpipe guard;
  const int rc = SSL_read_ex(ssl_, buf, n, &got);
  if (rc == 1) return static_cast<ssize_t>(got);
  const int err = SSL_get_error(ssl_, rc);
  ERR_clear_error();
  return err == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

bool Socket::WriteAll(absl::string_view data) {
  if (ssl_ == nullptr) {
    for (size_t sent = 0; sent < data.size();) {
      const ssize_t n = send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }
  NoSigpipe guard;
  for (size_t sent = 0; sent < data.size();) {
    size_t n = 0;
    if (SSL_write_ex(ssl_, data.data() + sent, data.size() - sent, &n) != 1) {
      ERR_clear_error();
      return false;
    }
    sent += n;
  }
  return true;
}

bool Socket::SetNonBlocking() {
  const int flags = fcntl(fd_, F_GETFL);
  return flags >= 0 && fcntl(fd_, F_SETFL, flags | O_NONBLOCK) == 0;
}

IoWait Socket::AcceptTlsStep(SSL_CTX* ctx) {
  if (ssl_ == nullptr) {
    ssl_ = SSL_new(ctx);
    if (ssl_ == nullptr || SSL_set_fd(ssl_, fd_) != 1) {
      ERR_clear_error();
      return IoWait::kFailed;
    }
  }
  NoSigpipe guard;
  const int rc = SSL_accept(ssl_);
  if (rc == 1) return IoWait::kNone;
  const IoWait wait = SslWait(ssl_, rc);
  return wait == IoWait::kClosed ? IoWait::kFailed : wait;  // a close mid-handshake is a failure
}

Socket::ReadResult Socket::ReadSome(char* buf, size_t n) {
  if (ssl_ == nullptr) {
    for (;;) {
      const ssize_t got = recv(fd_, buf, n, 0);
      if (got > 0) return {IoWait::kNone, static_cast<size_t>(got)};
      if (got == 0) return {IoWait::kClosed};
      if (errno == EINTR) continue;
      return {errno == EAGAIN || errno == EWOULDBLOCK ? IoWait::kReadable : IoWait::kFailed};
    }
  }
  NoSigpipe guard;  // a read can write too (see Read)
  size_t got = 0;
  const int rc = SSL_read_ex(ssl_, buf, n, &got);
  if (rc == 1) return {IoWait::kNone, got};
  return {SslWait(ssl_, rc)};
}

bool Socket::WriteAllBy(absl::string_view data, absl::Time deadline) {
  NoSigpipe guard;
  for (size_t sent = 0; sent < data.size();) {
    IoWait wait = IoWait::kWritable;
    if (ssl_ == nullptr) {
      const ssize_t n = send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) return false;
    } else {
      // After a WANT_*, OpenSSL needs the same arguments again: `sent` has not moved.
      size_t n = 0;
      const int rc = SSL_write_ex(ssl_, data.data() + sent, data.size() - sent, &n);
      if (rc == 1) {
        sent += n;
        continue;
      }
      wait = SslWait(ssl_, rc);
      if (wait != IoWait::kReadable && wait != IoWait::kWritable) return false;
    }
    if (!PollUntil(fd_, wait, deadline)) return false;
  }
  return true;
}

void Socket::BeginClose() {
  if (fd_ < 0) return;
  if (ssl_ != nullptr) {
    NoSigpipe guard;
    SSL_shutdown(ssl_);  // our close_notify; the peer's is not awaited
    ERR_clear_error();
  }
  shutdown(fd_, SHUT_WR);
}

bool Socket::DrainSome() {
  char sink[4096];
  // Bounded, so a peer that floods cannot keep the caller in here; it comes back on the
  // next POLLIN (and its deadline still ends it).
  for (int i = 0; i < 16; ++i) {
    const ssize_t n = recv(fd_, sink, sizeof(sink), MSG_DONTWAIT);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  return true;
}

void Socket::CloseGracefully(absl::Duration drain) {
  if (fd_ < 0) return;
  BeginClose();
  SetTimeouts(drain);
  char sink[4096];
  const absl::Time deadline = absl::Now() + drain;
  while (absl::Now() < deadline) {
    const ssize_t n = recv(fd_, sink, sizeof(sink), 0);
    if (n > 0) continue;
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  if (ssl_ != nullptr) SSL_free(std::exchange(ssl_, nullptr));
  close(std::exchange(fd_, -1));
}

std::string Socket::PeerCertificatePem() const {
  if (ssl_ == nullptr) return "";
  X509* cert = SSL_get1_peer_certificate(ssl_);
  if (cert == nullptr) return "";
  BIO* bio = BIO_new(BIO_s_mem());
  std::string out;
  if (PEM_write_bio_X509(bio, cert) == 1) {
    char* data = nullptr;
    const long len = BIO_get_mem_data(bio, &data);  // NOLINT(runtime/int)
    out.assign(data, static_cast<size_t>(len));
  }
  BIO_free(bio);
  X509_free(cert);
  return out;
}

}  // namespace blkbench
