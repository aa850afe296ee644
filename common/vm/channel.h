// Framing of the VM channel (proto/blkbench/v1/vm.proto): a 4-byte little-endian length,
// then that many bytes of one serialized message. Used on both ends: the host's Unix
// socket to qemu's chardev and the guest's virtio-serial port.
#ifndef BLKBENCH_COMMON_VM_CHANNEL_H_
#define BLKBENCH_COMMON_VM_CHANNEL_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/message_lite.h"

namespace blkbench::vm {

// The largest frame either side accepts: output chunks are 64 KiB, requests are an argv.
inline constexpr size_t kMaxFrameBytes = 4 << 20;

// Splits a byte stream into frames as its bytes arrive (a channel, or the stdout of a
// guest command that writes frames: agent/vm's blkbench-vm-cell).
class FrameSplitter {
 public:
  void Append(absl::string_view bytes) { buffer_.append(bytes.data(), bytes.size()); }
  // Parses the next whole frame into `msg`: true; false when no whole frame is buffered
  // yet. DataLoss for a frame over kMaxFrameBytes or one that does not parse.
  absl::StatusOr<bool> Next(google::protobuf::MessageLite& msg);
  size_t buffered() const { return buffer_.size(); }

 private:
  std::string buffer_;
};

// Reads frames from one fd, keeping bytes that arrived beyond the current frame.
class FrameReader {
 public:
  explicit FrameReader(int fd) : fd_(fd) {}

  // Reads the next frame into `msg`, waiting (poll) until `deadline` (MonotonicNow()'s
  // clock). When `watch_fd` >= 0 becomes readable first (a pidfd: qemu exited) the read
  // fails with Unavailable. Errors: DeadlineExceeded, Unavailable on EOF,
  // DataLoss for a frame over kMaxFrameBytes or one that does not parse.
  absl::Status Read(google::protobuf::MessageLite& msg, absl::Time deadline, int watch_fd = -1);

 private:
  int fd_;
  FrameSplitter frames_;
};

// One frame's bytes: the length prefix and the serialized message. InvalidArgument over
// kMaxFrameBytes.
absl::StatusOr<std::string> EncodeFrame(const google::protobuf::MessageLite& msg);

// Writes one frame (blocking until written or `deadline`). Unavailable when the peer is
// gone, DeadlineExceeded when it stops reading.
absl::Status WriteFrame(int fd, const google::protobuf::MessageLite& msg, absl::Time deadline);

}  // namespace blkbench::vm

#endif  // BLKBENCH_COMMON_VM_CHANNEL_H_
