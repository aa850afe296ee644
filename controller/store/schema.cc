// The store's schema migrations and the migration runner (see schema.h). States are
// stored as their proto enum names ('RUN_DONE') and numbers users chart (iops, p99_ns)
// as real columns, so dashboards and ad-hoc SQL need no protobuf decoding — the same
// on SQLite and PostgreSQL.
#include "controller/store/schema.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace blkbench::sql {
namespace {

// Version 1: the initial schema.
//
// Why these shapes:
// - {serial} ids of experiments and runs are never reused, even after deletes.
// - samples has its own {rowid} id because histograms refer to it by id;
//   (run_id, attempt, seq) is UNIQUE, which is what makes AppendSample idempotent.
// - histograms holds every latency histogram ('sample' owners by samples.id, 'result'
//   owners by run id) with count/min/max/sum as columns and the buckets as a serialized
//   blkbench.v1.Histogram; results.result is the RunResult without its histograms.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE experiments (
  id                {serial},
  name              TEXT    NOT NULL,
  state             TEXT    NOT NULL,  -- ExperimentState enum name
  file_name         TEXT    NOT NULL,
  matrix_text       TEXT    NOT NULL,
  repeats           {int} NOT NULL,
  created_unix_ms   {int} NOT NULL,
  finished_unix_ms  {int} NOT NULL DEFAULT 0,
  error             TEXT    NOT NULL DEFAULT ''
);

CREATE TABLE cells (
  experiment_id  {int} NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
  cell_index     {int} NOT NULL,
  label          TEXT    NOT NULL,  -- "key=value key=value" of the cell's matrix axes
  spec           {blob}    NOT NULL,  -- serialized blkbench.v1.CellSpec
  PRIMARY KEY (experiment_id, cell_index)
){without_rowid};

CREATE TABLE runs (
  id                {serial},
  experiment_id     {int} NOT NULL,
  cell_index        {int} NOT NULL,
  repeat            {int} NOT NULL,
  attempt           {int} NOT NULL,
  state             TEXT    NOT NULL,  -- RunState enum name
  agent_id          TEXT    NOT NULL DEFAULT '',
  device_path       TEXT    NOT NULL DEFAULT '',
  lease_id          TEXT    NOT NULL DEFAULT '',
  created_unix_ms   {int} NOT NULL,
  started_unix_ms   {int} NOT NULL DEFAULT 0,
  finished_unix_ms  {int} NOT NULL DEFAULT 0,
  error             TEXT    NOT NULL DEFAULT '',
  UNIQUE (experiment_id, cell_index, repeat),
  FOREIGN KEY (experiment_id, cell_index)
    REFERENCES cells(experiment_id, cell_index) ON DELETE CASCADE
);
CREATE INDEX runs_by_state ON runs(state);
CREATE INDEX runs_by_agent ON runs(agent_id, state);

CREATE TABLE samples (
  id           {rowid},
  run_id       {int} NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  attempt      {int} NOT NULL,
  seq          {int} NOT NULL,
  offset_ns    {int} NOT NULL,
  interval_ns  {int} NOT NULL,
  read_ios     {int} NOT NULL,
  write_ios    {int} NOT NULL,
  read_bytes   {int} NOT NULL,
  write_bytes  {int} NOT NULL,
  UNIQUE (run_id, attempt, seq)
);

CREATE TABLE histograms (
  owner_kind  TEXT    NOT NULL CHECK (owner_kind IN ('sample', 'result')),
  owner_id    {int} NOT NULL,  -- samples.id or results.run_id
  name        TEXT    NOT NULL,  -- 'lat', 'read_lat', 'write_lat'
  count       {int} NOT NULL,
  min_ns      {int} NOT NULL,
  max_ns      {int} NOT NULL,
  sum_ns      {real}    NOT NULL,
  histogram   {blob}    NOT NULL,  -- serialized blkbench.v1.Histogram
  PRIMARY KEY (owner_kind, owner_id, name)
){without_rowid};

