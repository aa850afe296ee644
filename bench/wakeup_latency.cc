// A machine profile's wakeup_ns (engine/profiles/README.md): how long a task blocked in
// read() on one CPU takes to run after another CPU writes to its pipe — try_to_wake_up(),
// the IPI, the idle exit and the context switch; on a VM also the exit to the host and
// the vCPU's own wake-up. The sleeper is idle for --idle_us before each wake (a tag
// waiter sleeps about as long as a few completions take). Prints the median and 90th
// percentile the profile takes, and the tail.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"

ABSL_FLAG(int, waker_cpu, 0, "CPU of the waking thread");
ABSL_FLAG(int, sleeper_cpu, 1, "CPU of the sleeping thread");
ABSL_FLAG(int, samples, 20000, "wake-ups to time");
ABSL_FLAG(int, idle_us, 50, "how long the sleeper is idle before each wake-up");

namespace {

uint64_t NowNs() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000 + static_cast<uint64_t>(t.tv_nsec);
}

bool Pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

struct Shared {
  int wake[2] = {-1, -1};  // waker -> sleeper: the send time
  int done[2] = {-1, -1};  // sleeper -> waker: ready for the next one
  int samples = 0;
  int cpu = 0;
  std::vector<uint64_t> latency_ns;
  bool ok = true;
};

void* Sleeper(void* arg) {
  auto* s = static_cast<Shared*>(arg);
  s->ok = Pin(s->cpu);
  for (int i = 0; i < s->samples && s->ok; ++i) {
    uint64_t sent = 0;
    if (read(s->wake[0], &sent, sizeof sent) != sizeof sent) s->ok = false;
    s->latency_ns.push_back(NowNs() - sent);
    const char c = 1;
    if (write(s->done[1], &c, 1) != 1) s->ok = false;
  }
  return nullptr;
}

double Us(const std::vector<uint64_t>& v, double q) {
  return static_cast<double>(v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))]) / 1e3;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  Shared s;
  s.samples = absl::GetFlag(FLAGS_samples);
  s.cpu = absl::GetFlag(FLAGS_sleeper_cpu);
  const uint64_t idle_ns = static_cast<uint64_t>(absl::GetFlag(FLAGS_idle_us)) * 1000;
  if (s.samples < 10 || pipe(s.wake) != 0 || pipe(s.done) != 0 ||
      !Pin(absl::GetFlag(FLAGS_waker_cpu))) {
    std::fprintf(stderr, "wakeup_latency: bad --samples, no pipe or cannot pin the waker\n");
    return 2;
  }
  s.latency_ns.reserve(static_cast<size_t>(s.samples));
  pthread_t thread;
  if (pthread_create(&thread, nullptr, Sleeper, &s) != 0) return 2;
  for (int i = 0; i < s.samples; ++i) {
    const uint64_t start = NowNs();
    while (NowNs() - start < idle_ns) {
    }
    const uint64_t sent = NowNs();
    char c = 0;
    if (write(s.wake[1], &sent, sizeof sent) != sizeof sent || read(s.done[0], &c, 1) != 1) {
      s.ok = false;
      break;
    }
  }
  pthread_join(thread, nullptr);
  if (!s.ok) {
    std::fprintf(stderr, "wakeup_latency: a pipe failed or the sleeper could not be pinned\n");
    return 1;
  }
  std::sort(s.latency_ns.begin(), s.latency_ns.end());
  std::printf("idle %d us, %d wake-ups: median %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us\n",
              absl::GetFlag(FLAGS_idle_us), s.samples, Us(s.latency_ns, 0.5), Us(s.latency_ns, 0.9),
              Us(s.latency_ns, 0.99), Us(s.latency_ns, 1.0));
  return 0;
}
