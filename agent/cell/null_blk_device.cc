// A per-run null_blk device made, prepared and removed; see null_blk_device.h.
#include "agent/cell/null_blk_device.h"

#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/device/identity.h"

namespace blkbench {

std::map<std::string, std::string> NullBlkParamsOf(const v1::CellSpec& cell) {
  constexpr absl::string_view kPrefix = "null_blk.";
  std::map<std::string, std::string> params;
  for (const auto& [key, value] : cell.device_params()) {
    if (absl::StartsWith(key, kPrefix)) params[key.substr(kPrefix.size())] = value;
  }
  return params;
}

NullBlkDevicePreparation::NullBlkDevicePreparation(NullBlkPaths paths, ConfigfsOps& configfs,
                                                   QueueSettingsJournal& journal,
                                                   CgroupManager& cgroups,
                                                   RealDeviceOptions options,
                                                   absl::Duration node_timeout)
    : paths_(std::move(paths)),
      configfs_(configfs),
      journal_(journal),
      cgroups_(cgroups),
      options_(std::move(options)),
      provisioner_(paths_, journal.settings_journal(), configfs_, node_timeout) {}

absl::StatusOr<PreparedDevice> NullBlkDevicePreparation::Prepare(const CellRun& run) {
  absl::StatusOr<NullBlkDevice> device =
      provisioner_.Create(absl::StrCat("blkbench-", run.name), NullBlkParamsOf(run.cell));
  if (!device.ok()) return device.status();
  // Anything that fails from here removes the device again.
  auto fail = [&](const absl::Status& why) {
    real_.reset();
    absl::Status removed = provisioner_.Remove(*device);
    if (removed.ok()) return why;
    return absl::Status(why.code(), absl::StrCat(why.message(), "; removing ", device->dev_path,
                                                 ": ", removed.message()));
  };
  // The device made a moment ago is the one to hold: its identity is recorded now, and
  // checked again under the hold as for any allowlisted device.
  if (absl::Status s = identities_.Register(device->dev_path, ReadDeviceIdentity(device->dev_path));
      !s.ok()) {
    return fail(
        absl::Status(s.code(), absl::StrCat("null_blk ", device->dev_path, ": ", s.message())));
  }
  real_ = std::make_unique<RealDevicePreparation>(
      "null_blk", std::vector<AllowlistEntry>{{device->dev_path, "null_blk"}}, identities_,
      journal_, cgroups_, options_);
  CellRun on_device = run;
  on_device.device = device->dev_path;
  absl::StatusOr<PreparedDevice> prepared = real_->Prepare(on_device);
  if (!prepared.ok()) return fail(prepared.status());
  device_ = *std::move(device);
  return prepared;
}

absl::Status NullBlkDevicePreparation::Release() {
  std::string error;
  if (real_ != nullptr) {
    if (absl::Status s = real_->Release(); !s.ok()) absl::StrAppend(&error, s.message());
    real_.reset();
  }
  if (device_) {
    if (absl::Status s = provisioner_.Remove(*device_); !s.ok()) {
      absl::StrAppend(&error, error.empty() ? "" : "; ", "removing null_blk ", device_->dev_path,
                      ": ", s.message());
    }
    device_.reset();
  }
  return error.empty() ? absl::OkStatus() : absl::InternalError(error);
}

}  // namespace blkbench
