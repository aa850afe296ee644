// HttpServer: routing, authentication and responses; see http_server.h.
#include "common/http/http_server.h"

#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 405:
      return "Method Not Allowed";
    case 431:
      return "Request Header Fields Too Large";
    case 503:
      return "Service Unavailable";
    default:
      return status >= 500 ? "Internal Server Error" : "Error";
  }
}

// Bodies below this size go out as they are: gzip's 18-byte frame and the CPU are not
// worth it for a 404 or a small discovery document.
constexpr size_t kGzipMinBytes = 1024;

HttpResponse Plain(int status, std::string body) {
  return {status, "text/plain; charset=utf-8", std::move(body)};
}

// Sends the whole response by `deadline`: the head and the body, gzip-encoded when the
// client accepts it and the body is worth it. The caller closes the connection gracefully
// after it, so the client reads every byte the Content-Length announced (an abortive
// close — a RST with the body still in the send buffer — cut every response above
// ~128 KB once).
void Send(Socket& socket, const std::string& accept_encoding, const HttpResponse& r,
          const std::string& extra_headers, absl::Time deadline) {
  const bool gzip = r.body.size() >= kGzipMinBytes && AcceptsGzip(accept_encoding);
  const std::string compressed = gzip ? GzipCompress(r.body) : std::string();
  const std::string& body = gzip ? compressed : r.body;
  const std::string head =
      absl::StrCat("HTTP/1.1 ", r.status, " ", StatusText(r.status),
                   "\r\nContent-Type: ", r.content_type, "\r\nContent-Length: ", body.size(),
                   "\r\n", gzip ? "Content-Encoding: gzip\r\n" : "", extra_headers,
                   "Vary: Accept-Encoding\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n");
  // A failed write means the client went away; there is nobody left to tell.
  if (socket.WriteAllBy(head, deadline)) socket.WriteAllBy(body, deadline);
}

// Parses "host:port", "[v6]:port" or ":port" for bind(2).
absl::StatusOr<std::pair<std::string, std::string>> SplitHostPort(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("HTTP listen address '", listen, "' is not host:port"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return std::make_pair(host, listen.substr(colon + 1));
}

absl::StatusOr<int> Listen(const std::string& listen) {
  auto host_port = SplitHostPort(listen);
  if (!host_port.ok()) return host_port.status();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string& host = host_port->first;
  const int rc =
      getaddrinfo(host.empty() ? nullptr : host.c_str(), host_port->second.c_str(), &hints, &found);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on '", listen, "': ", gai_strerror(rc)));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(found, &freeaddrinfo);
  int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::ErrnoToStatus(errno, "socket");
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
    const int err = errno;
    close(fd);
    return absl::UnavailableError(absl::StrCat("cannot listen on '", listen, "': ", strerror(err)));
  }
  return fd;
}

int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
}

}  // namespace

std::map<std::string, std::string> ParseQueryString(const std::string& query) {
  std::map<std::string, std::string> out;
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    out[UrlDecode(kv[0])] = kv.size() > 1 ? UrlDecode(kv[1]) : "";
  }
  return out;
}

absl::StatusOr<RequestLine> ParseRequestLine(const std::string& head) {
  const std::vector<std::string> parts = absl::StrSplit(head.substr(0, head.find("\r\n")), ' ');
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() || parts[1][0] != '/') {
    return absl::InvalidArgumentError("expected 'METHOD /target VERSION'");
  }
  RequestLine line;
  line.method = parts[0];
  const size_t q = parts[1].find('?');
  line.request.path = parts[1].substr(0, q);
  if (q != std::string::npos) line.request.params = ParseQueryString(parts[1].substr(q + 1));
  return line;
}

std::string HeaderValue(const std::string& head, absl::string_view name) {
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    if (absl::AsciiStrToLower(line.substr(0, colon)) != name) continue;
    return std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  }
  return "";
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

absl::StatusOr<HttpSecurity> HttpSecurityFromFlags(const HttpSecurityFlags& flags) {
  HttpSecurity sec;
  if ((flags.tls || flags.client_certs) && flags.tls_dir.empty()) {
    return absl::InvalidArgumentError(
        "HTTPS and client certificates on the metrics endpoint need the lab PKI directory "
        "(--tls_dir / tls_dir)");
  }
  if (flags.client_certs && !flags.tls) {
    return absl::InvalidArgumentError("client certificates need HTTPS: give metrics_tls too");
  }
  if (flags.tls) {
    sec.cert_file = absl::StrCat(flags.tls_dir, "/", flags.stem, ".pem");
    sec.key_file = absl::StrCat(flags.tls_dir, "/", flags.stem, ".key");
  }
  if (flags.client_certs) {
    sec.client_ca_file = absl::StrCat(flags.tls_dir, "/ca.pem");
    sec.revoked = flags.revoked;
    if (sec.revoked == nullptr) {
      auto list = tls::RevocationList::Load(absl::StrCat(flags.tls_dir, "/", tls::kRevokedFile));
      if (!list.ok()) return list.status();
      sec.revoked = std::move(*list);
    }
  }
  if (!flags.token_file.empty()) {
    struct stat st;
    if (stat(flags.token_file.c_str(), &st) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("metrics token file ", flags.token_file, ": ", strerror(errno)));
    }
    if ((st.st_mode & 007) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "metrics token file ", flags.token_file, " is readable by others (mode ",
          absl::Hex(st.st_mode & 0777), "); chmod 640 it (owner and the daemon's group)"));
    }
    std::ifstream in(flags.token_file);
    std::string token;
    std::getline(in, token);
    token = std::string(absl::StripAsciiWhitespace(token));
    if (token.empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat("metrics token file ", flags.token_file, " is empty"));
    }
    sec.bearer_token = std::move(token);
  }
  if (!flags.listen.empty() && !IsLoopbackAddress(flags.listen) && !flags.insecure &&
      !(sec.tls() && sec.authenticates())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to serve metrics on ", flags.listen, " as ", sec.Describe(),
        ": beyond loopback the endpoint must be HTTPS (metrics_tls) and authenticate its "
        "clients (metrics_client_certs and/or metrics_token_file), or be allowed with "
        "--insecure"));
  }
  return sec;
}

