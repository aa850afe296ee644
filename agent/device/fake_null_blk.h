// FakeNullBlkKernel: drivers/block/null_blk's configfs side on a plain directory tree, for
// tests on hosts without configfs or the module. mkdir of an item creates its attribute
// files, a write to an unknown attribute is ENOENT, a write to a powered device is EBUSY,
// power=1 checks the attributes (EINVAL for a zero hw_queue_depth), picks the lowest free
// index and adds <dev>/nullb<index> — a sparse regular file of `size` MiB standing in for
// the disk (empty if size was not written) — and power=0 or rmdir drops it. Its state is
// on disk only, so a process that crashed mid-run leaves what a kernel would, and another
// process (the next agent) removes it through the same fake.
#ifndef BLKBENCH_AGENT_DEVICE_FAKE_NULL_BLK_H_
#define BLKBENCH_AGENT_DEVICE_FAKE_NULL_BLK_H_

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "agent/device/null_blk.h"

namespace blkbench::testing {

class FakeNullBlkKernel final : public ConfigfsOps {
 public:
  // Creates <configfs>/nullb and <dev> (the module loaded, devtmpfs mounted).
  explicit FakeNullBlkKernel(NullBlkPaths paths);

  int Mkdir(const std::string& path) override;
  int Write(const std::string& path, absl::string_view value) override;
  int Read(const std::string& path, std::string* value) override;
  // configfs rmdir: the attribute files go with the item and its disk is deleted
  // (nullb_group_drop_item), whatever power reads (the journal writes it as a plain file).
  int Rmdir(const std::string& path) override;
  bool IsBlockDevice(const std::string& path) override;

  std::vector<std::string> writes;  // "attr=value", in order
  size_t fail_write = 0;            // 1-based write that fails with EINVAL; 0 = none
  bool make_nodes = true;
  int rmdirs = 0;

 private:
  std::string Node(uint32_t index) const;
  void Put(const std::string& item, const std::string& attr, const std::string& v);
  std::string Get(const std::string& item, const std::string& attr);
  void DropNode(const std::string& item);

  NullBlkPaths paths_;
  std::set<std::string> touched_;  // attribute paths written by Write
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_AGENT_DEVICE_FAKE_NULL_BLK_H_
