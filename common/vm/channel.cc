// Length-prefixed protobuf frames over a stream fd, with deadlines (see channel.h).
#include "common/vm/channel.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "common/vm/process.h"

namespace blkbench::vm {

absl::StatusOr<bool> FrameSplitter::Next(google::protobuf::MessageLite& msg) {
  if (buffer_.size() < 4) return false;
  const auto* b = reinterpret_cast<const unsigned char*>(buffer_.data());
  uint32_t len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  if (len > kMaxFrameBytes) {
    return absl::DataLossError(
        absl::StrCat("channel frame of ", len, " bytes (limit ", kMaxFrameBytes, ")"));
  }
  if (buffer_.size() < 4 + len) return false;
  bool ok = msg.ParseFromArray(buffer_.data() + 4, static_cast<int>(len));
  buffer_.erase(0, 4 + len);
  if (!ok) return absl::DataLossError("channel frame does not parse");
  return true;
}

absl::Status FrameReader::Read(google::protobuf::MessageLite& msg, absl::Time deadline,
                               int watch_fd) {
  for (;;) {
    absl::StatusOr<bool> whole = frames_.Next(msg);
    if (!whole.ok()) return whole.status();
    if (*whole) return absl::OkStatus();
    pollfd fds[2] = {{fd_, POLLIN, 0}, {watch_fd, POLLIN, 0}};
    int ms = PollTimeoutMs(deadline);
    int n = poll(fds, watch_fd >= 0 ? 2 : 1, ms);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, "poll on the channel");
    if (fds[0].revents != 0) {
      char buf[65536];
      ssize_t r = read(fd_, buf, sizeof(buf));
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (r < 0) return absl::UnavailableError(absl::StrCat("channel read: ", strerror(errno)));
      if (r == 0) return absl::UnavailableError("channel closed by the peer");
      frames_.Append(absl::string_view(buf, static_cast<size_t>(r)));
      continue;
    }
    if (watch_fd >= 0 && fds[1].revents != 0) {
      return absl::UnavailableError("the peer's process exited");
    }
    if (n == 0 && PollTimeoutMs(deadline) == 0) {
      return absl::DeadlineExceededError("no message on the channel before the deadline");
    }
  }
}

absl::StatusOr<std::string> EncodeFrame(const google::protobuf::MessageLite& msg) {
  std::string body;
  if (!msg.SerializeToString(&body)) return absl::InternalError("serialize a channel frame");
  if (body.size() > kMaxFrameBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("channel frame of ", body.size(), " bytes (limit ", kMaxFrameBytes, ")"));
  }
  uint32_t len = static_cast<uint32_t>(body.size());
  std::string frame = {static_cast<char>(len & 0xff), static_cast<char>((len >> 8) & 0xff),
                       static_cast<char>((len >> 16) & 0xff), static_cast<char>(len >> 24)};
  frame += body;
  return frame;
}

absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& msg, absl::Time deadline) {
  absl::StatusOr<std::string> encoded = EncodeFrame(msg);
  if (!encoded.ok()) return encoded.status();
  const std::string& frame = *encoded;
  size_t done = 0;
  while (done < frame.size()) {
    pollfd pfd{fd, POLLOUT, 0};
    int n = poll(&pfd, 1, PollTimeoutMs(deadline));
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return absl::DeadlineExceededError("the channel's peer stopped reading");
    if ((pfd.revents & (POLLERR | POLLHUP)) != 0 && (pfd.revents & POLLOUT) == 0) {
      return absl::UnavailableError("channel closed by the peer");
    }
    // A socket whose peer is gone (qemu killed) must fail the write, not raise SIGPIPE in
    // the agent: send with MSG_NOSIGNAL, write where fd is not a socket (a pipe, a port).
    ssize_t w = send(fd, frame.data() + done, frame.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = write(fd, frame.data() + done, frame.size() - done);
    if (w < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (w < 0) return absl::UnavailableError(absl::StrCat("channel write: ", strerror(errno)));
    done += static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

}  // namespace blkbench::vm
