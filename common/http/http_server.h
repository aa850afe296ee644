// HttpServer: a small HTTP/1.1 server (civetweb, the library prometheus-cpp-pull links)
// for /metrics and the controller's JSON endpoints. Replaces prometheus::Exposer, which
// cannot serve anything but metrics and adds unprefixed exposer_* self-metrics.
#ifndef BLKBENCH_COMMON_HTTP_HTTP_SERVER_H_
#define BLKBENCH_COMMON_HTTP_HTTP_SERVER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

class CivetServer;
class CivetHandler;

namespace blkbench {

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

// Thread-safe after construction. GET only; other methods get 405. Unknown paths 404.
class HttpServer {
 public:
  // Serves `handlers` (exact path → handler) on `listen` ("host:port"; port 0 picks a
  // free one). Unavailable when the address cannot be bound.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(
      const std::string& listen, std::map<std::string, HttpHandler> handlers, int threads = 2);
  ~HttpServer();  // stops serving; in-flight requests finish first

  // Adds a handler for `path` while serving (a path must be added only once).
  void Handle(const std::string& path, HttpHandler handler);

  int port() const { return port_; }
  // "host:port" with the port actually bound (the host as given to Start).
  std::string address() const { return address_; }

 private:
  HttpServer() = default;
  std::unique_ptr<CivetServer> server_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<CivetHandler>> handlers_ ABSL_GUARDED_BY(mu_);
  int port_ = 0;
  std::string address_;
};

// Splits "a=1&b=x%20y" into {a: "1", b: "x y"} ('+' is a space).
std::map<std::string, std::string> ParseQueryString(const std::string& query);

// `s` as a JSON string literal, quotes included.
std::string JsonQuote(const std::string& s);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_HTTP_HTTP_SERVER_H_
