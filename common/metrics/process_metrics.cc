// process_* and build-info families from /proc/self; see process_metrics.h.
#include "common/metrics/process_metrics.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/build_info.h"

namespace blkbench {
namespace {

prometheus::MetricFamily Family(const char* name, const char* help, prometheus::MetricType type,
                                double value) {
  prometheus::MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  f.metric.push_back(m);
  return f;
}

// Fields of /proc/self/stat after the command name (which may hold spaces): field 3
// (state) is index 0, so utime (14) is 11, stime 12, num_threads (20) 17, starttime
// (22) 19, vsize (23) 20, rss (24) in pages 21. proc(5).
std::vector<std::string> StatFields() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  std::vector<std::string> out;
  if (close == std::string::npos) return out;
  std::istringstream rest(text.substr(close + 2));
  for (std::string f; rest >> f;) out.push_back(f);
  return out;
}

double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

std::vector<prometheus::MetricFamily> CollectProcessMetrics() {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  const std::vector<std::string> f = StatFields();
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  if (f.size() > 21 && ticks > 0) {
    out.push_back(Family("process_cpu_seconds_total", "Total user and system CPU time spent",
                         MetricType::Counter, (std::stod(f[11]) + std::stod(f[12])) / ticks));
    out.push_back(Family("process_threads", "Number of OS threads in the process",
                         MetricType::Gauge, std::stod(f[17])));
    out.push_back(Family("process_start_time_seconds",
                         "Start time of the process since the Unix epoch", MetricType::Gauge,
                         BootTimeSeconds() + std::stod(f[19]) / ticks));
    out.push_back(Family("process_virtual_memory_bytes", "Virtual memory size", MetricType::Gauge,
                         std::stod(f[20])));
    out.push_back(Family("process_resident_memory_bytes", "Resident memory size", MetricType::Gauge,
                         std::stod(f[21]) * page));
  }
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++fds;
  }
  if (!ec) {
    out.push_back(
        Family("process_open_fds", "Number of open file descriptors", MetricType::Gauge, fds));
  }
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY) {
    out.push_back(Family("process_max_fds", "Maximum number of open file descriptors",
                         MetricType::Gauge, static_cast<double>(nofile.rlim_cur)));
  }
  prometheus::MetricFamily info =
      Family("blkbench_build_info", "Always 1; labels give the blkbench version and git revision",
             MetricType::Gauge, 1);
  info.metric[0].label = {{"version", BuildVersion()}, {"revision", BuildRevision()}};
  out.push_back(info);
  return out;
}

}  // namespace blkbench
