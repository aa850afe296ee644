// The controller's Unix socket with roles from peer credentials; see local_socket.h.
#include "controller/local_socket.h"

#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/log/log.h"
#include "grpcpp/security/server_credentials.h"

namespace blkbench {
namespace {

using Acceptor = grpc::ServerBuilder::experimental_type::ExternalConnectionType;

std::string Errno(const std::string& what, const std::string& path) {
  return absl::StrCat("controller: --socket ", path, ": ", what, ": ", strerror(errno));
}

std::string ParentDir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// True if a server accepts connections on the socket at `addr`.
bool SomeoneListens(const sockaddr_un& addr) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool live = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return live;
}

}  // namespace

std::optional<gid_t> LocalAdminGroup() {
  group grp;
  group* found = nullptr;
  std::vector<char> buf(16384);
  if (getgrnam_r(kLocalAdminGroup, &grp, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return std::nullopt;
  }
  return grp.gr_gid;
}

bool IsLocalAdmin(uid_t uid, gid_t gid, uid_t server_uid, std::optional<gid_t> admin_group) {
  if (uid == 0 || uid == server_uid) return true;
  if (!admin_group.has_value()) return false;
  if (gid == *admin_group) return true;
  passwd pw;
  passwd* found = nullptr;
  std::vector<char> buf(16384);
  if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    return false;  // a user without a name has no supplementary groups to look up
  }
  int n = 64;
  std::vector<gid_t> groups(n);
  if (getgrouplist(pw.pw_name, gid, groups.data(), &n) < 0) {
    groups.resize(n);
    if (getgrouplist(pw.pw_name, gid, groups.data(), &n) < 0) return false;
  }
  groups.resize(n);
  for (gid_t g : groups) {
    if (g == *admin_group) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<LocalSocketListener>> LocalSocketListener::Bind(
    const std::string& path, grpc::ServerBuilder& builder) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return absl::InvalidArgumentError(absl::StrCat("controller: --socket '", path,
                                                   "' must be a path of 1 to ",
                                                   sizeof(addr.sun_path) - 1, " bytes"));
  }
  memcpy(addr.sun_path, path.data(), path.size());
  const std::string dir = ParentDir(path);
  if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        Errno(absl::StrCat("cannot make its directory ", dir,
                           " (give a --socket path you may create, or --socket='' for none)"),
              path));
  }
  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "controller: --socket ", path, " exists and is not a socket; not replacing it"));
    }
    if (SomeoneListens(addr)) {
      return absl::FailedPreconditionError(
          absl::StrCat("controller: --socket ", path, ": another server is answering there"));
    }
    unlink(path.c_str());  // left by a controller that did not stop cleanly
  }
  std::unique_ptr<LocalSocketListener> l(new LocalSocketListener());
  l->path_ = path;
  l->listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (l->listen_fd_ < 0) return absl::InternalError(Errno("socket", path));
  if (bind(l->listen_fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return absl::FailedPreconditionError(Errno("cannot bind", path));
  }
  // Every local user may connect: the peer's credentials decide what it may do.
  if (chmod(path.c_str(), 0666) != 0) return absl::InternalError(Errno("chmod", path));
  if (listen(l->listen_fd_, SOMAXCONN) != 0) return absl::InternalError(Errno("listen", path));
  l->wake_fd_ = eventfd(0, EFD_CLOEXEC);
  if (l->wake_fd_ < 0) return absl::InternalError(Errno("eventfd", path));
  l->admin_ = builder.experimental().AddExternalConnectionAcceptor(
      Acceptor::FROM_FD, grpc::InsecureServerCredentials());
  // Local credentials check that the connection is a Unix socket and mark its calls'
  // transport_security_type "local" (tls::kLocalReadTransport); nothing goes on the wire.
  l->reader_ = builder.experimental().AddExternalConnectionAcceptor(
      Acceptor::FROM_FD, grpc::experimental::LocalServerCredentials(UDS));
  return l;
}

LocalSocketListener::~LocalSocketListener() {
  Stop();
  if (listen_fd_ >= 0) close(listen_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

void LocalSocketListener::Start() {
  thread_ = std::thread([this] { AcceptLoop(); });
}

void LocalSocketListener::Stop() {
  if (wake_fd_ < 0 || path_.empty()) return;
  const uint64_t one = 1;
  if (write(wake_fd_, &one, sizeof(one)) < 0) {
    // Only fails if the counter is full, in which case the loop is awake anyway.
  }
  if (thread_.joinable()) thread_.join();
  unlink(path_.c_str());
  path_.clear();
}

void LocalSocketListener::AcceptLoop() {
  const uid_t server_uid = geteuid();
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_, POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      LogEvent(LogLevel::kError, "controller", "local_socket_poll_failed")
          .Field("error", strerror(errno));
      return;
    }
    if (fds[1].revents != 0) return;
    // gRPC reads and writes the connection without blocking: it must be non-blocking.
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        LogEvent(LogLevel::kWarning, "controller", "local_socket_accept_failed")
            .Field("error", strerror(errno));
        poll(nullptr, 0, 100);  // out of descriptors: do not spin
      }
      continue;  // EAGAIN, ECONNABORTED, EINTR: the next one
    }
    ucred peer{};
    socklen_t len = sizeof(peer);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len) != 0) {
      close(fd);  // no credentials, no role
      continue;
    }
    const bool admin = IsLocalAdmin(peer.uid, peer.gid, server_uid, LocalAdminGroup());
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters params;
    params.listener_fd = listen_fd_;
    params.fd = fd;  // gRPC owns it from here
    (admin ? admin_ : reader_)->HandleNewConnection(&params);
  }
}

}  // namespace blkbench
