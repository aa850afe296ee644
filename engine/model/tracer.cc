// Tracer: blkparse-format D and C lines (blktrace.h), with blktrace's per-CPU sequence
// numbers and fio / kworker pids.
#include "engine/model/tracer.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "common/blktrace.h"

namespace blkbench::engine {
namespace {

constexpr int kKworkerPidBase = 90;  // kblockd workers' pids in the trace

}  // namespace

void Tracer::Init(int major, int nr_cpus) {
  major_ = major;
  seq_.assign(static_cast<size_t>(nr_cpus), 0);
}

void Tracer::set_sink(std::ostream* out, uint64_t max_events) {
  out_ = out;
  left_ = out != nullptr ? max_events : 0;
}

// One blkparse line. pid -1 = a kblockd worker on `cpu`; C events carry the error (0).
void Tracer::Event(char action, uint32_t index, int cpu, int pid) {
  if (left_ == 0) return;
  --left_;
  ++written_;
  const Request& rq = q_.requests[index];
  std::string comm = action == 'C' ? "0" : "fio";  // C events show the error
  if (pid < 0) {
    pid = kKworkerPidBase + cpu;
    if (action != 'C') comm = absl::StrCat("kworker/", cpu, ":1H");
  }
  BlktraceEvent e;
  e.major = major_;
  e.minor = static_cast<int>(q_.HctxOf(index) / q_.hw_per_device);  // engine.devices
  e.cpu = cpu;
  e.seq = ++seq_[static_cast<size_t>(cpu)];
  e.time_ns = q_.sim.now();
  e.pid = action == 'C' ? 0 : pid;
  e.action = action;
  e.rwbs = rq.write ? "WS" : "R";
  e.sector = rq.sector;
  e.sectors = rq.sectors;
  e.tail = comm;
  *out_ << BlktraceLine(e) << '\n';
}

}  // namespace blkbench::engine
