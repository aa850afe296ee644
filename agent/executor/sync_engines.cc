// The synchronous engines, one I/O at a time, done when queue() returns (fio
// engines/sync.c; FIO_SYNCIO, so iodepth 1):
//   psync    pread/pwrite at the offset (fio_psyncio_queue);
//   pvsync2  preadv2/pwritev2, with RWF_HIPRI when the job asks for hipri, so the kernel
//            polls for the completion (fio_pvsyncio2_queue);
//   sync     read/write at the file position, with an lseek only when the next offset
//            is not where the last I/O ended (fio_syncio_prep / fio_syncio_queue), so a
//            sequential job issues no lseek at all.
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "agent/executor/engine_registry.h"
#include "agent/executor/io_engine.h"

namespace blkbench {
namespace {

// What the three share: the job's fd, a system call retried on EINTR, its result as the
// I/O's (bytes or -errno), and nothing to clean up.
class SyncIoEngine : public IoEngine {
 public:
  bool Init(const EngineSetup& setup) override {
    fd_ = setup.fd;
    return true;
  }
  void Cleanup() override {}

 protected:
  // Runs `call` (returning a byte count or -1 with errno) until it is not interrupted,
  // stores its outcome in io.result and returns it.
  template <typename Call>
  static ssize_t Complete(IoUnit& io, Call call) {
    ssize_t r;
    do {
      r = call();
    } while (r < 0 && errno == EINTR);
    io.result = r < 0 ? -errno : r;
    return r;
  }

  int fd_ = -1;
};

class PsyncEngine final : public SyncIoEngine {
 public:
  QueueResult Queue(IoUnit& io) override {
    const off_t off = static_cast<off_t>(io.offset);
    Complete(io, [&] {
      return io.write ? pwrite(fd_, io.buf, io.len, off) : pread(fd_, io.buf, io.len, off);
    });
    return QueueResult::kCompleted;
  }
};

class Pvsync2Engine final : public SyncIoEngine {
 public:
  bool Init(const EngineSetup& setup) override {
    flags_ = setup.plan.job->hipri ? RWF_HIPRI : 0;
    return SyncIoEngine::Init(setup);
  }
  QueueResult Queue(IoUnit& io) override {
    const iovec iov{io.buf, io.len};
    const off_t off = static_cast<off_t>(io.offset);
    Complete(io, [&] {
      return io.write ? pwritev2(fd_, &iov, 1, off, flags_) : preadv2(fd_, &iov, 1, off, flags_);
    });
    return QueueResult::kCompleted;
  }

 private:
  int flags_ = 0;
};

class SyncEngine final : public SyncIoEngine {
 public:
  bool Init(const EngineSetup& setup) override {
    pos_ = -1;  // unknown: the first I/O seeks
    return SyncIoEngine::Init(setup);
  }
  QueueResult Queue(IoUnit& io) override {
    const off_t off = static_cast<off_t>(io.offset);
    if (off != pos_ && lseek(fd_, off, SEEK_SET) < 0) {
      io.result = -errno;
      pos_ = -1;
      return QueueResult::kCompleted;
    }
    const ssize_t r = Complete(
        io, [&] { return io.write ? write(fd_, io.buf, io.len) : read(fd_, io.buf, io.len); });
    pos_ = r < 0 ? -1 : off + r;  // fio: f->last_pos = offset + transferred
    return QueueResult::kCompleted;
  }

 private:
  off_t pos_ = -1;
};

}  // namespace

std::unique_ptr<IoEngine> NewPsyncEngine() { return std::make_unique<PsyncEngine>(); }
std::unique_ptr<IoEngine> NewPvsync2Engine() { return std::make_unique<Pvsync2Engine>(); }
std::unique_ptr<IoEngine> NewSyncEngine() { return std::make_unique<SyncEngine>(); }

}  // namespace blkbench
