// HttpGet over a plain socket; see http_get.h.
#include "common/http/http_get.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/http/gzip.h"
#include "common/http/tls_socket.h"

namespace blkbench {
namespace {

absl::Status Errno(const char* what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", strerror(errno)));
}

}  // namespace

std::string UrlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[4];
      snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

absl::StatusOr<HttpResult> HttpGet(int port, const std::string& target,
                                   const HttpGetOptions& options, const HttpClientAuth& auth) {
  const int raw_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (raw_fd < 0) return Errno("socket");
  Socket sock(raw_fd);
  sock.SetTimeouts(options.timeout);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(raw_fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return Errno("connect");
  }
  if (!auth.ca_file.empty()) {
    auto ctx = NewClientTlsContext(auth.ca_file, auth.cert_file, auth.key_file);
    if (!ctx.ok()) return ctx.status();
    if (absl::Status s = sock.ConnectTls(ctx->get(), "127.0.0.1"); !s.ok()) return s;
  }
  const std::string request = absl::StrCat(
      "GET ", target, " HTTP/1.0\r\nHost: 127.0.0.1:", port, "\r\nAccept: */*\r\n",
      options.accept_gzip ? "Accept-Encoding: gzip\r\n" : "",
      auth.bearer_token.empty() ? ""
                                : absl::StrCat("Authorization: Bearer ", auth.bearer_token, "\r\n"),
      "Connection: close\r\n\r\n");
  if (!sock.WriteAll(request)) return Errno("send");
  std::string response;
  char buf[16384];
  for (;;) {
    const ssize_t n = sock.Read(buf, sizeof(buf));
    if (n < 0) return Errno("recv");  // ECONNRESET: the server aborted the response
    if (n == 0) break;
    response.append(buf, static_cast<size_t>(n));
  }
  const size_t header_end = response.find("\r\n\r\n");
  if (header_end == std::string::npos) {
    return absl::DataLossError(absl::StrCat("GET ", target, ": no HTTP header in the response"));
  }
  HttpResult result;
  std::vector<std::string> lines = absl::StrSplit(response.substr(0, header_end), "\r\n");
  std::vector<std::string> status_line = absl::StrSplit(lines[0], ' ');
  if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &result.status)) {
    return absl::DataLossError(absl::StrCat("GET ", target, ": bad status line: ", lines[0]));
  }
  std::optional<size_t> content_length;
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    const std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    const std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    if (name == "content-type") result.content_type = value;
    if (name == "content-encoding") result.content_encoding = absl::AsciiStrToLower(value);
    size_t length = 0;
    if (name == "content-length") {
      if (!absl::SimpleAtoi(value, &length)) {
        return absl::DataLossError(absl::StrCat("GET ", target, ": bad Content-Length: ", value));
      }
      content_length = length;
    }
  }
  result.body = response.substr(header_end + 4);
  result.wire_bytes = result.body.size();
  if (content_length.has_value() && *content_length != result.wire_bytes) {
    return absl::DataLossError(absl::StrCat("GET ", target, ": received ", result.wire_bytes,
                                            " body bytes of the ", *content_length,
                                            " its Content-Length announced"));
  }
  if (result.content_encoding == "gzip") {
    absl::StatusOr<std::string> decoded = GzipDecompress(result.body);
    if (!decoded.ok()) {
      return absl::DataLossError(absl::StrCat("GET ", target, ": ", decoded.status().message()));
    }
    result.body = std::move(*decoded);
  } else if (!result.content_encoding.empty() && result.content_encoding != "identity") {
    return absl::DataLossError(
        absl::StrCat("GET ", target, ": unasked-for Content-Encoding ", result.content_encoding));
  }
  return result;
}

}  // namespace blkbench
