// The daemon-less experiment of `blkbench sim` and `blkbench run` (and of calibrate and
// bisect, built on them): the options they share, read once from the command line, and
// LocalSession, one experiment driven through the controller's lifecycle
// (controller/experiment_lifecycle.h) in this process — created as Controller::Submit
// creates one, each run ended by the rule that stores an agent's RunFinished, the
// experiment ended by the rule of Controller::SyncExperimentState — with the store
// (--db) written as the controller writes it. What runs a run is the caller's
// (local_run.h).
#ifndef BLKBENCH_CLI_LOCAL_SESSION_H_
#define BLKBENCH_CLI_LOCAL_SESSION_H_

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "blkbench/v1/agent.pb.h"
#include "blkbench/v1/controller.pb.h"
#include "cli/cli_common.h"
#include "cli/trace_sink.h"
#include "common/clock.h"
#include "controller/store/store.h"
#include "workloads/matrix.h"

namespace blkbench {

// What every local experiment takes, from the command line or a command built on one.
struct SessionOptions {
  std::string command = {};      // "sim", "run", "calibrate": for messages ("" = the default)
  std::string path = {};         // the matrix file
  std::string db_path = {};      // non-empty: store the experiment there (OpenStore)
  std::string trace_path = {};   // non-empty: every run's block events (TraceSink)
  std::string format = "table";  // table, csv, json, fio-json, fio-json+
  std::string report_path = {};  // non-empty: the experiment's HTML report (cli/report.h)
  std::string logs_dir = {};     // non-empty: fio's log files of the runs (cli/fio_logs.h)
  bool quiet = false;            // no progress lines on stderr
  // The matrix of `path`, parsed (the CLI's check did it); never null for a session.
  std::shared_ptr<const workloads::Matrix> matrix = nullptr;
  std::string matrix_text = {};  // the file's text, for the report ("" = not shown)
  // Called with every run's row (failed and canceled ones included) once all have run,
  // before the results are printed, for a caller that goes on from them. May be null.
  std::function<void(const v1::GetResultsResponse&)> on_results = nullptr;
};

// The options of `blkbench sim` or `run` FILE as parsed in `a` (REQUIRES: CheckMatrix
// passed): --db (else `default_db`), --trace, --format, --report, --logs, --quiet.
SessionOptions SessionOptionsFromArgs(const Args& a, const std::string& command,
                                      const std::string& default_db);

// Not thread-safe: one caller drives the runs, one at a time, in the store's order.
class LocalSession {
 public:
  // Creates the experiment of options.matrix (NewExperiment): with options.db_path in
  // that store (Store::CreateExperiment, its runs then read back as the store numbered
  // them), else numbered in memory as a store numbers a fresh one (RunOrder); then opens
  // the --trace sink. The error of the step that failed; nothing ran then.
  static absl::StatusOr<std::unique_ptr<LocalSession>> Start(const SessionOptions& options,
                                                             Clock& clock);

  int size() const { return experiment_.runs_size(); }
  const v1::Run& run(int i) const { return experiment_.runs(i); }
  const v1::CellSpec& CellOf(int i) const;

  // Places run `i` on `device`: attempt 1, agent "local".
  void Place(int i, const std::string& device);
  // The assignment the controller would send an agent for run `i` as placed.
  v1::RunAssignment AssignmentOf(int i) const;
  // Starts run `i`: RUNNING from now (stored). Returns the stream of its --trace section
  // (its header written), or null without --trace.
  std::ostream* Begin(int i);
  // A sample of the running run `i`: kept for its results row, and stored.
  void AddSample(int i, const v1::Sample& sample);
  // Ends run `i` with an agent's report (RunEndOf: a success without I/O is a failure),
  // stored with its result; appends its results row. Returns the run as ended.
  const v1::Run& Finish(int i, const v1::RunFinished& finished);

  // Ends the experiment once every run ended (EndOfExperiment: CANCELED once a run was
  // canceled, else FAILED once one failed, else DONE), stored. Returns every run's row
  // and the experiment as ended (matrix_text from the options when the store has none).
  v1::GetResultsResponse End();

  uint64_t experiment_id() const { return experiment_id_; }  // 0 without a store
  int failed() const { return failed_; }
  int canceled() const { return canceled_; }
  // The first store error since Start (the runs go on; the command fails), or OK.
  const absl::Status& store_error() const { return store_error_; }

 private:
  LocalSession(const SessionOptions& options, Clock& clock) : options_(options), clock_(clock) {}
  void Keep(const absl::Status& s);

  const SessionOptions options_;
  Clock& clock_;
  std::unique_ptr<Store> store_;      // null without --db
  std::unique_ptr<TraceSink> trace_;  // null without --trace
  uint64_t experiment_id_ = 0;
  v1::Experiment experiment_;                     // its runs as placed, started and ended here
  std::vector<std::vector<v1::Sample>> samples_;  // by run index
  v1::GetResultsResponse results_;
  int failed_ = 0;
  int canceled_ = 0;
  absl::Status store_error_;
};

}  // namespace blkbench

#endif  // BLKBENCH_CLI_LOCAL_SESSION_H_
