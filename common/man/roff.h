// Roff: text escaped for a man page's roff source, shared by blkbench(1) (cli/commands.cc)
// and the daemons' pages (daemon_man_page.h).
#ifndef BLKBENCH_COMMON_MAN_ROFF_H_
#define BLKBENCH_COMMON_MAN_ROFF_H_

#include <string>

#include "absl/strings/str_replace.h"

namespace blkbench {

// `text` with backslashes and hyphens escaped, and a leading '.' or '\'' (which would
// start a request) made literal.
inline std::string Roff(const std::string& text) {
  std::string out = absl::StrReplaceAll(text, {{"\\", "\\e"}, {"-", "\\-"}});
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out = "\\&" + out;
  return out;
}

}  // namespace blkbench

#endif  // BLKBENCH_COMMON_MAN_ROFF_H_