CREATE TABLE results (
  run_id            {int} PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  attempt           {int} NOT NULL,
  runner            TEXT    NOT NULL,
  duration_ns       {int} NOT NULL,
  iops              {real}    NOT NULL,
  bw_bytes_per_sec  {real}    NOT NULL,
  read_ios          {int} NOT NULL,
  write_ios         {int} NOT NULL,
  read_bytes        {int} NOT NULL,
  write_bytes       {int} NOT NULL,
  lat_min_ns        {int} NOT NULL,
  lat_mean_ns       {real}    NOT NULL,
  p50_ns            {int} NOT NULL,
  p90_ns            {int} NOT NULL,
  p99_ns            {int} NOT NULL,
  p999_ns           {int} NOT NULL,
  p9999_ns          {int} NOT NULL,
  lat_max_ns        {int} NOT NULL,
  usr_cpu_ns        {int} NOT NULL,
  sys_cpu_ns        {int} NOT NULL,
  result            {blob}    NOT NULL  -- serialized RunResult without lat/read_lat/write_lat
);

CREATE TABLE agents (
  agent_id           TEXT    PRIMARY KEY,
  hostname           TEXT    NOT NULL,
  kernel_release     TEXT    NOT NULL,
  connected          {bool} NOT NULL,
  last_seen_unix_ms  {int} NOT NULL,
  host               {blob}    NOT NULL  -- serialized blkbench.v1.HostFacts
){without_rowid};

CREATE TABLE devices (
  agent_id      TEXT    NOT NULL REFERENCES agents(agent_id) ON DELETE CASCADE,
  path          TEXT    NOT NULL,
  device_class  TEXT    NOT NULL,
  model         TEXT    NOT NULL,
  simulated     {bool} NOT NULL,
  facts         {blob}    NOT NULL,  -- serialized blkbench.v1.DeviceFacts
  PRIMARY KEY (agent_id, path)
){without_rowid};

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
ALTER TABLE samples ADD COLUMN device {blob};
)sql";

// Each job's share of a sample interval (Sample.jobs: a serialized blkbench.v1.Sample
// holding only its jobs); NULL for samples from agents and engines before it existed.
constexpr char kSchemaV4[] = R"sql(
ALTER TABLE samples ADD COLUMN jobs {blob};
)sql";

constexpr const char* kStoreTables[] = {"experiments", "cells",   "runs",   "samples",
                                        "histograms",  "results", "agents", "devices"};

constexpr Migration kMigrations[] = {
    {1, "initial schema", kSchemaV1},
    {2, "experiment submitter and canceler", kSchemaV2},
    {3, "device counters per sample", kSchemaV3},
    {4, "job intervals per sample", kSchemaV4},
};

}  // namespace

absl::Span<const Migration> StoreMigrations() { return kMigrations; }

absl::Span<const char* const> StoreTables() { return kStoreTables; }

std::string ForDialect(const Dialect& dialect, absl::string_view ddl) {
  return absl::StrReplaceAll(ddl, {{"{serial}", dialect.serial},
                                   {"{rowid}", dialect.rowid},
                                   {"{int}", dialect.integer},
                                   {"{real}", dialect.real},
                                   {"{blob}", dialect.blob},
                                   {"{bool}", dialect.boolean},
                                   {"{without_rowid}", dialect.without_rowid}});
}

absl::Status ApplyMigrations(Conn& conn, absl::Span<const Migration> migrations) {
  for (size_t i = 0; i < migrations.size(); ++i) {
    if (migrations[i].version != static_cast<int>(i) + 1) {
      return absl::InternalError(
          absl::StrCat("schema migration at position ", i, " has version ", migrations[i].version));
    }
  }
  const auto latest = static_cast<int64_t>(migrations.size());
  absl::StatusOr<Transaction> txn = Transaction::Begin(conn, Conn::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  absl::StatusOr<int64_t> version = conn.LockSchema();
  if (!version.ok()) return version.status();
  if (*version > latest) {
    return absl::FailedPreconditionError(absl::StrCat(
        "database ", conn.name(), " has schema version ", *version,
        ", newer than this blkbench supports (", latest,
        "); it was written by a newer blkbench-controller: upgrade, or use another database"));
  }
  for (int64_t v = *version; v < latest; ++v) {
    const Migration& m = migrations[static_cast<size_t>(v)];
    const std::string op =
        absl::StrCat("schema migration ", m.version, " (", m.description, ") on ", conn.name());
    if (absl::Status s = conn.Exec(op, ForDialect(conn.dialect(), m.sql)); !s.ok()) return s;
    if (absl::Status s = conn.RecordMigration(m.version, m.description); !s.ok()) return s;
  }
  return txn->Commit();
}

}  // namespace blkbench::sql
