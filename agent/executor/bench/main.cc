// blkbench-exec-bench: runs one JobSpec (fio-like flags) with IoExecutor against a file or
// block device and prints one JSON line (iops, CPU per I/O, latency) for bench/ scripts.
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "agent/executor/executor.h"
#include "common/resolved_job.h"

ABSL_FLAG(std::string, filename, "", "target file or block device (must exist)");
ABSL_FLAG(std::string, rw, "randread", "read|write|randread|randwrite|randrw|readwrite");
ABSL_FLAG(std::string, ioengine, "io_uring", "io_uring|libaio|psync|sync|pvsync2|nop (fio's null)");
ABSL_FLAG(uint64_t, bs, 4096, "block size, bytes");
ABSL_FLAG(uint32_t, iodepth, 1, "fio iodepth");
ABSL_FLAG(uint32_t, numjobs, 1, "fio numjobs");
ABSL_FLAG(uint32_t, iodepth_batch_submit, 1, "fio iodepth_batch_submit (0 = iodepth)");
ABSL_FLAG(uint32_t, iodepth_batch_complete_min, 1, "fio iodepth_batch_complete_min");
ABSL_FLAG(uint32_t, iodepth_batch_complete_max, 0, "fio iodepth_batch_complete_max (0 = min)");
ABSL_FLAG(uint32_t, rwmixread, 50, "percent reads for mixed modes");
ABSL_FLAG(bool, direct, true, "O_DIRECT");
ABSL_FLAG(bool, thread, false, "jobs as threads instead of processes");
ABSL_FLAG(bool, hipri, false, "IORING_SETUP_IOPOLL");
ABSL_FLAG(bool, fixedbufs, false, "registered buffers");
ABSL_FLAG(bool, registerfiles, false, "registered file");
ABSL_FLAG(bool, sqthread_poll, false, "IORING_SETUP_SQPOLL");
ABSL_FLAG(double, runtime, 5, "seconds (time_based)");
ABSL_FLAG(double, ramp_time, 0, "seconds");
ABSL_FLAG(uint64_t, size, 0, "region per job, bytes (0 = whole target)");
ABSL_FLAG(uint64_t, offset_increment, 0, "bytes");
ABSL_FLAG(std::string, cpus_allowed, "", "fio cpu list");
ABSL_FLAG(uint64_t, randseed, 0x89, "random seed");
ABSL_FLAG(bool, norandommap, false, "fio norandommap: random offsets with replacement");

namespace {

bool TargetSize(const std::string& path, uint64_t* size, uint32_t* lbs) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  bool ok = fstat(fd, &st) == 0;
  *lbs = 512;
  if (ok && S_ISBLK(st.st_mode)) {
    int ssz = 512;
    ok = ioctl(fd, BLKGETSIZE64, size) == 0 && ioctl(fd, BLKSSZGET, &ssz) == 0;
    *lbs = static_cast<uint32_t>(ssz);
  } else if (ok) {
    *size = static_cast<uint64_t>(st.st_size);
  }
  close(fd);
  return ok;
}

