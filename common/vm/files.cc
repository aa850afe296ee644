// File helpers for common/vm (see files.h).
#include "common/vm/files.h"

#include <fcntl.h>
#include <ftw.h>
#include <openssl/evp.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace blkbench::vm {
namespace {

struct MdCtxFree {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::string HexDigest(EVP_MD_CTX* ctx) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(md), len));
}

}  // namespace

absl::StatusOr<std::string> Sha256OfFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, "open " + path);
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  char buf[1 << 16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      return absl::ErrnoToStatus(e, "read " + path);
    }
    if (n == 0) break;
    EVP_DigestUpdate(ctx.get(), buf, static_cast<size_t>(n));
  }
  close(fd);
  return HexDigest(ctx.get());
}

std::string Sha256Hex(absl::string_view bytes) {
  std::unique_ptr<EVP_MD_CTX, MdCtxFree> ctx(EVP_MD_CTX_new());
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  EVP_DigestUpdate(ctx.get(), bytes.data(), bytes.size());
  return HexDigest(ctx.get());
}

absl::StatusOr<FileLock> FileLock::Acquire(const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return absl::ErrnoToStatus(errno, "open lock file " + path);
  while (flock(fd, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int e = errno;
    close(fd);
    return absl::ErrnoToStatus(e, "flock " + path);
  }
  return FileLock(fd);
}

FileLock::~FileLock() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

absl::Status MakeDirs(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("MakeDirs: empty path");
  for (size_t i = 1; i <= path.size(); ++i) {
    if (i != path.size() && path[i] != '/') continue;
    std::string prefix = path.substr(0, i);
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::ErrnoToStatus(errno, "mkdir " + prefix);
    }
  }
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " is not a directory"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> MakeTempDir(const std::string& parent, absl::string_view prefix) {
  std::string tmpl = absl::StrCat(parent, "/", prefix, "XXXXXX");
  if (mkdtemp(tmpl.data()) == nullptr) return absl::ErrnoToStatus(errno, "mkdtemp " + tmpl);
  return tmpl;
}

absl::Status RemoveTree(const std::string& path) {
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) {
    return errno == ENOENT ? absl::OkStatus() : absl::ErrnoToStatus(errno, "lstat " + path);
  }
  if (!S_ISDIR(st.st_mode)) {
    if (unlink(path.c_str()) != 0) return absl::ErrnoToStatus(errno, "unlink " + path);
    return absl::OkStatus();
  }
  // Depth-first so directories are empty when removed. nftw's callback has no context
  // argument, hence the thread_local for the first error.
  static thread_local int first_errno;
  first_errno = 0;
  auto remove_one = [](const char* p, const struct stat*, int type, struct FTW*) -> int {
    int r = (type == FTW_DP) ? rmdir(p) : unlink(p);
    if (r != 0 && errno != ENOENT && first_errno == 0) first_errno = errno;
    return 0;
  };
  if (nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) != 0) {
    return absl::ErrnoToStatus(errno, "walk " + path);
  }
  if (first_errno != 0) return absl::ErrnoToStatus(first_errno, "remove " + path);
  return absl::OkStatus();
}

absl::Status WriteFileAtomic(const std::string& path, absl::string_view data, int mode) {
  std::string tmp = path + ".tmpXXXXXX";
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return absl::ErrnoToStatus(errno, "create temporary for " + path);
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      close(fd);
      unlink(tmp.c_str());
      return absl::ErrnoToStatus(e, "write " + tmp);
    }
    done += static_cast<size_t>(n);
  }
  if (fchmod(fd, static_cast<mode_t>(mode)) != 0 || fsync(fd) != 0) {
    int e = errno;
    close(fd);
    unlink(tmp.c_str());
    return absl::ErrnoToStatus(e, "finish " + tmp);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    unlink(tmp.c_str());
    return absl::ErrnoToStatus(e, "rename to " + path);
  }
  return absl::OkStatus();
}

bool PathExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string FileTail(const std::string& path, size_t max) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  struct stat st;
  std::string out;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    off_t size = st.st_size;
    off_t from = size > static_cast<off_t>(max) ? size - static_cast<off_t>(max) : 0;
    out.resize(static_cast<size_t>(size - from));
    ssize_t n = pread(fd, out.data(), out.size(), from);
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  close(fd);
  return out;
}

}  // namespace blkbench::vm
