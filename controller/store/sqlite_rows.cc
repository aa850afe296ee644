// Row ↔ message conversions for SqliteStore (see sqlite_rows.h).
#include "controller/store/sqlite_rows.h"

namespace blkbench::sqlite {

absl::StatusOr<v1::Run> RunFromRow(const Statement& row) {
  v1::Run run;
  run.set_id(row.U64(0));
  run.set_experiment_id(row.U64(1));
  run.set_cell_index(static_cast<uint32_t>(row.Int(2)));
  run.set_repeat(static_cast<uint32_t>(row.Int(3)));
  run.set_attempt(static_cast<uint32_t>(row.Int(4)));
  absl::StatusOr<v1::RunState> state = ParseRunState(row.Text(5));
  if (!state.ok()) return state.status();
  run.set_state(*state);
  run.set_agent_id(row.Text(6));
  run.set_device_path(row.Text(7));
  run.set_lease_id(row.Text(8));
  run.set_created_unix_ms(row.Int(9));
  run.set_started_unix_ms(row.Int(10));
  run.set_finished_unix_ms(row.Int(11));
  run.set_error(row.Text(12));
  return run;
}

absl::StatusOr<v1::Experiment> ExperimentFromRow(const Statement& row) {
  v1::Experiment experiment;
  experiment.set_id(row.U64(0));
  experiment.set_name(row.Text(1));
  absl::StatusOr<v1::ExperimentState> state = ParseExperimentState(row.Text(2));
  if (!state.ok()) return state.status();
  experiment.set_state(*state);
  experiment.set_file_name(row.Text(3));
  experiment.set_repeats(static_cast<uint32_t>(row.Int(4)));
  experiment.set_created_unix_ms(row.Int(5));
  experiment.set_finished_unix_ms(row.Int(6));
  experiment.set_error(row.Text(7));
  experiment.set_submitted_by(row.Text(8));
  experiment.set_canceled_by(row.Text(9));
  return experiment;
}

absl::StatusOr<v1::Sample> SampleFromRow(const Statement& row, int first_col) {
  v1::Sample sample;
  sample.set_seq(row.U64(first_col));
  sample.set_offset_ns(row.U64(first_col + 1));
  sample.set_interval_ns(row.U64(first_col + 2));
  v1::IoCounters& io = *sample.mutable_io();
  io.set_read_ios(row.U64(first_col + 3));
  io.set_write_ios(row.U64(first_col + 4));
  io.set_read_bytes(row.U64(first_col + 5));
  io.set_write_bytes(row.U64(first_col + 6));
  if (!row.IsNull(first_col + 7)) {
    if (absl::Status s =
            ParseBlob(row.Blob(first_col + 7), "sample histogram", *sample.mutable_lat());
        !s.ok()) {
      return s;
    }
  }
  if (!row.IsNull(first_col + 8)) {
    if (absl::Status s =
            ParseBlob(row.Blob(first_col + 8), "sample device counters", *sample.mutable_device());
        !s.ok()) {
      return s;
    }
  }
  if (!row.IsNull(first_col + 9)) {
    // A Sample holding only its jobs (the insert's JobsBlob).
    v1::Sample jobs;
    if (absl::Status s = ParseBlob(row.Blob(first_col + 9), "sample job intervals", jobs); !s.ok())
      return s;
    *sample.mutable_jobs() = std::move(*jobs.mutable_jobs());
  }
  return sample;
}

absl::StatusOr<std::string> SerializeSampleJobs(const v1::Sample& sample) {
  v1::Sample jobs;
  *jobs.mutable_jobs() = sample.jobs();
  return Serialize(jobs, "sample job intervals");
}

std::string RunStateName(v1::RunState state) { return v1::RunState_Name(state); }

std::string ExperimentStateName(v1::ExperimentState state) {
  return v1::ExperimentState_Name(state);
}

absl::StatusOr<v1::RunState> ParseRunState(const std::string& name) {
  v1::RunState state;
  if (!v1::RunState_Parse(name, &state)) {
    return absl::DataLossError(absl::StrCat("stored run state '", name, "' is unknown"));
  }
  return state;
}

absl::StatusOr<v1::ExperimentState> ParseExperimentState(const std::string& name) {
  v1::ExperimentState state;
  if (!v1::ExperimentState_Parse(name, &state)) {
    return absl::DataLossError(absl::StrCat("stored experiment state '", name, "' is unknown"));
  }
  return state;
}

absl::StatusOr<std::string> Serialize(const google::protobuf::MessageLite& message,
                                      absl::string_view what) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot serialize ", what));
  }
  return bytes;
}

}  // namespace blkbench::sqlite
