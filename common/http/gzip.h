// Gzip (RFC 1952) encoding of HTTP bodies with zlib: the controller's and agent's
// /metrics and JSON endpoints compress when the client sends `Accept-Encoding: gzip`
// (Prometheus always does), and HttpGet decodes what it asked for.
#ifndef BLKBENCH_COMMON_HTTP_GZIP_H_
#define BLKBENCH_COMMON_HTTP_GZIP_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace blkbench {

// `data` as one gzip member. Fast level (1): a /metrics body of text compresses ~10x at
// that level, and the scrape must not cost the controller more than the bytes it saves.
std::string GzipCompress(absl::string_view data);

// The concatenated members of a gzip stream. DataLoss for a truncated or corrupt stream.
absl::StatusOr<std::string> GzipDecompress(absl::string_view data);

// True when an Accept-Encoding header value admits gzip: a "gzip" (or "x-gzip" or "*")
// coding whose q-value is not 0 (RFC 9110 §12.5.3).
bool AcceptsGzip(absl::string_view accept_encoding);

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_HTTP_GZIP_H_
