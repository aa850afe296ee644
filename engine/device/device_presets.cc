// Named device presets (see device_presets.h); every number here is a published figure or is
// derived from one in the comment beside it.
#include "engine/device/device_presets.h"

namespace blkbench::engine {

HddConfig HddPreset() { return HddConfig{}; }

HddConfig HddSeed003Preset() {
  HddConfig c;
  // 5 ms + size / 100 MiB/s: positioning comes from the mechanics (short seek in a 1 GiB
  // region + half a revolution); 105 MB/s (= 100 MiB/s) is this drive's media rate there.
  c.geometry.outer_mbps = 110;
  c.geometry.inner_mbps = 95;
  return c;
}

SsdConfig SsdNvmePreset() { return SsdConfig{}; }

SsdConfig SsdSataPreset() {
  SsdConfig c;
  c.name = "ssd-sata";
  c.bus = DeviceBus::kScsi;
  c.dies = 32;
  c.ctrl_ns = 3'000;  // AHCI command handling; + 4 KiB at 550 MB/s = 10.4 us -> ~96k IOPS
  c.bus_mbps = 550;   // SATA 6 Gb/s after 8b/10b and framing
  c.fixed_ns = 15'000;
  c.write_ack_ns = 12'000;
  c.write_buffer_bytes = uint64_t{64} << 20;
  c.program_mbps = 450;
  c.queue_depth = 32;
  return c;
}

SsdConfig SsdSeed004Preset() {
  SsdConfig c;
  c.name = "ssd-seed004";
  c.dies = 8;
  c.read_ns = 85'000;
  c.page_bytes = 8'192;
  c.ctrl_ns = 30'000;
  c.bus_mbps = 0;
  c.fixed_ns = 0;
  c.queue_depth = 32;
  return c;
}

SsdConfig OptaneP4800xPreset() {
  SsdConfig c;
  c.name = "optane";
  c.dies = 0;       // 3D XPoint: no die contention at these depths
  c.ctrl_ns = 180;  // + 4 KiB at 2.5 GB/s = 1.82 us -> 550k IOPS
  c.bus_mbps = 2'500;
  c.fixed_ns = 8'180;      // 10 us at QD1
  c.write_ack_ns = 8'180;  // writes in place, same latency
  c.program_mbps = 0;
  return c;
}

SsdConfig OptaneP5800xPreset() {
  SsdConfig c = OptaneP4800xPreset();
  c.name = "optane-p5800x";
  c.ctrl_ns = 100;  // + 4 KiB at 7.2 GB/s = 0.67 us -> 1.5M IOPS
  c.bus_mbps = 7'200;
  c.fixed_ns = 4'330;  // 5 us at QD1
  c.write_ack_ns = 4'330;
  return c;
}

}  // namespace blkbench::engine
