// null_blk provisioning through configfs (null_blk.h).
#include "agent/device/null_blk.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace blkbench {
namespace {

// The kernel's disk_name buffer (include/linux/blkdev.h), terminating NUL included.
constexpr size_t kDiskNameLen = 32;

class RealOps final : public ConfigfsOps {
 public:
  int Mkdir(const std::string& path) override { return mkdir(path.c_str(), 0755) == 0 ? 0 : errno; }
  // As `echo value > path`: one write(2), so the kernel's store handler sees it whole.
  int Write(const std::string& path, absl::string_view value) override {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return errno;
    const std::string line = absl::StrCat(value, "\n");
    ssize_t n;
    do {
      n = write(fd, line.data(), line.size());
    } while (n < 0 && errno == EINTR);
    const int err = n < 0 ? errno : (static_cast<size_t>(n) == line.size() ? 0 : EIO);
    close(fd);
    return err;
  }
  int Read(const std::string& path, std::string* value) override {
    absl::StatusOr<std::string> v = ReadAttribute(path);
    if (!v.ok()) return absl::IsNotFound(v.status()) ? ENOENT : EIO;
    *value = *v;
    return 0;
  }
  int Rmdir(const std::string& path) override { return rmdir(path.c_str()) == 0 ? 0 : errno; }
  bool IsBlockDevice(const std::string& path) override {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISBLK(st.st_mode);
  }
};

// A configfs item name: what mkdir under nullb/ accepts and a journal entry can carry.
bool ValidItemName(const std::string& name) {
  if (name.empty() || name.size() > 64 || name[0] == '.') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

std::unique_ptr<ConfigfsOps> RealConfigfs() { return std::make_unique<RealOps>(); }

const std::vector<std::string>& NullBlkAttributes() {
  // Seed 000's order first (completion_nsec … queue_mode), then the other writable
  // attributes of nullb_device_attrs. `power` is written last by Create, `index` never.
  static const auto* kAttributes = new std::vector<std::string>{
      "completion_nsec",
      "blocksize",
      "home_node",
      "irqmode",
      "submit_queues",
      "poll_queues",
      "hw_queue_depth",
      "size",
      "memory_backed",
      "queue_mode",
      "max_sectors",
      "blocking",
      "use_per_node_hctx",
      "discard",
      "mbps",
      "cache_size",
      "zoned",
      "zone_size",
      "zone_capacity",
      "zone_nr_conv",
      "zone_max_open",
      "zone_max_active",
      "virt_boundary",
      "no_sched",
      "shared_tags",
      "shared_tag_bitmap",
      "fua",
      "rotational",
  };
  return *kAttributes;
}

std::string NullBlkJournalEntry(const std::string& name) { return absl::StrCat("nullb-", name); }

NullBlkProvisioner::NullBlkProvisioner(NullBlkPaths paths, SettingsJournal& journal,
                                       ConfigfsOps& ops, absl::Duration node_timeout)
    : paths_(std::move(paths)), journal_(journal), ops_(ops), node_timeout_(node_timeout) {}

absl::Status NullBlkProvisioner::Available() const {
  struct stat st;
  if (stat(paths_.configfs.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(absl::StrCat("null_blk: ", paths_.configfs,
                                                      " is missing (configfs not mounted: "
                                                      "mount -t configfs none ",
                                                      paths_.configfs, ")"));
  }
  if (stat(paths_.nullb().c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(
        "null_blk: ", paths_.nullb(),
        " is missing (the module is not loaded: modprobe null_blk nr_devices=0, or set "
        "load_null_blk in the agent's config)"));
  }
  return absl::OkStatus();
}

absl::Status NullBlkProvisioner::CheckParams(const std::map<std::string, std::string>& params) {
  const std::vector<std::string>& known = NullBlkAttributes();
  for (const auto& [attr, value] : params) {
    if (std::find(known.begin(), known.end(), attr) == known.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("null_blk: '", attr, "' is not a null_blk attribute blkbench sets (one of ",
                       absl::StrJoin(known, ", "), ")"));
    }
    if (value.empty() || value.find_first_of("\n\r") != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "null_blk: ", attr, ": expected one line, got '", absl::CEscape(value), "'"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<NullBlkDevice> NullBlkProvisioner::Create(
    const std::string& name, const std::map<std::string, std::string>& params) {
  if (!ValidItemName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("null_blk: bad item name '", name, "'"));
  }
  if (absl::Status s = CheckParams(params); !s.ok()) return s;
  if (absl::Status s = Available(); !s.ok()) return s;
  NullBlkDevice dev;
  dev.name = name;
  dev.item = absl::StrCat(paths_.nullb(), "/", name);
  dev.journal_entry = NullBlkJournalEntry(name);
  struct stat st;
  if (lstat(dev.item.c_str(), &st) == 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("null_blk: ", dev.item, " exists already (another run's, or not ours)"));
  }
  // Journaled before the first mkdir: a crash from here on is undone by RecoverAll.
  JournalEntry entry;
  entry.name = dev.journal_entry;
  entry.configfs_items.push_back({dev.item, absl::StrCat(dev.item, "/power")});
  if (absl::Status s = journal_.Record(std::move(entry)); !s.ok()) return s;
  auto fail = [&](absl::Status why) -> absl::Status {
    if (absl::Status undo = journal_.Restore(dev.journal_entry); !undo.ok()) {
      return absl::Status(why.code(),
                          absl::StrCat(why.message(), "; and undoing: ", undo.message()));
    }
    return why;
  };
  if (int err = ops_.Mkdir(dev.item); err != 0) {
    return fail(absl::ErrnoToStatus(err, absl::StrCat("null_blk: mkdir ", dev.item)));
  }
  for (const std::string& attr : NullBlkAttributes()) {
    auto it = params.find(attr);
    if (it == params.end()) continue;
    const std::string path = absl::StrCat(dev.item, "/", attr);
    if (int err = ops_.Write(path, it->second); err != 0) {
      return fail(absl::ErrnoToStatus(err, absl::StrCat("null_blk: echo ", it->second, " > ", path,
                                                        " (the kernel refused it)")));
    }
  }
  const std::string power = absl::StrCat(dev.item, "/power");
  if (int err = ops_.Write(power, "1"); err != 0) {
    return fail(absl::ErrnoToStatus(
        err, absl::StrCat("null_blk: echo 1 > ", power,
                          " (the kernel refused the device; see dmesg for the attribute)")));
  }
  std::string index_text;
  uint32_t index = 0;
  if (int err = ops_.Read(absl::StrCat(dev.item, "/index"), &index_text);
      err != 0 || !absl::SimpleAtoi(index_text, &index)) {
    return fail(absl::InternalError(
        absl::StrCat("null_blk: ", dev.item, "/index unreadable after power-on")));
  }
  dev.index = index;
  // The kernel has added the disk; its node comes from devtmpfs or udev, asynchronously.
  // Its name: since Linux 5.19 ("block: null_blk: Improve device creation with configfs")
  // null_add_dev names it after the configfs item, cut to DISK_NAME_LEN - 1 characters;
  // before, nullb<index>. Whichever node appears is this device's.
  const std::string by_item =
      absl::StrCat(paths_.dev, "/", absl::string_view(name).substr(0, kDiskNameLen - 1));
  const std::string by_index = absl::StrCat(paths_.dev, "/nullb", index);
  const absl::Time deadline = absl::Now() + node_timeout_;
  for (;;) {
    if (ops_.IsBlockDevice(by_item)) {
      dev.dev_path = by_item;
      break;
    }
    if (ops_.IsBlockDevice(by_index)) {
      dev.dev_path = by_index;
      break;
    }
    if (absl::Now() > deadline) {
      return fail(absl::DeadlineExceededError(
          absl::StrCat("null_blk: neither ", by_item, " nor ", by_index, " appeared within ",
                       absl::FormatDuration(node_timeout_), " of power-on")));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return dev;
}

absl::Status NullBlkProvisioner::Remove(const NullBlkDevice& device) {
  return journal_.Restore(device.journal_entry);
}

absl::Status LoadNullBlkModule() {
  FILE* p = popen("/sbin/modprobe null_blk nr_devices=0 2>&1", "r");
  if (p == nullptr) return absl::ErrnoToStatus(errno, "null_blk: running modprobe");
  std::string output;
  char buf[256];
  while (fgets(buf, sizeof buf, p) != nullptr) output += buf;
  const int status = pclose(p);
  if (status != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "null_blk: modprobe null_blk nr_devices=0 failed (exit ",
        WIFEXITED(status) ? WEXITSTATUS(status) : -1, "): ", absl::StripAsciiWhitespace(output)));
  }
  return absl::OkStatus();
}

}  // namespace blkbench
