// The pvsync2 engine: one preadv2/pwritev2 at a time, RWF_HIPRI when the job asks for
// hipri, so the kernel polls for the completion (fio engines/sync.c fio_pvsyncio2_queue;
// FIO_SYNCIO, so iodepth 1).
#include <errno.h>
#include <sys/uio.h>
#include <unistd.h>

#include <memory>

#include "agent/executor/engine_registry.h"
#include "agent/executor/io_engine.h"

namespace blkbench {
namespace {

class Pvsync2Engine final : public IoEngine {
 public:
  bool Init(const EngineSetup& setup) override {
    fd_ = setup.fd;
    flags_ = setup.plan.hipri ? RWF_HIPRI : 0;
    return true;
  }
  QueueResult Queue(IoUnit& io) override {
    const iovec iov{io.buf, io.len};
    const off_t off = static_cast<off_t>(io.offset);
    ssize_t r;
    do {
      r = io.write ? pwritev2(fd_, &iov, 1, off, flags_) : preadv2(fd_, &iov, 1, off, flags_);
    } while (r < 0 && errno == EINTR);
    io.result = r < 0 ? -errno : r;
    return QueueResult::kCompleted;
  }
  void Cleanup() override {}

 private:
  int fd_ = -1;
  int flags_ = 0;
};

}  // namespace

std::unique_ptr<IoEngine> NewPvsync2Engine() { return std::make_unique<Pvsync2Engine>(); }

}  // namespace blkbench
