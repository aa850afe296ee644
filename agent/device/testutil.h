// Test helpers for agent/device: fake sysfs/procfs trees laid out the way the kernel
// does. Temporary directories, commands and loop devices are common/testing's.
#pragma once

#include <string>

#include "agent/device/sysfs.h"
#include "common/testing/command.h"
#include "common/testing/loop_device.h"

namespace blkbench::testing {

// Writes `content` to `path`, creating missing parent directories; aborts the test on error.
void WriteFile(const std::string& path, const std::string& content);
std::string ReadFile(const std::string& path);
void MakeDirs(const std::string& path);
void Symlink(const std::string& target, const std::string& link);

// A fake sysfs/procfs pair under `root`: <root>/sys and <root>/proc.
SystemPaths FakePaths(const std::string& root);

// Creates a fake whole disk `name` with device number `dev` ("7:0") under paths.sysfs, the
// way the kernel lays it out: the device directory under devices/virtual/block, a
// class/block/<name> symlink, and dev/block/<dev>. Queue attributes get plausible defaults
// (scheduler "none [mq-deadline] kyber bfq", nr_requests 64, max_sectors_kb 1280,
// max_hw_sectors_kb 2048). Returns the device directory.
std::string MakeFakeDisk(const SystemPaths& paths, const std::string& name, const std::string& dev);

// Adds partition `name` with number `dev` to the fake disk directory `disk_dir`.
std::string MakeFakePartition(const SystemPaths& paths, const std::string& disk_dir,
                              const std::string& name, const std::string& dev);

// A 512-byte LVM2 physical-volume label as pvcreate writes it at sector 1 (byte 512):
// "LABELONE", its own sector number, the CRC of the rest of the sector (LVM2's CRC-32:
// seed 0xf597a6cf, no final inversion), the offset of the PV header, "LVM2 001" and a
// 32-character PV uuid. `valid_crc` false stores a wrong CRC (a damaged label).
std::string LvmPvLabel(bool valid_crc = true);

}  // namespace blkbench::testing
