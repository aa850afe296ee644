// Conversions between SqlStore's table rows and blkbench.v1 messages: column lists,
// enum names as stored, protobuf blobs. Internal to controller/store.
#ifndef BLKBENCH_CONTROLLER_STORE_SQL_ROWS_H_
#define BLKBENCH_CONTROLLER_STORE_SQL_ROWS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "blkbench/v1/controller.pb.h"
#include "blkbench/v1/metrics.pb.h"
#include "controller/store/sql_conn.h"

namespace blkbench::sql {

// The runs columns RunFromRow reads, in order, with runs aliased as r.
inline constexpr char kRunColumns[] =
    "r.id, r.experiment_id, r.cell_index, r.repeat, r.attempt, r.state, r.agent_id, "
    "r.device_path, r.lease_id, r.created_unix_ms, r.started_unix_ms, r.finished_unix_ms, "
    "r.error";
// Row `row` of `r` from column `first_col` on.
absl::StatusOr<v1::Run> RunFromRow(const Result& r, int row, int first_col = 0);

// The experiments columns ExperimentFromRow reads (no matrix_text), experiments aliased e.
inline constexpr char kExperimentColumns[] =
    "e.id, e.name, e.state, e.file_name, e.repeats, e.created_unix_ms, e.finished_unix_ms, "
    "e.error, e.submitted_by, e.canceled_by";
inline constexpr int kExperimentColumnCount = 10;
absl::StatusOr<v1::Experiment> ExperimentFromRow(const Result& r, int row);

// The sample columns SampleFromRow reads from `first_col` on: samples aliased s, its 'lat'
// histogram LEFT JOINed as h (see kSampleHistogramJoin).
inline constexpr char kSampleColumns[] =
    "s.seq, s.offset_ns, s.interval_ns, s.read_ios, s.write_ios, s.read_bytes, s.write_bytes, "
    "h.histogram, s.device, s.jobs";
inline constexpr char kSampleHistogramJoin[] =
    " LEFT JOIN histograms h ON h.owner_kind = 'sample' AND h.owner_id = s.id AND h.name = 'lat'";
absl::StatusOr<v1::Sample> SampleFromRow(const Result& r, int row, int first_col);

// States are stored as their proto enum names, e.g. 'RUN_DONE'.
std::string RunStateName(v1::RunState state);
std::string ExperimentStateName(v1::ExperimentState state);
absl::StatusOr<v1::RunState> ParseRunState(const std::string& name);
absl::StatusOr<v1::ExperimentState> ParseExperimentState(const std::string& name);

absl::StatusOr<std::string> Serialize(const google::protobuf::MessageLite& message,
                                      absl::string_view what);

// Sample.jobs as stored in samples.jobs: a serialized Sample holding only its jobs.
absl::StatusOr<std::string> SerializeSampleJobs(const v1::Sample& sample);

// Parses a stored blob; DataLoss naming `what` if it does not parse.
template <typename Message>
absl::Status ParseBlob(const std::string& bytes, absl::string_view what, Message& out) {
  if (!out.ParseFromString(bytes)) {
    return absl::DataLossError(
        absl::StrCat("stored ", what, " does not parse as ", out.GetTypeName()));
  }
  return absl::OkStatus();
}

}  // namespace blkbench::sql

#endif  // BLKBENCH_CONTROLLER_STORE_SQL_ROWS_H_
