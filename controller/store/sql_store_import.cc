// SqlStore::Import: the write side of `blkbench-controller migrate` — a whole store copied
// into an empty one in one transaction, ids kept.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "controller/store/sql_rows.h"
#include "controller/store/sql_store.h"
#include "workloads/format.h"

namespace blkbench {

using sql::Blob;
using sql::Result;

absl::Status SqlStore::Import(const StoreContents& contents) {
  absl::MutexLock lock(&mu_);
  return InWriteTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
    const sql::Dialect& dialect = conn_->dialect();
    if (*dialect.lock_for_import != '\0') {
      if (absl::Status s = conn_->Exec("lock tables for import", dialect.lock_for_import);
          !s.ok()) {
        return s;
      }
    }
    absl::StatusOr<Result> count =
        conn_->Run("check the target is empty",
                   "SELECT (SELECT COUNT(*) FROM experiments), (SELECT COUNT(*) FROM agents)");
    if (!count.ok()) return count.status();
    if (count->Int(0, 0) != 0 || count->Int(0, 1) != 0) {
      return absl::FailedPreconditionError(
          absl::StrCat(dialect.name, " database ", conn_->name(), " is not empty (",
                       count->Int(0, 0), " experiments, ", count->Int(0, 1),
                       " agents): migrate only into a new database, so no id is used twice"));
    }
    for (const v1::Experiment& e : contents.experiments) {
      const auto id = static_cast<int64_t>(e.id());
      if (absl::StatusOr<Result> r = conn_->Run(
              "import experiment",
              "INSERT INTO experiments (id, name, state, file_name, matrix_text, repeats,"
              " created_unix_ms, finished_unix_ms, error, submitted_by, canceled_by)"
              " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
              id, e.name(), sql::ExperimentStateName(e.state()), e.file_name(), e.matrix_text(),
              e.repeats(), e.created_unix_ms(), e.finished_unix_ms(), e.error(), e.submitted_by(),
              e.canceled_by());
          !r.ok()) {
        return r.status();
      }
      for (const v1::CellSpec& cell : e.cells()) {
        absl::StatusOr<std::string> spec = sql::Serialize(cell, "cell spec");
        if (!spec.ok()) return spec.status();
        if (absl::StatusOr<Result> r = conn_->Run(
                "import cell",
                "INSERT INTO cells (experiment_id, cell_index, label, spec) VALUES (?, ?, ?, ?)",
                id, cell.index(), workloads::CellLabel(cell), Blob{*spec});
            !r.ok()) {
          return r.status();
        }
      }
      for (const v1::Run& run : e.runs()) {
        if (absl::StatusOr<Result> r = conn_->Run(
                "import run",
                "INSERT INTO runs (id, experiment_id, cell_index, repeat, attempt, state,"
                " agent_id, device_path, lease_id, created_unix_ms, started_unix_ms,"
                " finished_unix_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                run.id(), id, run.cell_index(), run.repeat(), run.attempt(),
                sql::RunStateName(run.state()), run.agent_id(), run.device_path(), run.lease_id(),
                run.created_unix_ms(), run.started_unix_ms(), run.finished_unix_ms(), run.error());
            !r.ok()) {
          return r.status();
        }
        if (auto it = contents.samples.find(run.id()); it != contents.samples.end()) {
          for (const v1::Sample& sample : it->second) {
            if (absl::Status s = InsertSample(run.id(), run.attempt(), sample); !s.ok()) return s;
          }
        }
        if (run.has_result()) {
          if (absl::Status s = WriteResult(run.id(), run.attempt(), run.result()); !s.ok()) {
            return s;
          }
        }
      }
    }
    for (const v1::AgentInfo& agent : contents.agents) {
      if (absl::Status s = WriteAgent(agent); !s.ok()) return s;
    }
    if (*dialect.after_import == '\0') return absl::OkStatus();
    // New experiments and runs continue after the copied ids.
    for (const char* table : {"experiments", "runs"}) {
      if (absl::Status s =
              conn_->Exec(absl::StrCat("move the ", table, " id sequence"),
                          absl::StrReplaceAll(dialect.after_import, {{"{table}", table}}));
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  });
}

}  // namespace blkbench
