// Label checks; see labels.h.
#include "workloads/labels.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace blkbench::workloads {

std::string LabelProblem(std::string_view v) {
  if (v.empty()) return "it is empty";
  if (v.size() > kMaxLabelBytes) {
    return absl::StrCat("it is ", v.size(), " bytes (at most ", kMaxLabelBytes, ")");
  }
  for (size_t i = 0; i < v.size();) {
    const auto c = static_cast<unsigned char>(v[i]);
    if (c < 0x20 || c == 0x7f) return absl::StrCat("a control character at byte ", i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    // Decode one UTF-8 sequence (RFC 3629: no overlongs, no surrogates, <= U+10FFFF).
    int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
    if (c > 0xf4) len = 0;
    if (len == 0 || i + static_cast<size_t>(len) > v.size()) {
      return absl::StrCat("invalid UTF-8 at byte ", i);
    }
    uint32_t cp = c & (0xff >> (len + 1));
    for (int k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(v[i + static_cast<size_t>(k)]);
      if ((cc & 0xc0) != 0x80) return absl::StrCat("invalid UTF-8 at byte ", i);
      cp = (cp << 6) | (cc & 0x3f);
    }
    const uint32_t min = len == 2 ? 0x80 : len == 3 ? 0x800 : 0x10000;
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return absl::StrCat("invalid UTF-8 at byte ", i);
    }
    if (cp >= 0x80 && cp <= 0x9f) return absl::StrCat("a control character at byte ", i);
    if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)) {
      return absl::StrCat("a bidirectional override at byte ", i);
    }
    i += static_cast<size_t>(len);
  }
  return "";
}

}  // namespace blkbench::workloads
