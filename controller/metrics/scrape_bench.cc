// scrape_bench: what a Prometheus scrape of the controller costs as experiments grow.
// Feeds a PrometheusExporter N finished runs (each with a live-sample series set and the
// result and internals of one real engine run), then measures, side by side in one
// process: serializing /metrics, gzip-compressing it, and fetching it over loopback HTTP
// plain and gzip-encoded (as Prometheus does). Prints one line per N; bench/scrape_bench.sh
// turns them into the table in docs/performance.md.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/time/clock.h"
#include "common/clock.h"
#include "common/histogram.h"
#include "common/http/gzip.h"
#include "common/http/http_get.h"
#include "controller/metrics/prometheus_exporter.h"
#include "engine/model/engine_runner.h"
#include "workloads/matrix.h"

namespace blkbench {
namespace {

constexpr int kRepeats = 5;

template <typename F>
double MedianMs(F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < kRepeats; ++i) {
    const absl::Time t = absl::Now();
    f();
    ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - t));
  }
  std::sort(ms.begin(), ms.end());
  return ms[kRepeats / 2];
}

int Main() {
  auto m = workloads::ParseMatrix(R"(name: b
job: {rw: randread, bs: 4k, iodepth: 8, numjobs: 2, ioengine: io_uring, runtime: 5ms,
      time_based: 1, scheduler: mq-deadline}
target: {device_class: sim:null_blk, kernel: "sim:6.16"}
)",
                                  "bench.yaml");
  if (!m.ok()) return 1;
  RunContext ctx;
  ctx.cell = m->cells[0];
  ctx.target_path = "sim:null_blk";
  ctx.target_size = engine::kSimulatedDeviceBytes;
  auto result = engine::NewEngineRunner()->Run(ctx);
  if (!result.ok()) return 1;
  LatencyHistogram lat;
  for (uint64_t i = 0; i < 5000; ++i) lat.Add(50'000 + (i * 7919) % 200'000);
  v1::Sample sample;
  sample.set_seq(1);
  sample.set_interval_ns(1'000'000'000);
  sample.mutable_io()->set_read_ios(5000);
  sample.mutable_io()->set_read_bytes(5000 * 4096);
  lat.ToProto(sample.mutable_lat());

  for (int runs : {16, 160, 1600}) {
    FakeClock clock;
    auto exporter = PrometheusExporter::Start(ExporterListening("127.0.0.1:0"), clock);
    if (!exporter.ok()) return 1;
    for (int id = 1; id <= runs; ++id) {
      v1::Run run;
      run.set_id(static_cast<uint64_t>(id));
      run.set_experiment_id(1);
      run.set_attempt(1);
      run.set_agent_id("agent-" + std::to_string(id % 8));
      run.set_device_path("sim:null_blk");
      (*exporter)->OnRunSample(run, ctx.cell, sample);
      (*exporter)->OnRunResult(run, ctx.cell, *result);
      (*exporter)->OnRunFinished(run);
    }
    std::string body;
    const double serialize_ms = MedianMs([&] { body = (*exporter)->Scrape(); });
    std::string z;
    const double gzip_ms = MedianMs([&] { z = GzipCompress(body); });
    const int port = (*exporter)->port();
    absl::Status fetched;
    auto fetch = [&](bool gzip) {
      auto r = HttpGet(port, "/metrics", {.timeout = absl::Seconds(60), .accept_gzip = gzip});
      if (!r.ok()) fetched = r.status();
    };
    const double plain_ms = MedianMs([&] { fetch(false); });
    const double gz_ms = MedianMs([&] { fetch(true); });
    if (!fetched.ok()) {
      fprintf(stderr, "scrape_bench: %s\n", fetched.ToString().c_str());
      return 1;
    }
    printf(
        "runs %d bytes %zu gzip_bytes %zu serialize_ms %.2f gzip_ms %.2f fetch_plain_ms %.2f "
        "fetch_gzip_ms %.2f\n",
        runs, body.size(), z.size(), serialize_ms, gzip_ms, plain_ms, gz_ms);
  }
  return 0;
}

}  // namespace
}  // namespace blkbench

int main() { return blkbench::Main(); }
