// Messages for an unreachable controller or its unavailable store (see connect_errors.h).
#include "cli/connect_errors.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "controller/client_errors.h"

namespace blkbench {
namespace {

constexpr char kStartHint[] =
    "\n  (is blkbench-controller running? set --controller or BLKBENCH_CONTROLLER)";

// The socket path of a unix: address (gRPC's unix:PATH and unix:///ABSPATH forms), or ""
// for any other address.
std::string UnixSocketPath(absl::string_view address) {
  if (absl::ConsumePrefix(&address, "unix://")) return std::string(address);
  if (absl::ConsumePrefix(&address, "unix:")) return std::string(address);
  return "";
}

// What stops this process from connecting to the socket at `path`, or "" when nothing
// visible does (then the controller is just not accepting). connect(2) on a Unix socket
// needs search permission on every directory of the path and write permission on the
// socket; the kernel answers EACCES otherwise.
std::string SocketProblem(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == EACCES) {
      return absl::StrCat("permission denied on a directory of the socket path ", path,
                          " (connecting needs search permission on each directory)");
    }
    if (err == ENOENT) {
      return absl::StrCat("no socket at ", path,
                          ": nothing serves there (blkbench-controller --socket ", path, ")");
    }
    return absl::StrCat("cannot stat the socket ", path, ": ", std::strerror(err));
  }
  if (!S_ISSOCK(st.st_mode)) return absl::StrCat(path, " is not a socket");
  if (access(path.c_str(), W_OK) != 0 && errno == EACCES) {
    return absl::StrCat("permission denied on the socket ", path, " (mode 0", (st.st_mode >> 6) & 7,
                        (st.st_mode >> 3) & 7, st.st_mode & 7, ", owner uid ", st.st_uid, " gid ",
                        st.st_gid,
                        "): connecting needs write permission on it; join its group or ask "
                        "the controller's operator (docs/security.md)");
  }
  return "";
}

}  // namespace

std::string UnreachableMessage(const std::string& address, const std::string& detail) {
  if (const std::string path = UnixSocketPath(address); !path.empty()) {
    if (std::string problem = SocketProblem(path); !problem.empty()) {
      return absl::StrCat("cannot connect to the controller at ", address, ": ", problem);
    }
  }
  return absl::StrCat("cannot reach the controller at ", address,
                      detail.empty() ? "" : absl::StrCat(": ", detail), kStartHint);
}

bool IsStoreUnavailable(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE &&
         absl::StartsWith(s.error_message(), kStoreUnavailablePrefix);
}

}  // namespace blkbench
