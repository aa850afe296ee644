// HddGeometry: zoned layout, rotational position and the seek curve (see hdd_geometry.h).
#include "engine/device/hdd_geometry.h"

#include <cassert>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace blkbench::engine {
namespace {

constexpr double kSectorBytes = 512;

}  // namespace

absl::Status HddGeometryConfig::Validate() const {
  if (capacity_bytes < (uint64_t{1} << 30)) {
    return absl::InvalidArgumentError("hdd.capacity must be at least 1 GiB");
  }
  if (rpm < 3'600 || rpm > 15'000) {
    return absl::InvalidArgumentError(absl::StrCat("hdd.rpm must be in [3600, 15000], got ", rpm));
  }
  if (!(outer_mbps > 0) || !(inner_mbps > 0) || inner_mbps > outer_mbps) {
    return absl::InvalidArgumentError("hdd media rates must satisfy 0 < inner_mbps <= outer_mbps");
  }
  if (!(track_to_track_us > 0) || !(track_to_track_us < mean_seek_us) ||
      !(mean_seek_us < full_stroke_us)) {
    return absl::InvalidArgumentError(
        "hdd seek times must satisfy 0 < track_to_track_us < mean_seek_us < full_stroke_us");
  }
  // The C1 curve family spans means from ~(a + 2F)/3 (x0 -> 1, pure sqrt) down to about the
  // linear-through-a line; reject a mean it cannot reach rather than silently miss it.
  HddGeometryConfig probe = *this;
  probe.mean_seek_us = 0;
  HddGeometry g(probe);
  const double lo = g.MeanSeekUs(1e-4), hi = g.MeanSeekUs(1.0);
  if (mean_seek_us < lo || mean_seek_us > hi) {
    return absl::InvalidArgumentError(absl::StrCat("hdd.mean_seek_us must be in [", std::lround(lo),
                                                   ", ", std::lround(hi),
                                                   "] for these track-to-track/full-stroke times"));
  }
  return absl::OkStatus();
}

HddGeometry::HddGeometry(const HddGeometryConfig& config)
    : config_(config),
      rotation_ns_(static_cast<SimTime>(std::llround(60e9 / config.rpm))),
      capacity_sectors_(config.capacity_bytes / 512) {
  const double avg_rate = (config_.outer_mbps + config_.inner_mbps) / 2 * 1e6;
  tracks_ = static_cast<double>(config_.capacity_bytes) / (avg_rate * (rotation_ns_ * 1e-9));
  FitCurve(0.25);
  if (config_.mean_seek_us <= 0) return;  // probe used by Validate()
  // MeanSeekUs is increasing in x0: bisect for the configured mean.
  double lo = 1e-4, hi = 1.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = (lo + hi) / 2;
    (MeanSeekUs(mid) < config_.mean_seek_us ? lo : hi) = mid;
  }
  FitCurve((lo + hi) / 2);
}

void HddGeometry::FitCurve(double x0) {
  // Ruemmler & Wilkes, "An introduction to disk drive modeling" (1994): the arm accelerates
  // then decelerates for short seeks (time ~ sqrt(distance)) and coasts for long ones
  // (linear). We pin seek(0+) = track-to-track, seek(1) = full stroke, and make the two
  // pieces meet with equal slope at x0: e = b / (2 sqrt(x0)), c = a + b sqrt(x0) / 2.
  x0_ = x0;
  a_us_ = config_.track_to_track_us;
  const double s = std::sqrt(x0);
  b_us_ = (config_.full_stroke_us - a_us_) / (s / 2 + 1 / (2 * s));
  e_us_ = b_us_ / (2 * s);
  c_us_ = a_us_ + b_us_ * s / 2;
}

double HddGeometry::SeekUs(double x) const {
  return x < x0_ ? a_us_ + b_us_ * std::sqrt(x) : c_us_ + e_us_ * x;
}

double HddGeometry::MeanSeekUs(double x0) const {
  // |u1 - u2| for independent uniform u has density 2(1 - x); midpoint rule is plenty.
  HddGeometry copy = *this;
  copy.FitCurve(x0);
  constexpr int kSteps = 4'000;
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    const double x = (i + 0.5) / kSteps;
    sum += copy.SeekUs(x) * 2 * (1 - x);
  }
  return sum / kSteps;
}

double HddGeometry::RadiusOf(uint64_t sector) const {
  // Bytes before radius u: C * F(u) / F(1) with F(u) = Ro*u - (Ro - Ri)*u^2/2. Invert the
  // quadratic in its cancellation-free form u = 2 f Ravg / (Ro + sqrt(Ro^2 - 2 (Ro - Ri) f Ravg)).
  const double ro = config_.outer_mbps, ri = config_.inner_mbps;
  const double f = static_cast<double>(sector) / static_cast<double>(capacity_sectors_);
  const double ravg = (ro + ri) / 2;
  const double disc = ro * ro - 2 * (ro - ri) * f * ravg;
  return 2 * f * ravg / (ro + std::sqrt(disc > 0 ? disc : 0));
}

double HddGeometry::TrackPos(uint64_t sector) const { return RadiusOf(sector) * tracks_; }

double HddGeometry::HeadAngle(SimTime t) const {
  return static_cast<double>(t % rotation_ns_) / static_cast<double>(rotation_ns_);
}

SimTime HddGeometry::RotationalWait(double from, double to) const {
  double d = to - from;
  if (d < 0) d += 1;
  return static_cast<SimTime>(d * static_cast<double>(rotation_ns_));
}

SimTime HddGeometry::SeekTime(double from_track_pos, double to_track_pos) const {
  if (std::floor(from_track_pos) == std::floor(to_track_pos)) return 0;
  const double x = std::fabs(to_track_pos - from_track_pos) / tracks_;
  return static_cast<SimTime>(SeekUs(x) * 1e3);
}

double HddGeometry::RateAt(uint64_t sector) const {
  const double u = RadiusOf(sector);
  return (config_.outer_mbps - (config_.outer_mbps - config_.inner_mbps) * u) * 1e6;
}

SimTime HddGeometry::TransferTime(uint64_t sector, uint32_t sectors) const {
  return static_cast<SimTime>(sectors * kSectorBytes / RateAt(sector) * 1e9);
}

}  // namespace blkbench::engine
