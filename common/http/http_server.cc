// HttpServer over CivetServer; see http_server.h.
#include "common/http/http_server.h"

#include <CivetServer.h>

#include <cstdio>
#include <exception>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "common/http/gzip.h"

namespace blkbench {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string UrlDecode(absl::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out.push_back(' ');
    } else if (s[i] == '%' && i + 2 < s.size() && HexValue(s[i + 1]) >= 0 &&
               HexValue(s[i + 2]) >= 0) {
      out.push_back(static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2])));
      i += 2;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

const char* StatusText(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 503:
      return "Service Unavailable";
    default:
      return status >= 500 ? "Internal Server Error" : "Error";
  }
}

// Bodies below this size go out as they are: gzip's 18-byte frame and the CPU are not
// worth it for a 404 or a small discovery document.
constexpr size_t kGzipMinBytes = 1024;

// Writes the whole response. The connection is closed after it (HTTP/1.1 with
// `Connection: close`, which every scraper handles), and civetweb closes it gracefully:
// shutdown(SHUT_WR) after the last byte, so the client reads every byte the
// Content-Length announced. Never set SO_LINGER to 0 (civetweb's linger_timeout_ms=0):
// close() then sends a RST and the kernel drops whatever of the body the client had not
// yet read — every response larger than the socket buffers (~128 KB on loopback) was cut.
void Send(mg_connection* conn, const HttpResponse& r) {
  const char* accept = mg_get_header(conn, "Accept-Encoding");
  const bool gzip = r.body.size() >= kGzipMinBytes && accept != nullptr && AcceptsGzip(accept);
  const std::string compressed = gzip ? GzipCompress(r.body) : std::string();
  const std::string& body = gzip ? compressed : r.body;
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
            "Vary: Accept-Encoding\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
            r.status, StatusText(r.status), r.content_type.c_str(), body.size(),
            gzip ? "Content-Encoding: gzip\r\n" : "");
  // mg_write blocks until everything is in the socket or the client stops reading for
  // request_timeout_ms; a short write means the client went away, and there is nobody
  // left to tell.
  mg_write(conn, body.data(), body.size());
}

class Handler final : public CivetHandler {
 public:
  Handler(std::string path, HttpHandler fn) : path_(std::move(path)), fn_(std::move(fn)) {}

  bool handleGet(CivetServer*, mg_connection* conn) override {
    const mg_request_info* info = mg_get_request_info(conn);
    // civetweb matches "/metrics" as a prefix ("/metricsx", "/metrics/a"): be exact.
    if (info->local_uri == nullptr || path_ != info->local_uri) {
      Send(conn, {404, "text/plain; charset=utf-8", "not found\n"});
      return true;
    }
    HttpRequest req;
    req.path = path_;
    if (info->query_string != nullptr) req.params = ParseQueryString(info->query_string);
    HttpResponse resp;
    try {
      resp = fn_(req);
    } catch (const std::exception& e) {
      resp = {500, "text/plain; charset=utf-8", absl::StrCat("internal error: ", e.what(), "\n")};
    }
    Send(conn, resp);
    return true;
  }
  bool handlePost(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }
  bool handlePut(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }
  bool handleDelete(CivetServer*, mg_connection* conn) override { return NotAllowed(conn); }

 private:
  static bool NotAllowed(mg_connection* conn) {
    Send(conn, {405, "text/plain; charset=utf-8", "only GET is served here\n"});
    return true;
  }
  const std::string path_;
  const HttpHandler fn_;
};

}  // namespace

std::map<std::string, std::string> ParseQueryString(const std::string& query) {
  std::map<std::string, std::string> out;
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    out[UrlDecode(kv[0])] = kv.size() > 1 ? UrlDecode(kv[1]) : "";
  }
  return out;
}

std::string JsonQuote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out.push_back(static_cast<char>(c));
        }
    }
  }
  out.push_back('"');
  return out;
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, std::map<std::string, HttpHandler> handlers, int threads) {
  std::unique_ptr<HttpServer> s(new HttpServer());
  // request_timeout_ms bounds how long a worker waits on a client that stops reading.
  const std::vector<std::string> options = {"listening_ports",    listen,
                                            "num_threads",        std::to_string(threads),
                                            "request_timeout_ms", "30000"};
  try {
    s->server_ = std::make_unique<CivetServer>(options);
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("cannot listen on '", listen, "': ", e.what()));
  }
  if (s->server_->getContext() == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot listen on '", listen, "'"));
  }
  for (auto& [path, fn] : handlers) s->Handle(path, std::move(fn));
  std::vector<int> ports = s->server_->getListeningPorts();
  s->port_ = ports.empty() ? 0 : ports.front();
  const size_t colon = listen.rfind(':');
  const std::string host = colon == std::string::npos ? "" : listen.substr(0, colon);
  s->address_ = absl::StrCat(host, ":", s->port_);
  return s;
}

void HttpServer::Handle(const std::string& path, HttpHandler handler) {
  absl::MutexLock lock(&mu_);
  handlers_.push_back(std::make_unique<Handler>(path, std::move(handler)));
  server_->addHandler(path, handlers_.back().get());
}

HttpServer::~HttpServer() {
  if (server_) server_->close();  // joins the worker threads before handlers go away
}

}  // namespace blkbench
