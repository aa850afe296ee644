// Tests for the HDD model: seek curve, rotation, zoned rate, sequential streaming, the
// write-cache lost revolution, NCQ reordering and the psync randwrite calibration.
#include "engine/device/hdd.h"

#include <cmath>
#include <cstdio>

#include "engine/device/closed_loop_harness.h"
#include "engine/device/device_presets.h"
#include "gtest/gtest.h"

namespace blkbench::engine {
namespace {

constexpr uint64_t kGiBSectors = (uint64_t{1} << 30) / 512;
constexpr double kRotationMs = 60'000.0 / 7'200;

double Ms(double ns) { return ns / 1e6; }

TEST(HddGeometryTest, SeekCurveMatchesDatasheetPoints) {
  HddGeometry g(HddPreset().geometry);
  const double track_to_track = g.SeekUs(1.0 / g.tracks());
  EXPECT_GE(track_to_track, 500);
  EXPECT_LE(track_to_track, 1'000);
  EXPECT_NEAR(g.SeekUs(1.0), 18'000, 1);
  EXPECT_NEAR(g.MeanSeekUs(g.knee()), 8'500, 10);
  // Monotone, and continuous where the sqrt and linear pieces meet.
  double prev = 0;
  for (double x = 1e-6; x <= 1; x *= 1.1) {
    EXPECT_GT(g.SeekUs(x), prev);
    prev = g.SeekUs(x);
  }
  EXPECT_NEAR(g.SeekUs(g.knee() * (1 - 1e-9)), g.SeekUs(g.knee()), 1e-3);
  EXPECT_EQ(g.SeekTime(10.2, 10.9), 0u);  // same track: rotation only
}

TEST(HddGeometryTest, ZonedRateAndAngles) {
  HddGeometry g(HddPreset().geometry);
  EXPECT_NEAR(g.RateAt(0), 270e6, 1e4);
  EXPECT_NEAR(g.RateAt(g.capacity_sectors() - 1), 150e6, 1e4);
  EXPECT_NEAR(g.TrackPos(g.capacity_sectors()), g.tracks(), 1e-3);
  EXPECT_EQ(g.rotation(), 8'333'333u);
  EXPECT_NEAR(g.HeadAngle(g.rotation() * 7 + g.rotation() / 4), 0.25, 1e-6);
  EXPECT_EQ(g.RotationalWait(0.75, 0.25), g.rotation() / 2);
  // One track of data at the outer edge streams in exactly one revolution.
  const double track_bytes = 270e6 * kRotationMs / 1e3;
  EXPECT_NEAR(g.TrackPos(static_cast<uint64_t>(track_bytes / 512)), 1.0, 1e-3);
}

TEST(HddTest, RandomVersusSequentialServiceTime) {
  const HddConfig cfg = HddPreset();
  HddModel random_dev(cfg), seq_dev(cfg), local_dev(cfg);
  const uint64_t all = HddGeometry(cfg.geometry).capacity_sectors();
  auto random = RunClosedLoop(random_dev, 1, RandomRequests(7, 0, all, 8, false), 10, 2'000);
  auto seq = RunClosedLoop(seq_dev, 1, SequentialRequests(0, 128, false), 10, 2'000);
  // Within 1 MiB (under one outer track) there is no seek: only the rotational wait.
  auto local = RunClosedLoop(local_dev, 1, RandomRequests(7, 0, 2'048, 8, false), 10, 4'000);
  std::printf("4k random %.2f ms, 1 MiB-local %.2f ms, 64k sequential %.3f ms\n",
              Ms(random.mean_latency_ns), Ms(local.mean_latency_ns), Ms(seq.mean_latency_ns));
  // Full-stroke random: ~0.1 overhead + ~8 ms seek (zone-weighted) + 4.17 ms rotation.
  EXPECT_GT(Ms(random.mean_latency_ns), 11.0);
  EXPECT_LT(Ms(random.mean_latency_ns), 14.0);
  EXPECT_NEAR(Ms(local.mean_latency_ns), 0.1 + kRotationMs / 2, 0.3);
  // Sequential 64k: command overhead + 64 KiB at 270 MB/s, no positioning.
  EXPECT_NEAR(Ms(seq.mean_latency_ns), 0.1 + 65'536 / 270e6 * 1e3, 0.01);
  EXPECT_EQ(seq_dev.stats().sequential, seq_dev.stats().served - 1);
}

TEST(HddTest, ZonedSequentialBandwidth) {
  const HddConfig cfg = HddPreset();
  const uint64_t all = HddGeometry(cfg.geometry).capacity_sectors();
  HddModel outer(cfg), inner(cfg);
  // QD2 keeps the next command queued so the drive streams (no per-command overhead).
  auto o = RunClosedLoop(outer, 2, SequentialRequests(0, 2'048, false), 4, 200);
  auto i = RunClosedLoop(inner, 2, SequentialRequests(all - 300 * 2'048, 2'048, false), 4, 200);
  EXPECT_NEAR(o.mb_per_s, 270e6 / (1 << 20), 3);
  EXPECT_NEAR(i.mb_per_s, 150e6 / (1 << 20), 3);
}

TEST(HddTest, WriteCacheOffLosesARevolutionOnLateSequentialWrites) {
  HddConfig cfg = HddPreset();
  cfg.write_cache = false;
  HddModel wt(cfg), wt_queued(cfg);
  auto late = RunClosedLoop(wt, 1, SequentialRequests(0, 8, true), 10, 500);
  EXPECT_NEAR(Ms(late.mean_latency_ns), kRotationMs, 0.05);
  EXPECT_GE(wt.stats().lost_revolutions, 500u);
  // With the next write already queued the drive chains it: no lost revolution.
  auto queued = RunClosedLoop(wt_queued, 2, SequentialRequests(0, 8, true), 10, 500);
  EXPECT_EQ(wt_queued.stats().lost_revolutions, 0u);
  EXPECT_LT(Ms(queued.mean_latency_ns), 0.1);

  cfg.write_cache = true;
  HddModel wb(cfg);
  auto cached = RunClosedLoop(wb, 1, SequentialRequests(0, 8, true), 10, 500);
  EXPECT_NEAR(Ms(cached.mean_latency_ns), 0.1 + 4'096 / 270e6 * 1e3, 0.01);
  EXPECT_EQ(wb.stats().lost_revolutions, 0u);
}

TEST(HddTest, NcqReorderingRaisesRandomReadIops) {
  const HddConfig cfg = HddPreset();
  const uint64_t all = HddGeometry(cfg.geometry).capacity_sectors();
  double prev_iops = 0, qd1_iops = 0;
  for (uint32_t qd : {1u, 4u, 32u}) {
    HddModel hdd(cfg);
    auto r = RunClosedLoop(hdd, qd, RandomRequests(3, 0, all, 8, false), 100, 3'000);
    std::printf("random 4k read QD%-2u %6.1f IOPS, mean %.2f ms\n", qd, r.iops,
                Ms(r.mean_latency_ns));
    EXPECT_GT(r.iops, prev_iops * 1.2) << "QD" << qd;
    EXPECT_NEAR(r.iops * r.mean_latency_ns * 1e-9, qd, 0.02 * qd) << "Little's law, QD" << qd;
    if (qd == 1) {
      qd1_iops = r.iops;
      EXPECT_EQ(hdd.stats().reordered, 0u);
    } else {
      EXPECT_GT(hdd.stats().reordered, hdd.stats().served / 2);
    }
    prev_iops = r.iops;
  }
  EXPECT_GT(prev_iops, 2.0 * qd1_iops);  // SPTF at QD32 roughly triples a 7200 rpm drive
}

TEST(HddTest, NcqAgingBoundsTheWorstCaseWait) {
  const HddConfig cfg = HddPreset();
  const uint64_t all = HddGeometry(cfg.geometry).capacity_sectors();
  HddModel hdd(cfg);
  auto r = RunClosedLoop(hdd, 32, RandomRequests(5, 0, all, 8, false), 100, 20'000);
  std::printf("QD32 max latency %.0f ms (mean %.0f ms)\n", Ms(r.max_latency_ns),
              Ms(r.mean_latency_ns));
  // An aged request goes next (behind the one in service and any older aged ones). Pure
  // SPTF on this run leaves one request waiting 1.9 s.
  EXPECT_LT(r.max_latency_ns, kHddNcqMaxWait + Millis(100));
}

// Yu Kuai's HDD, fio psync randwrite (QD1) over a 1 GiB region (ENGINE.md §7).
TEST(HddTest, CalibrationPsyncRandwrite) {
  struct Point {
    uint32_t kib;
    double published_mib_s;
  };
  const Point points[] = {{128, 20.1},   {256, 33.4},   {512, 51.8},
                          {1'024, 67.1}, {2'048, 82.9}, {4'096, 82.9}};
  std::printf("size    published  model   (MiB/s)\n");
  for (const Point& p : points) {
    HddModel hdd(HddSeed003Preset());
    auto r = RunClosedLoop(hdd, 1, RandomRequests(11, 0, kGiBSectors, p.kib * 2, true), 20, 600);
    std::printf("%4uk   %6.1f    %6.1f  (%+.0f%%)\n", p.kib, p.published_mib_s, r.mb_per_s,
                (r.mb_per_s / p.published_mib_s - 1) * 100);
    EXPECT_NEAR(r.mb_per_s, p.published_mib_s, 0.15 * p.published_mib_s) << p.kib << "k";
    EXPECT_NEAR(r.iops * r.mean_latency_ns * 1e-9, 1.0, 0.02);
  }
}

}  // namespace
}  // namespace blkbench::engine
