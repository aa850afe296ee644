// mountinfo and swaps parsing; see proc_parse.h.
#include "agent/device/proc_parse.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace blkbench {
namespace {

bool IsOctal(char c) { return c >= '0' && c <= '7'; }

}  // namespace

std::string UnescapeOctal(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 3 < text.size() && IsOctal(text[i + 1]) && IsOctal(text[i + 2]) &&
        IsOctal(text[i + 3])) {
      out.push_back(static_cast<char>((text[i + 1] - '0') * 64 + (text[i + 2] - '0') * 8 +
                                      (text[i + 3] - '0')));
      i += 3;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

absl::StatusOr<std::vector<MountEntry>> ParseMountInfo(absl::string_view text) {
  std::vector<MountEntry> mounts;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    ++line_number;
    // 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
    // (1)(2)(3)   (4)   (5)      (6)      (7..)  (-) (8)    (9)         (10)
    std::vector<absl::string_view> fields = absl::StrSplit(line, ' ', absl::SkipEmpty());
    auto malformed = [&] {
      return absl::InvalidArgumentError(
          absl::StrCat("mountinfo line ", line_number, " is malformed: \"", line, "\""));
    };
    size_t separator = 6;
    while (separator < fields.size() && fields[separator] != "-") ++separator;
    if (fields.size() < 7 || separator + 2 >= fields.size()) return malformed();
    std::pair<absl::string_view, absl::string_view> dev =
        absl::StrSplit(fields[2], absl::MaxSplits(':', 1));
    MountEntry entry;
    if (!absl::SimpleAtoi(dev.first, &entry.major) || !absl::SimpleAtoi(dev.second, &entry.minor)) {
      return malformed();
    }
    entry.mount_point = UnescapeOctal(fields[4]);
    entry.fs_type = UnescapeOctal(fields[separator + 1]);
    entry.source = UnescapeOctal(fields[separator + 2]);
    mounts.push_back(std::move(entry));
  }
  return mounts;
}

absl::StatusOr<std::vector<SwapEntry>> ParseSwaps(absl::string_view text) {
  std::vector<SwapEntry> swaps;
  bool header = true;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    if (header) {  // "Filename Type Size Used Priority"
      header = false;
      if (absl::StartsWith(line, "Filename")) continue;
    }
    // Paths are escaped, so whitespace separates fields; a deleted swap file's path is followed
    // by " (deleted)" (d_path), which is why the type is searched from the right.
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() < 5) {
      return absl::InvalidArgumentError(absl::StrCat("malformed /proc/swaps line \"", line, "\""));
    }
    SwapEntry entry;
    entry.type = std::string(fields[fields.size() - 4]);
    std::string path = std::string(fields[0]);
    for (size_t i = 1; i + 4 < fields.size(); ++i) absl::StrAppend(&path, " ", fields[i]);
    entry.path = UnescapeOctal(path);
    swaps.push_back(std::move(entry));
  }
  return swaps;
}

}  // namespace blkbench