blkbench::v1::RwMode ParseRw(const std::string& s) {
  if (s == "read") return blkbench::v1::READ;
  if (s == "write") return blkbench::v1::WRITE;
  if (s == "randread") return blkbench::v1::RANDREAD;
  if (s == "randwrite") return blkbench::v1::RANDWRITE;
  if (s == "randrw") return blkbench::v1::RANDRW;
  if (s == "readwrite" || s == "rw") return blkbench::v1::READWRITE;
  return blkbench::v1::RW_MODE_UNSPECIFIED;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  blkbench::RunContext ctx;
  ctx.target_path = absl::GetFlag(FLAGS_filename);
  if (!TargetSize(ctx.target_path, &ctx.target_size, &ctx.logical_block_size)) {
    fprintf(stderr, "cannot open/size %s: %s\n", ctx.target_path.c_str(), strerror(errno));
    return 2;
  }
  blkbench::v1::JobSpec& j = *ctx.cell.mutable_job();
  j.set_rw(ParseRw(absl::GetFlag(FLAGS_rw)));
  const blkbench::IoEngineInfo* engine = blkbench::FindIoEngine(absl::GetFlag(FLAGS_ioengine));
  if (engine == nullptr) {
    fprintf(stderr, "unknown --ioengine %s (one of %s)\n", absl::GetFlag(FLAGS_ioengine).c_str(),
            blkbench::IoEngineNames().c_str());
    return 2;
  }
  j.set_ioengine(engine->proto);
  j.set_bs(absl::GetFlag(FLAGS_bs));
  j.set_iodepth(absl::GetFlag(FLAGS_iodepth));
  j.set_numjobs(absl::GetFlag(FLAGS_numjobs));
  j.set_iodepth_batch_submit(absl::GetFlag(FLAGS_iodepth_batch_submit));
  j.set_iodepth_batch_complete_min(absl::GetFlag(FLAGS_iodepth_batch_complete_min));
  j.set_iodepth_batch_complete_max(absl::GetFlag(FLAGS_iodepth_batch_complete_max));
  j.set_rwmixread(absl::GetFlag(FLAGS_rwmixread));
  j.set_direct(absl::GetFlag(FLAGS_direct));
  j.set_thread(absl::GetFlag(FLAGS_thread));
  j.set_hipri(absl::GetFlag(FLAGS_hipri));
  j.set_fixedbufs(absl::GetFlag(FLAGS_fixedbufs));
  j.set_registerfiles(absl::GetFlag(FLAGS_registerfiles));
  j.set_sqthread_poll(absl::GetFlag(FLAGS_sqthread_poll));
  j.set_time_based(true);
  j.set_runtime_ns(static_cast<uint64_t>(absl::GetFlag(FLAGS_runtime) * 1e9));
  j.set_ramp_time_ns(static_cast<uint64_t>(absl::GetFlag(FLAGS_ramp_time) * 1e9));
  j.set_size(absl::GetFlag(FLAGS_size));
  j.set_offset_increment(absl::GetFlag(FLAGS_offset_increment));
  j.set_cpus_allowed(absl::GetFlag(FLAGS_cpus_allowed));
  j.set_randseed(absl::GetFlag(FLAGS_randseed));
  j.set_norandommap(absl::GetFlag(FLAGS_norandommap));

  absl::StatusOr<blkbench::v1::RunResult> r = blkbench::NewIoExecutor()->Run(ctx);
  if (!r.ok()) {
    fprintf(stderr, "run failed: %s\n", r.status().ToString().c_str());
    return 1;
  }
  const uint64_t ios = r->io().read_ios() + r->io().write_ios();
  const double cpu_us = static_cast<double>(r->usr_cpu_ns() + r->sys_cpu_ns()) / 1e3;
  const auto in = [&](const char* k) {
    auto it = r->internals().find(k);
    return it == r->internals().end() ? 0.0 : it->second;
  };
  printf(
      "{\"iops\": %.1f, \"ios\": %llu, \"duration_ns\": %llu, \"usr_cpu_ns\": %llu, "
      "\"sys_cpu_ns\": %llu, \"cpu_us_per_io\": %.4f, \"lat_mean_ns\": %.1f, \"lat_p50_ns\": "
      "%llu, \"lat_p99_ns\": %llu, \"submit_calls\": %.0f, \"reap_calls\": %.0f, "
      "\"ring_flags\": %.0f}\n",
      r->iops(), static_cast<unsigned long long>(ios),
      static_cast<unsigned long long>(r->duration_ns()),
      static_cast<unsigned long long>(r->usr_cpu_ns()),
      static_cast<unsigned long long>(r->sys_cpu_ns()), ios ? cpu_us / ios : 0.0,
      r->lat_summary().mean_ns(), static_cast<unsigned long long>(r->lat_summary().p50_ns()),
      static_cast<unsigned long long>(r->lat_summary().p99_ns()), in("executor.submit_calls"),
      in("executor.reap_calls"), in("executor.ring_flags"));
  return 0;
}
