// The psync engine: one pread/pwrite at a time, done when queue() returns (fio
// engines/sync.c fio_psyncio_queue; FIO_SYNCIO, so iodepth 1).
#include <errno.h>
#include <unistd.h>

#include <memory>

#include "agent/executor/engine_registry.h"
#include "agent/executor/io_engine.h"

namespace blkbench {
namespace {

class PsyncEngine final : public IoEngine {
 public:
  bool Init(const EngineSetup& setup) override {
    fd_ = setup.fd;
    return true;
  }
  QueueResult Queue(IoUnit& io) override {
    const off_t off = static_cast<off_t>(io.offset);
    ssize_t r;
    do {
      r = io.write ? pwrite(fd_, io.buf, io.len, off) : pread(fd_, io.buf, io.len, off);
    } while (r < 0 && errno == EINTR);
    io.result = r < 0 ? -errno : r;
    return QueueResult::kCompleted;
  }
  void Cleanup() override {}

 private:
  int fd_ = -1;
};

}  // namespace

std::unique_ptr<IoEngine> NewPsyncEngine() { return std::make_unique<PsyncEngine>(); }

}  // namespace blkbench
