// HttpGet: a blocking HTTP/1.0 GET over a loopback TCP socket, plain or TLS, for tests and
// tools that read /metrics, the controller's JSON endpoints or Prometheus's HTTP API.
#ifndef BLKBENCH_COMMON_HTTP_HTTP_GET_H_
#define BLKBENCH_COMMON_HTTP_HTTP_GET_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace blkbench {

struct HttpResult {
  int status = 0;                // e.g. 200
  std::string content_type;      // "" when the response has none
  std::string content_encoding;  // as sent, e.g. "gzip"; "" for none
  size_t wire_bytes = 0;         // body bytes received, before any decoding
  std::string body;              // decoded
};

struct HttpGetOptions {
  absl::Duration timeout = absl::Seconds(10);
  bool accept_gzip = false;  // send `Accept-Encoding: gzip` (as Prometheus does)
};

// How the client proves itself. All empty: plain HTTP.
struct HttpClientAuth {
  // HTTPS: verify the server against this CA (its certificate must name 127.0.0.1).
  std::string ca_file;
  std::string cert_file;  // with key_file: present this client certificate
  std::string key_file;
  std::string bearer_token;  // send `Authorization: Bearer <token>`
};

// GET http://127.0.0.1:<port><target> (target = path plus optional "?query", already
// URL-encoded). Unavailable when connecting, sending or receiving fails or the timeout
// passes (a connection reset included); Unauthenticated when the TLS handshake fails; DataLoss for
// a response that is not HTTP, whose body is shorter or longer than its Content-Length, or whose
// gzip body does not decode.
absl::StatusOr<HttpResult> HttpGet(int port, const std::string& target,
                                   const HttpGetOptions& options,
                                   const HttpClientAuth& auth = HttpClientAuth());
inline absl::StatusOr<HttpResult> HttpGet(int port, const std::string& target,
                                          absl::Duration timeout = absl::Seconds(10)) {
  return HttpGet(port, target, HttpGetOptions{.timeout = timeout});
}

// Percent-encodes everything but RFC 3986 unreserved characters.
std::string UrlEncode(const std::string& s);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_HTTP_HTTP_GET_H_
