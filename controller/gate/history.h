// `blkbench history`: one metric of one cell across experiments (kernels, time) on a
// device class, with change points from E-divisive means. Pure functions on protos, so
// the controller (Controller::GetHistory, for the CLI and dashboards) and tests share
// them.
#ifndef BLKBENCH_CONTROLLER_GATE_HISTORY_H_
#define BLKBENCH_CONTROLLER_GATE_HISTORY_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "blkbench/v1/controller.pb.h"

namespace blkbench::gate {

// InvalidArgument for an unknown metric, an empty cell selector, or a selector key that
// is neither a matrix key blkbench knows nor usable as an axis name.
absl::Status CheckHistoryRequest(const v1::GetHistoryRequest& req);

// Whether `cell` is the cell `req` asks for: on req.device_class (if set), and for every
// key=value of req.cell either the cell's axis of that key has that value, or setting
// key=value on the cell changes nothing (bs=4k matches a matrix with a fixed bs: 4k, and
// bs=4096 matches an axis value 4k).
bool CellMatches(const v1::CellSpec& cell, const v1::GetHistoryRequest& req);
// Any cell of `experiment` (with or without runs) matches, and its name fits req.name.
bool AnyCellMatches(const v1::Experiment& experiment, const v1::GetHistoryRequest& req);

// The history from `experiments` (with results; any order — points are sorted by
// creation time, then experiment id, then cell index). A point per matching cell with
// at least one RUN_DONE run; change points over the points' medians. Deterministic in
// (experiments, req).
absl::StatusOr<v1::GetHistoryResponse> BuildHistory(const std::vector<v1::Experiment>& experiments,
                                                    const v1::GetHistoryRequest& req);

// A table, oldest first, with each change point marked, then one line per change point.
std::string RenderHistoryText(const v1::GetHistoryResponse& history);
// The response as JSON (protobuf's JSON mapping, fields in snake_case).
std::string RenderHistoryJson(const v1::GetHistoryResponse& history);

}  // namespace blkbench::gate

#endif  // BLKBENCH_CONTROLLER_GATE_HISTORY_H_
