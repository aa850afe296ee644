-- A blkbench SQLite store as schema version 3 wrote it (the DDL verbatim from
-- controller/store/schema.cc before the store was written once over a dialect seam),
-- with one experiment, a run that finished with samples and a result, and an agent.
-- schema_upgrade_test.cc loads it and opens it with today's SqliteStore.
-- migration 1
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
-- migration 2
ALTER TABLE experiments ADD COLUMN submitted_by TEXT NOT NULL DEFAULT '';
ALTER TABLE experiments ADD COLUMN canceled_by TEXT NOT NULL DEFAULT '';
-- migration 3
ALTER TABLE samples ADD COLUMN device BLOB;
PRAGMA user_version = 3;
PRAGMA application_id = 1651204657;
INSERT INTO experiments (id, name, state, file_name, matrix_text, repeats, created_unix_ms,
  finished_unix_ms, error, submitted_by, canceled_by)
  VALUES (1, 'old', 'EXPERIMENT_DONE', 'old.yaml', 'name: old', 1, 1700000000000,
  1700000005000, '', 'alice', '');
INSERT INTO cells (experiment_id, cell_index, label, spec) VALUES (1, 0, 'scheduler=none', X'');
INSERT INTO runs (id, experiment_id, cell_index, repeat, attempt, state, agent_id, device_path,
  lease_id, created_unix_ms, started_unix_ms, finished_unix_ms, error)
  VALUES (1, 1, 0, 0, 1, 'RUN_DONE', 'a1', '/dev/x', 'L1', 1700000000000, 1700000001000,
  1700000005000, '');
INSERT INTO samples (id, run_id, attempt, seq, offset_ns, interval_ns, read_ios, write_ios,
  read_bytes, write_bytes, device) VALUES
  (1, 1, 1, 1, 1000000000, 1000000000, 0, 1000, 0, 4096000, NULL),
  (2, 1, 1, 2, 2000000000, 1000000000, 0, 2000, 0, 8192000, NULL);
INSERT INTO results (run_id, attempt, runner, duration_ns, iops, bw_bytes_per_sec, read_ios,
  write_ios, read_bytes, write_bytes, lat_min_ns, lat_mean_ns, p50_ns, p90_ns, p99_ns, p999_ns,
  p9999_ns, lat_max_ns, usr_cpu_ns, sys_cpu_ns, result)
  VALUES (1, 1, 'engine', 2000000000, 1500, 6144000, 0, 3000, 0, 12288000, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0, X'');
INSERT INTO agents (agent_id, hostname, kernel_release, connected, last_seen_unix_ms, host)
  VALUES ('a1', 'h1', '6.1.0', 1, 1700000005000, X'');
INSERT INTO devices (agent_id, path, device_class, model, simulated, facts)
  VALUES ('a1', '/dev/x', 'nvme', 'm', 0, X'');
