// LocalSocketListener: the controller's Unix socket, the zero-setup local default. Its
// connections are accepted here, not by gRPC, so that each caller's peer credentials
// (SO_PEERCRED) decide its role before gRPC sees a byte: root, the controller's own user
// and members of the `blkbench` group are admin; every other local user may only read.
//
// Why this shape: gRPC 1.51 exposes no peer uid for Unix sockets (the auth context of a
// plain connection is empty; context->peer() is "unix:"). It does take connections
// accepted elsewhere (ServerBuilder's external connection acceptors), each acceptor
// with its own server credentials. Admins' connections go to an acceptor with insecure
// credentials, everyone else's to one with local credentials; the call's
// transport_security_type ("insecure" / "local") then carries the role to
// tls::CallerIdentity. The client cannot influence it, and no table maps connections to
// users, so nothing goes stale when file descriptor numbers are reused.
#ifndef BLKBENCH_CONTROLLER_LOCAL_SOCKET_H_
#define BLKBENCH_CONTROLLER_LOCAL_SOCKET_H_

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "grpcpp/server_builder.h"

namespace blkbench {

// The group whose members are admin on the controller's Unix socket, if it exists.
inline constexpr char kLocalAdminGroup[] = "blkbench";

// Whether the local user `uid` (primary group `gid`) is admin on a socket served by
// `server_uid`: root, the server's own user, or a member (primary or supplementary, as
// the group database says) of `admin_group` (nullopt: no such group).
bool IsLocalAdmin(uid_t uid, gid_t gid, uid_t server_uid, std::optional<gid_t> admin_group);

// kLocalAdminGroup's gid, or nullopt if the group does not exist.
std::optional<gid_t> LocalAdminGroup();

// Not thread-safe: Bind, Start and Stop from one thread (the server's owner).
class LocalSocketListener {
 public:
  // Listens on `path` with mode 0666 (every local user may connect; the role comes from
  // the peer, and a directory mode can still keep users out) and registers its two
  // acceptors on `builder`, which must then be built. Makes the parent directory (0755)
  // if it is missing; replaces a stale socket but nothing else, and refuses a socket a
  // live server answers on. Errors name the path.
  static absl::StatusOr<std::unique_ptr<LocalSocketListener>> Bind(const std::string& path,
                                                                   grpc::ServerBuilder& builder);
  ~LocalSocketListener();  // Stop()s

  // Starts accepting. REQUIRES: the server `builder` built is started.
  void Start();
  // Stops accepting, closes and removes the socket. Connections already handed to gRPC
  // end with the server. Idempotent.
  void Stop();

 private:
  LocalSocketListener() = default;
  void AcceptLoop();

  std::string path_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: Stop() wakes the accept loop
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> admin_;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> reader_;
  std::thread thread_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CONTROLLER_LOCAL_SOCKET_H_
