// Temp files and loop devices for executor tests (test_target.h).
#include "agent/executor/test_target.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace blkbench {

absl::StatusOr<std::unique_ptr<TempFile>> TempFile::Create(uint64_t size) {
  char tmpl[] = "/dev/shm/blkbench-exec-test-XXXXXX";
  const int fd = mkstemp(tmpl);
  if (fd < 0) return absl::InternalError(absl::StrCat("mkstemp: ", strerror(errno)));
  // fallocate, not a sparse ftruncate: O_DIRECT reads then hit real (zeroed) pages.
  const int r = posix_fallocate(fd, 0, static_cast<off_t>(size));
  close(fd);
  if (r != 0) {
    unlink(tmpl);
    return absl::InternalError(absl::StrCat("posix_fallocate: ", strerror(r)));
  }
  return std::unique_ptr<TempFile>(new TempFile(tmpl, size));
}

TempFile::~TempFile() { unlink(path_.c_str()); }

absl::StatusOr<std::string> TempFile::Contents() const {
  std::string data(size_, '\0');
  const int fd = open(path_.c_str(), O_RDONLY);
  if (fd < 0) return absl::InternalError(absl::StrCat("open: ", strerror(errno)));
  size_t done = 0;
  while (done < size_) {
    const ssize_t n = pread(fd, data.data() + done, size_ - done, static_cast<off_t>(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  if (done != size_) return absl::InternalError("short read of temp file");
  return data;
}

absl::StatusOr<std::unique_ptr<LoopDevice>> LoopDevice::Attach(uint64_t size) {
  absl::StatusOr<std::unique_ptr<TempFile>> file = TempFile::Create(size);
  if (!file.ok()) return file.status();
  const std::string cmd = absl::StrCat("losetup -f --show ", (*file)->path(), " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return absl::UnavailableError("popen(losetup) failed");
  char buf[256] = {};
  const bool got = fgets(buf, sizeof(buf), p) != nullptr;
  const int rc = pclose(p);
  std::string dev(absl::StripAsciiWhitespace(buf));
  if (!got || rc != 0 || dev.rfind("/dev/loop", 0) != 0) {
    return absl::UnavailableError(absl::StrCat("losetup -f --show failed (rc ", rc, ")"));
  }
  return std::unique_ptr<LoopDevice>(new LoopDevice(std::move(*file), dev));
}

LoopDevice::~LoopDevice() {
  const std::string cmd = absl::StrCat("losetup -d ", path_, " 2>/dev/null");
  if (system(cmd.c_str()) != 0) fprintf(stderr, "warning: %s failed\n", cmd.c_str());
}

}  // namespace blkbench