std::string HttpSecurity::Describe() const {
  std::string out = tls() ? "https" : "http";
  if (!client_ca_file.empty()) out += "+client_cert";
  if (!bearer_token.empty()) out += "+token";
  return out;
}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    const std::string& listen, const std::map<std::string, HttpHandler>& handlers, int threads,
    const HttpSecurity& security, const HttpLimits& limits) {
  std::unique_ptr<HttpServer> s(new HttpServer(security, limits));
  if (security.tls()) {
    auto ctx = NewServerTlsContext(security.cert_file, security.key_file, security.client_ca_file);
    if (!ctx.ok()) return ctx.status();
    s->tls_ = std::move(*ctx);
  } else if (!security.client_ca_file.empty()) {
    return absl::InvalidArgumentError("HTTP: client certificates need TLS (a cert_file)");
  }
  auto fd = Listen(listen);
  if (!fd.ok()) return fd.status();
  s->listen_fd_ = *fd;
  s->port_ = BoundPort(s->listen_fd_);
  const size_t colon = listen.rfind(':');
  s->address_ = absl::StrCat(listen.substr(0, colon), ":", s->port_);
  for (const auto& [path, fn] : handlers) s->Handle(path, fn);
  HttpServer* raw = s.get();
  auto reader = RequestReader::Start(s->listen_fd_, s->tls_.get(), limits, [raw](ReadyRequest r) {
    absl::MutexLock lock(&raw->mu_);
    raw->ready_.push_back(std::move(r));
  });
  if (!reader.ok()) return reader.status();
  s->reader_ = std::move(*reader);
  for (int i = 0; i < std::max(threads, 1); ++i) {
    s->workers_.emplace_back([raw] { raw->WorkerLoop(); });
  }
  return s;
}

void HttpServer::Handle(const std::string& path, HttpHandler handler) {
  absl::MutexLock lock(&mu_);
  handlers_[path] = std::move(handler);
}

void HttpServer::WorkerLoop() {
  for (;;) {
    std::optional<ReadyRequest> request;
    {
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(
          +[](HttpServer* s)
               ABSL_EXCLUSIVE_LOCKS_REQUIRED(s->mu_) { return s->stopping_ || !s->ready_.empty(); },
          this));
      if (ready_.empty()) return;  // stopping, and nothing left to serve
      request.emplace(std::move(ready_.front()));
      ready_.pop_front();
    }
    Serve(std::move(*request));
  }
}

void HttpServer::Serve(ReadyRequest request) {
  std::string extra_headers;
  const HttpResponse resp = request.head_too_large
                                ? Plain(431, "request header fields too large\n")
                                : Respond(request.head, request.socket, &extra_headers);
  Send(request.socket, request.head_too_large ? "" : HeaderValue(request.head, "accept-encoding"),
       resp, extra_headers, absl::Now() + limits_.response_deadline);
  reader_->Finish(std::move(request));  // drained and closed off this thread
}

HttpResponse HttpServer::Respond(const std::string& head, const Socket& socket,
                                 std::string* extra_headers) {
  absl::StatusOr<RequestLine> line = ParseRequestLine(head);
  if (!line.ok()) return Plain(400, "bad request line\n");
  if (line->method != "GET") return Plain(405, "only GET is served here\n");
  if (security_.revoked != nullptr && socket.tls()) {
    const std::string pem = socket.PeerCertificatePem();
    if (!pem.empty()) {
      if (absl::Status s = security_.revoked->Check(pem); !s.ok()) {
        return Plain(403, absl::StrCat(s.message(), "\n"));
      }
    }
  }
  if (!security_.bearer_token.empty()) {
    const std::string auth = HeaderValue(head, "authorization");
    constexpr absl::string_view kScheme = "bearer ";
    const bool ok = auth.size() == kScheme.size() + security_.bearer_token.size() &&
                    absl::AsciiStrToLower(auth.substr(0, kScheme.size())) == kScheme &&
                    CRYPTO_memcmp(auth.data() + kScheme.size(), security_.bearer_token.data(),
                                  security_.bearer_token.size()) == 0;
    if (!ok) {
      *extra_headers = "WWW-Authenticate: Bearer realm=\"blkbench\"\r\n";
      return Plain(401, auth.empty() ? "this endpoint needs Authorization: Bearer <token>\n"
                                     : "the bearer token is not the one configured\n");
    }
  }
  const HttpRequest& req = line->request;
  HttpHandler fn;
  {
    absl::MutexLock lock(&mu_);
    auto it = handlers_.find(req.path);
    if (it == handlers_.end()) return Plain(404, "not found\n");
    fn = it->second;
  }
  try {
    return fn(req);
  } catch (const std::exception& e) {
    return Plain(500, absl::StrCat("internal error: ", e.what(), "\n"));
  }
}

HttpServer::~HttpServer() {
  if (reader_ != nullptr) reader_->StopAccepting();
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  for (std::thread& t : workers_) t.join();  // each answers what was handed over
  reader_.reset();                           // after the drains of those answers
  if (listen_fd_ >= 0) close(listen_fd_);
}

}  // namespace blkbench
