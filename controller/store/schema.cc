// The store's schema migrations and the migration runner (see schema.h). States are
// stored as their proto enum names ('RUN_DONE') and numbers users chart (iops, p99_ns)
// as real columns, so dashboards and ad-hoc SQL need no protobuf decoding.
#include "controller/store/schema.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "controller/store/sqlite_open_checks.h"

namespace blkbench::sqlite {
namespace {

// Version 1: the initial schema.
//
// Why these shapes:
// - AUTOINCREMENT on experiments and runs: ids are never reused, even after deletes.
// - samples has its own INTEGER PRIMARY KEY because histograms refer to it by id, and
//   only an explicit rowid alias is guaranteed to survive VACUUM; (run_id, attempt, seq)
//   is UNIQUE, which is what makes AppendSample idempotent.
// - histograms holds every latency histogram ('sample' owners by samples.id, 'result'
//   owners by run id) with count/min/max/sum as columns and the buckets as a serialized
//   blkbench.v1.Histogram; results.result is the RunResult without its histograms.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE experiments (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  name              TEXT    NOT NULL,
  state             TEXT    NOT NULL,  -- ExperimentState enum name
  file_name         TEXT    NOT NULL,
  matrix_text       TEXT    NOT NULL,
  repeats           INTEGER NOT NULL,
  created_unix_ms   INTEGER NOT NULL,
  finished_unix_ms  INTEGER NOT NULL DEFAULT 0,
  error             TEXT    NOT NULL DEFAULT ''
);

CREATE TABLE cells (
  experiment_id  INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  cell_index     INTEGER NOT NULL,
  label          TEXT    NOT NULL,  -- "key=value key=value" of the cell's matrix axes
  spec           BLOB    NOT NULL,  -- serialized blkbench.v1.CellSpec
  PRIMARY KEY (experiment_id, cell_index)
) WITHOUT ROWID;

CREATE TABLE runs (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
  experiment_id     INTEGER NOT NULL,
  cell_index        INTEGER NOT NULL,
  repeat            INTEGER NOT NULL,
  attempt           INTEGER NOT NULL,
  state             TEXT    NOT NULL,  -- RunState enum name
  agent_id          TEXT    NOT NULL DEFAULT '',
  device_path       TEXT    NOT NULL DEFAULT '',
  lease_id          TEXT    NOT NULL DEFAULT '',
  created_unix_ms   INTEGER NOT NULL,
  started_unix_ms   INTEGER NOT NULL DEFAULT 0,
  finished_unix_ms  INTEGER NOT NULL DEFAULT 0,
  error             TEXT    NOT NULL DEFAULT '',
  UNIQUE (experiment_id, cell_index, repeat),
  FOREIGN KEY (experiment_id, cell_index)
    REFERENCES cells(experiment_id, cell_index) ON DELETE CASCADE
);
CREATE INDEX runs_by_state ON runs(state);
CREATE INDEX runs_by_agent ON runs(agent_id, state);

CREATE TABLE samples (
  id           INTEGER PRIMARY KEY,
  run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  attempt      INTEGER NOT NULL,
  seq          INTEGER NOT NULL,
  offset_ns    INTEGER NOT NULL,
  interval_ns  INTEGER NOT NULL,
  read_ios     INTEGER NOT NULL,
  write_ios    INTEGER NOT NULL,
  read_bytes   INTEGER NOT NULL,
  write_bytes  INTEGER NOT NULL,
  UNIQUE (run_id, attempt, seq)
);

CREATE TABLE histograms (
  owner_kind  TEXT    NOT NULL CHECK (owner_kind IN ('sample', 'result')),
  owner_id    INTEGER NOT NULL,  -- samples.id or results.run_id
  name        TEXT    NOT NULL,  -- 'lat', 'read_lat', 'write_lat'
  count       INTEGER NOT NULL,
  min_ns      INTEGER NOT NULL,
  max_ns      INTEGER NOT NULL,
  sum_ns      REAL    NOT NULL,
  histogram   BLOB    NOT NULL,  -- serialized blkbench.v1.Histogram
  PRIMARY KEY (owner_kind, owner_id, name)
) WITHOUT ROWID;

CREATE TABLE results (
  run_id            INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  attempt           INTEGER NOT NULL,
  runner            TEXT    NOT NULL,
  duration_ns       INTEGER NOT NULL,
  iops              REAL    NOT NULL,
  bw_bytes_per_sec  REAL    NOT NULL,
  read_ios          INTEGER NOT NULL,
  write_ios         INTEGER NOT NULL,
  read_bytes        INTEGER NOT NULL,
  write_bytes       INTEGER NOT NULL,
  lat_min_ns        INTEGER NOT NULL,
  lat_mean_ns       REAL    NOT NULL,
  p50_ns            INTEGER NOT NULL,
  p90_ns            INTEGER NOT NULL,
  p99_ns            INTEGER NOT NULL,
  p999_ns           INTEGER NOT NULL,
  p9999_ns          INTEGER NOT NULL,
  lat_max_ns        INTEGER NOT NULL,
  usr_cpu_ns        INTEGER NOT NULL,
  sys_cpu_ns        INTEGER NOT NULL,
  result            BLOB    NOT NULL  -- serialized RunResult without lat/read_lat/write_lat
);

CREATE TABLE agents (
  agent_id           TEXT    PRIMARY KEY,
  hostname           TEXT    NOT NULL,
  kernel_release     TEXT    NOT NULL,
  connected          INTEGER NOT NULL,
  last_seen_unix_ms  INTEGER NOT NULL,
  host               BLOB    NOT NULL  -- serialized blkbench.v1.HostFacts
) WITHOUT ROWID;

CREATE TABLE devices (
  agent_id      TEXT    NOT NULL REFERENCES agents(agent_id) ON DELETE CASCADE,
  path          TEXT    NOT NULL,
  device_class  TEXT    NOT NULL,
  model         TEXT    NOT NULL,
  simulated     INTEGER NOT NULL,
  facts         BLOB    NOT NULL,  -- serialized blkbench.v1.DeviceFacts
  PRIMARY KEY (agent_id, path)
) WITHOUT ROWID;

-- One row per successful run's current result, labelled, for dashboards and SQL users.
CREATE VIEW run_results AS
SELECT e.id AS experiment_id, e.name AS experiment, r.cell_index, c.label AS cell,
       r.repeat, r.id AS run_id, r.attempt, r.agent_id, r.device_path,
       r.started_unix_ms, r.finished_unix_ms, res.runner, res.duration_ns, res.iops,
       res.bw_bytes_per_sec, res.lat_mean_ns, res.p50_ns, res.p90_ns, res.p99_ns,
       res.p999_ns, res.p9999_ns, res.lat_max_ns
FROM results res
JOIN runs r ON r.id = res.run_id AND r.attempt = res.attempt
JOIN cells c ON c.experiment_id = r.experiment_id AND c.cell_index = r.cell_index
JOIN experiments e ON e.id = r.experiment_id
WHERE r.state = 'RUN_DONE';
)sql";

