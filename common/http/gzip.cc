// Gzip over zlib's deflate/inflate with the gzip wrapper; see gzip.h.
#include "common/http/gzip.h"

#include <zlib.h>

#include <new>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace blkbench {
namespace {

constexpr int kGzipWindowBits = 15 + 16;      // 32 KiB window; +16 selects the gzip wrapper
constexpr int kGzipAutoWindowBits = 15 + 32;  // inflate: +32 accepts zlib or gzip
constexpr int kFastLevel = 1;
constexpr int kMemLevel = 8;  // zlib's default
constexpr size_t kChunk = 64 * 1024;

}  // namespace

std::string GzipCompress(absl::string_view data) {
  z_stream zs{};
  // Cannot fail with these constant, valid parameters unless memory is exhausted.
  if (deflateInit2(&zs, kFastLevel, Z_DEFLATED, kGzipWindowBits, kMemLevel, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::bad_alloc();
  }
  std::string out;
  out.resize(deflateBound(&zs, static_cast<uLong>(data.size())));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  // deflateBound guarantees one Z_FINISH call completes.
  const int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) throw std::bad_alloc();
  return out;
}

absl::StatusOr<std::string> GzipDecompress(absl::string_view data) {
  std::string out;
  size_t pos = 0;
  // A gzip stream may hold several members (RFC 1952 §2.2): inflate each in turn.
  while (pos < data.size()) {
    z_stream zs{};
    if (inflateInit2(&zs, kGzipAutoWindowBits) != Z_OK) {
      return absl::ResourceExhaustedError("gzip: inflateInit2 failed");
    }
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + pos));
    zs.avail_in = static_cast<uInt>(data.size() - pos);
    int rc = Z_OK;
    char buf[kChunk];
    while (rc == Z_OK) {
      zs.next_out = reinterpret_cast<Bytef*>(buf);
      zs.avail_out = sizeof(buf);
      rc = inflate(&zs, Z_NO_FLUSH);
      out.append(buf, sizeof(buf) - zs.avail_out);
      if (rc == Z_BUF_ERROR && zs.avail_in == 0) break;  // input ended mid-stream
    }
    const size_t consumed = zs.total_in;
    inflateEnd(&zs);
    if (rc != Z_STREAM_END) {
      return absl::DataLossError(absl::StrCat("gzip: truncated or corrupt stream after ",
                                              pos + consumed, " of ", data.size(), " bytes"));
    }
    pos += consumed;
  }
  return out;
}

bool AcceptsGzip(absl::string_view accept_encoding) {
  for (absl::string_view item : absl::StrSplit(accept_encoding, ',')) {
    std::vector<absl::string_view> parts = absl::StrSplit(item, ';');
    const std::string coding = absl::AsciiStrToLower(absl::StripAsciiWhitespace(parts[0]));
    if (coding != "gzip" && coding != "x-gzip" && coding != "*") continue;
    double q = 1;
    for (size_t i = 1; i < parts.size(); ++i) {
      absl::string_view p = absl::StripAsciiWhitespace(parts[i]);
      if (absl::ConsumePrefix(&p, "q=") || absl::ConsumePrefix(&p, "Q=")) {
        if (!absl::SimpleAtod(p, &q)) q = 0;
      }
    }
    if (q > 0) return true;
  }
  return false;
}

}  // namespace blkbench
