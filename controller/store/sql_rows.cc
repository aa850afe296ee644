// Row <-> message conversions for SqlStore (see sql_rows.h).
#include "controller/store/sql_rows.h"

namespace blkbench::sql {

absl::StatusOr<v1::Run> RunFromRow(const Result& r, int row, int c) {
  v1::Run run;
  run.set_id(r.U64(row, c));
  run.set_experiment_id(r.U64(row, c + 1));
  run.set_cell_index(static_cast<uint32_t>(r.Int(row, c + 2)));
  run.set_repeat(static_cast<uint32_t>(r.Int(row, c + 3)));
  run.set_attempt(static_cast<uint32_t>(r.Int(row, c + 4)));
  absl::StatusOr<v1::RunState> state = ParseRunState(r.Text(row, c + 5));
  if (!state.ok()) return state.status();
  run.set_state(*state);
  run.set_agent_id(r.Text(row, c + 6));
  run.set_device_path(r.Text(row, c + 7));
  run.set_lease_id(r.Text(row, c + 8));
  run.set_created_unix_ms(r.Int(row, c + 9));
  run.set_started_unix_ms(r.Int(row, c + 10));
  run.set_finished_unix_ms(r.Int(row, c + 11));
  run.set_error(r.Text(row, c + 12));
  return run;
}

absl::StatusOr<v1::Experiment> ExperimentFromRow(const Result& r, int row) {
  v1::Experiment e;
  e.set_id(r.U64(row, 0));
  e.set_name(r.Text(row, 1));
  absl::StatusOr<v1::ExperimentState> state = ParseExperimentState(r.Text(row, 2));
  if (!state.ok()) return state.status();
  e.set_state(*state);
  e.set_file_name(r.Text(row, 3));
  e.set_repeats(static_cast<uint32_t>(r.Int(row, 4)));
  e.set_created_unix_ms(r.Int(row, 5));
  e.set_finished_unix_ms(r.Int(row, 6));
  e.set_error(r.Text(row, 7));
  e.set_submitted_by(r.Text(row, 8));
  e.set_canceled_by(r.Text(row, 9));
  return e;
}

absl::StatusOr<v1::Sample> SampleFromRow(const Result& r, int row, int c) {
  v1::Sample sample;
  sample.set_seq(r.U64(row, c));
  sample.set_offset_ns(r.U64(row, c + 1));
  sample.set_interval_ns(r.U64(row, c + 2));
  v1::IoCounters& io = *sample.mutable_io();
  io.set_read_ios(r.U64(row, c + 3));
  io.set_write_ios(r.U64(row, c + 4));
  io.set_read_bytes(r.U64(row, c + 5));
  io.set_write_bytes(r.U64(row, c + 6));
  if (!r.IsNull(row, c + 7)) {
    if (absl::Status s = ParseBlob(r.Bytes(row, c + 7), "sample histogram", *sample.mutable_lat());
        !s.ok()) {
      return s;
    }
  }
  if (!r.IsNull(row, c + 8)) {
    if (absl::Status s =
            ParseBlob(r.Bytes(row, c + 8), "sample device counters", *sample.mutable_device());
        !s.ok()) {
      return s;
    }
  }
  if (!r.IsNull(row, c + 9)) {
    // A Sample holding only its jobs (SerializeSampleJobs).
    v1::Sample jobs;
    if (absl::Status s = ParseBlob(r.Bytes(row, c + 9), "sample job intervals", jobs); !s.ok()) {
      return s;
    }
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

}  // namespace blkbench::sql
