// CellLabel and FioRwName; see cell_label.h.
#include "common/cell_label.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace blkbench {

std::string CellLabel(const v1::CellSpec& cell) {
  if (cell.axes().empty()) return "(single cell)";
  return absl::StrJoin(cell.axes(), " ", [](std::string* out, const v1::AxisValue& a) {
    absl::StrAppend(out, a.key(), "=", a.value());
  });
}

std::string FioRwName(v1::RwMode rw) {
  switch (rw) {
    case v1::READ:
      return "read";
    case v1::WRITE:
      return "write";
    case v1::RANDREAD:
      return "randread";
    case v1::RANDWRITE:
      return "randwrite";
    case v1::RANDRW:
      return "randrw";
    case v1::READWRITE:
      return "rw";
    default:
      return "";
  }
}

}  // namespace blkbench
