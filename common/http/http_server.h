// HttpServer: a small HTTP/1.1 GET server for /metrics and the controller's JSON
// endpoints, over plain TCP or TLS (OpenSSL), optionally requiring client certificates
// from the lab CA and/or a bearer token. One request per connection (`Connection:
// close`, which every scraper handles). Written here rather than on civetweb because
// Debian 12's civetweb loads OpenSSL 1.1 symbols at run time and crashes on the first
// TLS connection with OpenSSL 3.
//
// Why this shape: anyone who can reach the port can open connections and send nothing,
// or a byte at a time, before any certificate or token is checked. So no worker ever
// waits on a peer's request: one I/O thread (RequestReader) runs the TLS handshake and
// reads the request head of every connection at once with poll(2) and non-blocking
// sockets, under one deadline for both (HttpLimits::request_deadline) and the connection
// caps, and hands whole requests to the workers, which only run handlers and write
// responses. A thread per connection would need as many threads as the caps allow
// connections; libmicrohttpd (Debian's) speaks TLS through GnuTLS only, and its
// connection timeout is an idle timeout that a byte every few seconds resets.
#ifndef BLKBENCH_COMMON_HTTP_HTTP_SERVER_H_
#define BLKBENCH_COMMON_HTTP_HTTP_SERVER_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/http/request_reader.h"
#include "common/http/tls_socket.h"
#include "common/tls/revocation.h"
#include "common/tls/transport.h"

namespace blkbench {

using tls::IsLoopbackAddress;  // common/tls/transport.h

// How a listener proves itself and whom it serves. All empty: plain HTTP to anyone who
// can connect (the loopback default). Checks that are configured must all pass.
struct HttpSecurity {
  std::string cert_file;  // PEM chain; with key_file the listener speaks only HTTPS
  std::string key_file;
  std::string client_ca_file;  // require a client certificate that verifies against it
  std::shared_ptr<tls::RevocationList> revoked;  // and is not on this deny list
  std::string bearer_token;                      // require `Authorization: Bearer <token>`

  bool tls() const { return !cert_file.empty(); }
  // True if clients must prove who they are (certificate or token).
  bool authenticates() const { return !client_ca_file.empty() || !bearer_token.empty(); }
  // "http", "https", "https+client_cert", "https+token", "https+client_cert+token", …
  std::string Describe() const;
};

struct HttpRequest {
  std::string path;                           // e.g. "/sd/agents"
  std::map<std::string, std::string> params;  // decoded query parameters (last one wins)
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Called on one of the server's threads; must be thread-safe and must not block long.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// The Prometheus text exposition content type (version 0.0.4).
inline constexpr char kPrometheusContentType[] = "text/plain; version=0.0.4; charset=utf-8";

// A daemon's HTTP security as its flags or config give it.
struct HttpSecurityFlags {
  std::string listen;         // the HTTP listen address
  std::string tls_dir;        // the lab PKI directory ("" = none)
  std::string stem;           // the daemon's certificate in it: "controller", "agent-<id>"
  bool tls = false;           // serve HTTPS with <tls_dir>/<stem>.pem
  bool client_certs = false;  // require client certificates from <tls_dir>/ca.pem
  std::string token_file;     // require the bearer token in this file ("" = none)
  bool insecure = false;      // allow a non-loopback listener without HTTPS + authentication
  std::shared_ptr<tls::RevocationList> revoked;  // null: <tls_dir>/revoked.txt
};

// The HttpSecurity those flags ask for. InvalidArgument naming the flag when TLS or client
// certificates are asked for without a PKI directory, or when a non-loopback listener
// would be plain HTTP or let anyone read (unless `insecure`); FailedPrecondition when
// the token file is missing, empty, or readable by others.
absl::StatusOr<HttpSecurity> HttpSecurityFromFlags(const HttpSecurityFlags& flags);

// Thread-safe after construction. GET only; other methods get 405. Unknown paths 404.
// A failed TLS handshake (no or a foreign client certificate) ends the connection; a
// revoked certificate gets 403, a missing or wrong token 401 with `WWW-Authenticate`.
// A connection whose handshake and request head are not whole within
// `limits.request_deadline` is closed, and so is one accepted beyond the caps.
class HttpServer {
 public:
  // Serves `handlers` (exact path → handler) on `listen` ("host:port", "[v6]:port" or
  // ":port" for every address; port 0 picks a free one) with `threads` workers, which
  // only run handlers and write responses. Unavailable when the address cannot be bound;
  // FailedPrecondition naming the file when a certificate or key cannot be used.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, const std::map<std::string, HttpHandler>& handlers,
      int threads = 2, const HttpSecurity& security = {}, const HttpLimits& limits = {});
  ~HttpServer();  // stops accepting; requests whose head arrived are answered first

  // Adds a handler for `path` while serving (a path must be added only once).
  void Handle(const std::string& path, HttpHandler handler);

  int port() const { return port_; }
  // "host:port" with the port actually bound (the host as given to Start).
  std::string address() const { return address_; }
  // Connections held and refused so far.
  HttpConnectionStats stats() const { return reader_->stats(); }

 private:
  HttpServer(HttpSecurity security, const HttpLimits& limits)
      : security_(std::move(security)), limits_(limits) {}
  void WorkerLoop();
  void Serve(ReadyRequest request);
  HttpResponse Respond(const std::string& head, const Socket& socket, std::string* extra_headers);

  const HttpSecurity security_;
  const HttpLimits limits_;
  SslContext tls_;  // null for plain HTTP
  int listen_fd_ = -1;
  std::unique_ptr<RequestReader> reader_;
  std::vector<std::thread> workers_;
  absl::Mutex mu_;
  std::map<std::string, HttpHandler> handlers_ ABSL_GUARDED_BY(mu_);
  // Whole requests no worker took yet (at most limits_.max_connections).
  std::deque<ReadyRequest> ready_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  int port_ = 0;
  std::string address_;
};

// Splits "a=1&b=x%20y" into {a: "1", b: "x y"} ('+' is a space).
std::map<std::string, std::string> ParseQueryString(const std::string& query);

// A request head's first line as the server reads it.
struct RequestLine {
  std::string method;   // as sent ("GET"; anything else is answered 405)
  HttpRequest request;  // path and decoded query parameters
};
// Parses the request line of `head` (request line and headers, CRLF-separated, without
// the blank line). InvalidArgument unless it is "METHOD /target VERSION". Never throws;
// any bytes are safe (the HTTP request fuzzer holds it to that).
absl::StatusOr<RequestLine> ParseRequestLine(const std::string& head);
// The value of header `name` (lower case) in `head`, whitespace-trimmed; "" if absent.
std::string HeaderValue(const std::string& head, absl::string_view name);

// `s` as a JSON string literal, quotes included.
std::string JsonQuote(const std::string& s);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_HTTP_HTTP_SERVER_H_
