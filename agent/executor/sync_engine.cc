// The sync engine: read/write at the file position, with an lseek only when the next
// offset is not where the last I/O ended (fio engines/sync.c fio_syncio_prep /
// fio_syncio_queue; FIO_SYNCIO, so iodepth 1). Sequential jobs issue no lseek at all.
#include <errno.h>
#include <unistd.h>

#include <memory>

#include "agent/executor/engine_registry.h"
#include "agent/executor/io_engine.h"

namespace blkbench {
namespace {

class SyncEngine final : public IoEngine {
 public:
  bool Init(const EngineSetup& setup) override {
    fd_ = setup.fd;
    pos_ = -1;  // unknown: the first I/O seeks
    return true;
  }
  QueueResult Queue(IoUnit& io) override {
    const off_t off = static_cast<off_t>(io.offset);
    if (off != pos_ && lseek(fd_, off, SEEK_SET) < 0) {
      io.result = -errno;
      pos_ = -1;
      return QueueResult::kCompleted;
    }
    ssize_t r;
    do {
      r = io.write ? write(fd_, io.buf, io.len) : read(fd_, io.buf, io.len);
    } while (r < 0 && errno == EINTR);
    io.result = r < 0 ? -errno : r;
    pos_ = r < 0 ? -1 : off + r;  // fio: f->last_pos = offset + transferred
    return QueueResult::kCompleted;
  }
  void Cleanup() override {}

 private:
  int fd_ = -1;
  off_t pos_ = -1;
};

}  // namespace

std::unique_ptr<IoEngine> NewSyncEngine() { return std::make_unique<SyncEngine>(); }

}  // namespace blkbench