// Who submitted and who canceled an experiment (client identities, issue 16); a cancel
// request is durable, so a restarted controller still cancels what was asked.
constexpr char kSchemaV2[] = R"sql(
ALTER TABLE experiments ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
ALTER TABLE experiments ADD COLUMN canceled_by TEXT NOT NULL DEFAULT '';
)sql";

// A real block device's own counters per sample interval (Sample.device: a serialized
// blkbench.v1.DiskStatsInterval); NULL for files and sim: devices, and for older samples.
constexpr char kSchemaV3[] = R"sql(
ALTER TABLE samples ADD COLUMN device BLOB;
)sql";

// Each job's share of a sample interval (Sample.jobs: a serialized blkbench.v1.Sample
// holding only its jobs); NULL for samples from agents and engines before it existed.
constexpr char kSchemaV4[] = R"sql(
ALTER TABLE samples ADD COLUMN jobs BLOB;
)sql";

constexpr const char* kStoreTables[] = {"experiments", "cells",   "runs",   "samples",
                                        "histograms",  "results", "agents", "devices"};

constexpr Migration kMigrations[] = {
    {1, "initial schema", kSchemaV1},
    {2, "experiment submitter and canceler", kSchemaV2},
    {3, "device counters per sample", kSchemaV3},
    {4, "job intervals per sample", kSchemaV4},
};

// Reads user_version and refuses databases this code must not touch.
absl::StatusOr<int64_t> CheckedVersion(Db& db, int64_t latest) {
  if (absl::Status s = CheckOwnership(db); !s.ok()) return s;
  absl::StatusOr<int64_t> version = db.QueryInt("read schema version", "PRAGMA user_version");
  if (!version.ok()) return version.status();
  if (*version > latest) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database ", db.path(), " has schema version ", *version,
        ", newer than this blkbench supports (", latest,
        "); it was written by a newer blkbench-controller: upgrade, or use another file"));
  }
  return *version;
}

}  // namespace

absl::Span<const Migration> StoreMigrations() { return kMigrations; }

absl::Span<const char* const> StoreTables() { return kStoreTables; }

absl::Status ApplyMigrations(Db& db, absl::Span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return absl::InternalError(
          absl::StrCat("schema migration at position ", i, " has version ", migrations[i].version));
    }
  }
  const auto latest = static_cast<int64_t>(migrations.size());
  absl::StatusOr<int64_t> version = CheckedVersion(db, latest);
  if (!version.ok()) return version.status();

  while (*version < latest) {
    absl::StatusOr<Transaction> txn = Transaction::Begin(db, Transaction::Mode::kWrite);
    if (!txn.ok()) return txn.status();
    // Re-read under the write lock: another process may have migrated meanwhile.
    version = CheckedVersion(db, latest);
    if (!version.ok()) return version.status();
    if (*version == latest) break;

    const Migration& m = migrations[static_cast<size_t>(*version)];
    const std::string op =
        absl::StrCat("schema migration ", m.version, " (", m.description, ") on ", db.path());
    if (absl::Status s = db.Exec(op, m.sql); !s.ok()) return s;
    // PRAGMAs take no bound parameters; both values are compile-time constants here.
    if (absl::Status s = db.Exec(op, absl::StrCat("PRAGMA user_version = ", m.version, ";",
                                                  "PRAGMA application_id = ", kApplicationId));
        !s.ok()) {
      return s;
    }
    if (absl::Status s = txn->Commit(); !s.ok()) return s;
    version = m.version;
  }
  // A store from before application_id was set, already at the latest version.
  absl::StatusOr<int64_t> app_id = db.QueryInt("read application id", "PRAGMA application_id");
  if (!app_id.ok()) return app_id.status();
  if (*app_id == kApplicationId) return absl::OkStatus();
  absl::StatusOr<Transaction> txn = Transaction::Begin(db, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  const std::string op = absl::StrCat("set application_id of ", db.path());
  if (absl::Status s = db.Exec(op, absl::StrCat("PRAGMA application_id = ", kApplicationId));
      !s.ok()) {
    return s;
  }
  return txn->Commit();
}

}  // namespace blkbench::sqlite
