// A connected socket that is plain TCP or TLS (OpenSSL), with the blocking read, write and
// graceful close the HTTP client needs, the non-blocking steps the server's event loop
// drives (common/http/request_reader.h), and the TLS contexts they use:
// a server that may require client certificates from a CA, a client that verifies the
// server against a CA and may present its own certificate.
#ifndef BLKBENCH_COMMON_HTTP_TLS_SOCKET_H_
#define BLKBENCH_COMMON_HTTP_TLS_SOCKET_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

using SSL_CTX = struct ssl_ctx_st;  // OpenSSL's own typedefs, without its headers
using SSL = struct ssl_st;

namespace blkbench {

struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const;
};
using SslContext = std::unique_ptr<SSL_CTX, SslCtxFree>;

// A TLS server context serving `cert_file` (PEM chain) with `key_file`; with a
// `client_ca_file`, clients must present a certificate that verifies against it.
// TLS 1.2 at least. Errors name the file OpenSSL refused and why.
absl::StatusOr<SslContext> NewServerTlsContext(const std::string& cert_file,
                                               const std::string& key_file,
                                               const std::string& client_ca_file);

// A TLS client context that verifies the server against `ca_file` and, when `cert_file`
// is given, presents it (with `key_file`).
absl::StatusOr<SslContext> NewClientTlsContext(const std::string& ca_file,
                                               const std::string& cert_file,
                                               const std::string& key_file);

// What a non-blocking step needs before it can go on.
enum class IoWait {
  kNone,      // it finished (or, for ReadSome, returned bytes)
  kReadable,  // poll for POLLIN and call it again
  kWritable,  // poll for POLLOUT and call it again (TLS may write while reading)
  kClosed,    // the peer closed the connection cleanly
  kFailed,    // an error: the connection is of no further use
};

// Owns a connected socket and, for TLS, its session. On a blocking socket, reads and
// writes block, bounded by the socket's SO_RCVTIMEO / SO_SNDTIMEO; after
// SetNonBlocking() only the non-blocking steps below are used. Reads and writes never
// raise SIGPIPE. Move-only.
class Socket {
 public:
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket&& other) noexcept;
  Socket& operator=(Socket&&) = delete;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket();  // closes at once (no graceful shutdown)

  // Sets both socket timeouts.
  void SetTimeouts(absl::Duration timeout);
  // Server side of the TLS handshake on this socket. Unauthenticated with OpenSSL's
  // reason (a client without an accepted certificate fails here).
  absl::Status AcceptTls(SSL_CTX* ctx);
  // Client side; the server's certificate must also name `host` (a DNS name or an IP).
  absl::Status ConnectTls(SSL_CTX* ctx, const std::string& host);

  // Up to `n` bytes: > 0 read, 0 at the end of the stream, -1 on an error or timeout.
  ssize_t Read(char* buf, size_t n);
  // All of `data`, or false (the peer went away or stopped reading).
  bool WriteAll(absl::string_view data);
  // Ends the connection so the peer reads every byte written: TLS close_notify, then
  // shutdown(SHUT_WR), then what the peer still sends is read and dropped until it closes
  // or `drain` passes (closing with unread input would send a RST, and the kernel would
  // discard what the peer had not read yet), then close.
  void CloseGracefully(absl::Duration drain);

  // --- Non-blocking steps, for a server that serves many slow peers from one thread.
  // False if fcntl fails.
  bool SetNonBlocking();
  // Advances the server side of the TLS handshake as far as the peer's bytes allow:
  // kNone when done, kReadable/kWritable to wait, kFailed for a refused handshake.
  IoWait AcceptTlsStep(SSL_CTX* ctx);
  // Reads what has arrived, up to `n` bytes, into `buf`: {kNone, bytes > 0}, or what to
  // wait for, or kClosed / kFailed.
  struct ReadResult {
    IoWait wait;
    size_t bytes = 0;
  };
  ReadResult ReadSome(char* buf, size_t n);
  // All of `data`, polling for the time left until `deadline`; false if the peer went
  // away or did not take it all in time.
  bool WriteAllBy(absl::string_view data, absl::Time deadline);
  // The first half of CloseGracefully: TLS close_notify (best effort: never waits) and
  // shutdown(SHUT_WR). The caller then drops input with DrainSome until it returns
  // false or its patience ends, and destroys the Socket.
  void BeginClose();
  // Reads and drops what has arrived; false once the peer closed or the socket failed.
  bool DrainSome();

  int fd() const { return fd_; }
  bool tls() const { return ssl_ != nullptr; }
  // The verified peer certificate as PEM ("" if none).
  std::string PeerCertificatePem() const;

 private:
  int fd_;
  SSL* ssl_ = nullptr;
};

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_HTTP_TLS_SOCKET_H_
