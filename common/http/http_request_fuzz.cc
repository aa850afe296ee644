// libFuzzer target: an HTTP request head on any bytes, as a client that never
// authenticated can send it to /metrics, /sd/agents or /api/v1. Parsing the request line,
// the query string and the headers must end without a crash or a sanitizer report, and a
// parsed target must be a path.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/http/http_server.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string head(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<blkbench::RequestLine> line = blkbench::ParseRequestLine(head);
  if (line.ok() && (line->request.path.empty() || line->request.path[0] != '/')) {
    __builtin_trap();  // the router only ever sees absolute paths
  }
  (void)blkbench::HeaderValue(head, "authorization");
  (void)blkbench::HeaderValue(head, "accept-encoding");
  return 0;
}
