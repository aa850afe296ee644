// null_blk provisioning through configfs, per run, the way blktests (common/null_blk) and
// the seeds set it up by hand:
//
//   modprobe null_blk nr_devices=0
//   mkdir /sys/kernel/config/nullb/<name>; cd $_
//   echo 0 > completion_nsec; echo 512 > blocksize; ...; echo 2 > queue_mode
//   echo 1 > power                      # the kernel adds /dev/<name> (/dev/nullb<index>
//                                       # before Linux 5.19)
//   ... run ...
//   echo 0 > power; rmdir /sys/kernel/config/nullb/<name>
//
// The item is journaled (SettingsJournal, a ConfigfsItem) before the first mkdir, so a
// crash at any point leaves nothing behind once RecoverAll runs. Only the kernel's own
// attribute names may be written (a matrix must not make a root daemon write arbitrary
// configfs files), and every attribute is written before `power` (the kernel refuses
// changes to a powered device with EBUSY). Kernel: drivers/block/null_blk/main.c
// (nullb_device_*_store, nullb_group_drop_item), Documentation/block/null_blk.rst.
#ifndef BLKBENCH_AGENT_DEVICE_NULL_BLK_H_
#define BLKBENCH_AGENT_DEVICE_NULL_BLK_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "agent/device/settings_journal.h"

namespace blkbench {

struct NullBlkPaths {
  std::string configfs = "/sys/kernel/config";  // items under <configfs>/nullb
  std::string dev = "/dev";                     // where the disk's node appears
  std::string nullb() const { return configfs + "/nullb"; }
};

// The file-system calls provisioning makes, so a test can stand in for the kernel (configfs
// cannot be mounted here). Each returns 0 or an errno value.
class ConfigfsOps {
 public:
  virtual ~ConfigfsOps() = default;
  virtual int Mkdir(const std::string& path) = 0;
  virtual int Write(const std::string& path, absl::string_view value) = 0;
  virtual int Read(const std::string& path, std::string* value) = 0;
  virtual int Rmdir(const std::string& path) = 0;
  // Whether `path` is a block device node (the kernel's, once udev or devtmpfs made it).
  virtual bool IsBlockDevice(const std::string& path) = 0;
};

// The real calls: mkdir(2), one write(2) per attribute, rmdir(2), stat(2).
std::unique_ptr<ConfigfsOps> RealConfigfs();

// The attributes a cell may set (null_blk.rst), in the order they are written: the queue
// shape and timing as the seeds write them, then size and memory, then the rest.
const std::vector<std::string>& NullBlkAttributes();

// A device made by NullBlkProvisioner::Create.
struct NullBlkDevice {
  std::string name;      // the configfs item's name
  std::string item;      // <configfs>/nullb/<name>
  std::string dev_path;  // <dev>/<item name> (newer kernels) or <dev>/nullb<index>
  uint32_t index = 0;
  std::string journal_entry;  // the SettingsJournal entry that removes it
};

class NullBlkProvisioner {
 public:
  // `journal` and `ops` outlive the provisioner. `node_timeout` bounds the wait for the
  // device node after power-on (udev may be slow on a busy host).
  NullBlkProvisioner(NullBlkPaths paths, SettingsJournal& journal, ConfigfsOps& ops,
                     absl::Duration node_timeout = absl::Seconds(10));

  // OK when <configfs>/nullb exists; FailedPrecondition saying what is missing otherwise
  // (configfs not mounted, or the module not loaded: `modprobe null_blk nr_devices=0`).
  absl::Status Available() const;

  // Checks `params` (attribute → value, e.g. "submit_queues" → "128") without touching the
  // host: InvalidArgument naming an attribute that is not null_blk's, or power/index.
  static absl::Status CheckParams(const std::map<std::string, std::string>& params);

  // Journals the item, creates it, writes `params` in NullBlkAttributes() order, powers it
  // on and waits for its device node. On any failure what was made is removed (the journal
  // entry too) and the error names the attribute and the kernel's errno.
  absl::StatusOr<NullBlkDevice> Create(const std::string& name,
                                       const std::map<std::string, std::string>& params);

  // Powers the device off, removes its item and drops its journal entry.
  absl::Status Remove(const NullBlkDevice& device);

 private:
  NullBlkPaths paths_;
  SettingsJournal& journal_;
  ConfigfsOps& ops_;
  absl::Duration node_timeout_;
};

// The journal entry name of the null_blk item `name` ("nullb-<name>").
std::string NullBlkJournalEntry(const std::string& name);

// `modprobe null_blk nr_devices=0` (no default devices: every device is a run's). The
// error carries modprobe's exit status and output.
absl::Status LoadNullBlkModule();

}  // namespace blkbench

#endif  // BLKBENCH_AGENT_DEVICE_NULL_BLK_H_
