// HddGeometry: where an LBA sits on a zoned 7200 rpm platter (radius, angle), how long a seek
// between two radii takes (Ruemmler–Wilkes curve) and how fast a zone transfers.
#ifndef BLKBENCH_ENGINE_DEVICE_HDD_GEOMETRY_H_
#define BLKBENCH_ENGINE_DEVICE_HDD_GEOMETRY_H_

#include <cstdint>

#include "absl/status/status.h"
#include "engine/sim/time.h"

namespace blkbench::engine {

// Physical parameters of a drive. Defaults: a generic 1 TiB 7200 rpm SATA drive (ENGINE.md §7).
struct HddGeometryConfig {
  uint64_t capacity_bytes = uint64_t{1} << 40;
  uint32_t rpm = 7200;
  double outer_mbps = 270;  // MB/s (10^6 B/s) sustained at the outer edge (LBA 0) ...
  double inner_mbps = 150;  // ... falling linearly with radius to the inner edge
  double track_to_track_us = 800;
  double mean_seek_us = 8'500;  // over uniformly random pairs of radii
  double full_stroke_us = 18'000;

  absl::Status Validate() const;
};

// Why this shape: with constant linear bit density, a track's capacity (and so the transfer
// rate) is proportional to its radius, so the rate falls linearly in the radial coordinate
// u in [0, 1] (0 = outer). Every track holds one revolution of data, so the track count is
// linear in u and an LBA's angle is the fractional part of its track coordinate.
class HddGeometry {
 public:
  explicit HddGeometry(const HddGeometryConfig& config);  // REQUIRES: config.Validate().ok()

  SimTime rotation() const { return rotation_ns_; }
  double tracks() const { return tracks_; }
  uint64_t capacity_sectors() const { return capacity_sectors_; }

  // Track coordinate of a sector in [0, tracks()): integer part = track, fraction = angle.
  double TrackPos(uint64_t sector) const;
  // Fraction of a revolution at which the head is at time t: (t / rotation) mod 1.
  double HeadAngle(SimTime t) const;
  // Time for the platter to turn from angle `from` to angle `to` (both in [0, 1)).
  SimTime RotationalWait(double from, double to) const;
  // Seek between two track coordinates: 0 on the same track, else the Ruemmler–Wilkes curve
  // a + b*sqrt(x) for x < x0 and c + e*x beyond (x = distance / full stroke), C1 at x0.
  SimTime SeekTime(double from_track_pos, double to_track_pos) const;
  // Seek for a distance given as a fraction of the full stroke (> 0).
  double SeekUs(double stroke_fraction) const;
  // Media time for `sectors` starting at `sector`, at that zone's rate.
  SimTime TransferTime(uint64_t sector, uint32_t sectors) const;
  // Sustained rate in bytes/s at a sector.
  double RateAt(uint64_t sector) const;
  // Mean seek (us) over uniformly random pairs of radii, for the curve whose sqrt and linear
  // pieces meet at stroke fraction x0 (the fitted curve uses the x0 matching mean_seek_us).
  double MeanSeekUs(double x0) const;
  double knee() const { return x0_; }

 private:
  double RadiusOf(uint64_t sector) const;  // u in [0, 1]
  void FitCurve(double x0);

  HddGeometryConfig config_;
  SimTime rotation_ns_;
  uint64_t capacity_sectors_;
  double tracks_;
  double a_us_, b_us_, c_us_, e_us_, x0_;
};

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_HDD_GEOMETRY_H_
