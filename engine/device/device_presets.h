// Named device presets: the published figures each one is fitted to, as configs the factory
// and tests start from.
#ifndef BLKBENCH_ENGINE_DEVICE_DEVICE_PRESETS_H_
#define BLKBENCH_ENGINE_DEVICE_DEVICE_PRESETS_H_

#include "engine/device/hdd.h"
#include "engine/device/ssd.h"

namespace blkbench::engine {

// Generic 1 TiB 7200 rpm drive (ENGINE.md §7): 270 -> 150 MB/s, seeks 0.8 / 8.5 / 18 ms.
HddConfig HddPreset();
// The drive behind Yu Kuai's psync randwrite figures (seed 003's x86 VM): the same mechanics,
// but its large writes stream at ~100 MiB/s, so the media rates are 110 -> 95 MB/s.
HddConfig HddSeed003Preset();

// NVMe TLC (Gen3 x4): 64 dies at tR 75 us; QD1 4k read ~87 us; ~680k IOPS serial cap.
SsdConfig SsdNvmePreset();
// SATA TLC: 32 dies; 550 MB/s link; QD1 4k read ~100 us; ~96k IOPS serial cap; NCQ 32.
SsdConfig SsdSataPreset();
// Seed 004's fit (ENGINE.md §10 (5)): 30 us serial controller + 8 dies at 85 us;
// QD1 115 us, cap 1/30 us = 33.3k IOPS.
SsdConfig SsdSeed004Preset();
// Intel Optane P4800X: ~10 us at QD1, ~550k IOPS cap, 2.5 GB/s.
SsdConfig OptaneP4800xPreset();
// Intel Optane P5800X: ~5 us at QD1, ~1.5M IOPS cap, 7.2 GB/s.
SsdConfig OptaneP5800xPreset();

}  // namespace blkbench::engine

#endif  // BLKBENCH_ENGINE_DEVICE_DEVICE_PRESETS_H_
