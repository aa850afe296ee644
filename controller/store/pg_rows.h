// Conversions between PgStore's result rows and blkbench.v1 messages. The column lists,
// enum names and blob encodings are SqliteStore's (sqlite_rows.h): the two schemas match.
// Internal to controller/store.
#ifndef BLKBENCH_CONTROLLER_STORE_PG_ROWS_H_
#define BLKBENCH_CONTROLLER_STORE_PG_ROWS_H_

#include "absl/status/statusor.h"
#include "blkbench/v1/controller.pb.h"
#include "blkbench/v1/metrics.pb.h"
#include "controller/store/pg_conn.h"

namespace blkbench::pg {

// Row `row` of `r` from column `first_col` on, in the order of sqlite::kRunColumns,
// kExperimentColumns and kSampleColumns.
absl::StatusOr<v1::Run> RunFromRow(const Result& r, int row, int first_col = 0);
absl::StatusOr<v1::Experiment> ExperimentFromRow(const Result& r, int row);
absl::StatusOr<v1::Sample> SampleFromRow(const Result& r, int row, int first_col);

}  // namespace blkbench::pg

#endif  // BLKBENCH_CONTROLLER_STORE_PG_ROWS_H_
