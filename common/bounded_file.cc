// ReadBoundedRegularFile (bounded_file.h).
#include "common/bounded_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace blkbench {

absl::StatusOr<std::string> ReadBoundedRegularFile(const std::string& path, size_t max_bytes,
                                                   std::string_view what) {
  const std::string name = absl::StrCat(std::string(what), " '", path, "'");
  // O_NONBLOCK: opening a FIFO must not wait for a writer; the fstat below refuses it.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot open ", name));
  std::string text;
  absl::Status status;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    status = absl::ErrnoToStatus(errno, absl::StrCat("cannot stat ", name));
  } else if (!S_ISREG(st.st_mode)) {
    status = absl::InvalidArgumentError(absl::StrCat(name, " is not a regular file"));
  } else if (static_cast<size_t>(st.st_size) > max_bytes) {
    status = absl::InvalidArgumentError(
        absl::StrCat(name, " is ", st.st_size, " bytes; at most ", max_bytes, " are accepted"));
  } else {
    char buffer[8192];
    ssize_t n = 0;
    while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) {
      text.append(buffer, static_cast<size_t>(n));
      if (text.size() > max_bytes) break;  // the file grew while read
    }
    if (n < 0) {
      status = absl::ErrnoToStatus(errno, absl::StrCat("cannot read ", name));
    } else if (text.size() > max_bytes) {
      status =
          absl::InvalidArgumentError(absl::StrCat(name, " is larger than ", max_bytes, " bytes"));
    }
  }
  ::close(fd);
  if (!status.ok()) return status;
  return text;
}

}  // namespace blkbench
