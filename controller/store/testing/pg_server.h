// A real PostgreSQL server for tests and benches: initdb into a temporary directory, the
// server listening only on a Unix socket there, a fresh database per test, stopped and
// removed at the end. One per test process (PgServerEnvironment), started on first use.
#ifndef BLKBENCH_CONTROLLER_STORE_TESTING_PG_SERVER_H_
#define BLKBENCH_CONTROLLER_STORE_TESTING_PG_SERVER_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace blkbench::testing {

class PgServer {
 public:
  // The directory holding initdb and pg_ctl: $BLKBENCH_PG_BINDIR, else the newest
  // /usr/lib/postgresql/N/bin (Debian's layout). "" if PostgreSQL is not installed.
  static std::string FindBinDir();

  // initdb (trust authentication, UTF8) into a new directory under `parent` and starts
  // the server there. Run as root (tests here are), the cluster belongs to the system
  // user blkbench-pg, created if missing, since PostgreSQL refuses to run as root.
  static absl::StatusOr<std::unique_ptr<PgServer>> Create(const std::string& bin_dir,
                                                          const std::string& parent);
  ~PgServer();  // stops the server (fast shutdown) and removes its directory
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // pg_ctl stop -m fast / start again on the same data: a server restart for fault tests.
  absl::Status Stop();
  absl::Status Start();

  // A libpq URI for database `db` on this server.
  std::string Uri(const std::string& db) const;
  // A new, empty database with a unique name (returned), and dropping it.
  absl::StatusOr<std::string> CreateDatabase();
  absl::Status DropDatabase(const std::string& db);
  // Runs `sql` on a new connection to `db`; the first column of the first row as text,
  // "<no row>", "<null>", or "<error: …>". For assertions on what an SQL user sees.
  std::string QueryText(const std::string& db, const std::string& sql) const;
  // Runs a script on a new connection to `db` (e.g. ALTER DATABASE … SET …).
  absl::Status Exec(const std::string& db, const std::string& sql) const;

 private:
  PgServer(std::string bin_dir, std::string dir, std::string user)
      : bin_dir_(std::move(bin_dir)), dir_(std::move(dir)), user_(std::move(user)) {}
  absl::Status Run(const std::string& tool, const std::vector<std::string>& args) const;

  std::string bin_dir_;
  std::string dir_;   // the socket directory; data/ and server.log below it
  std::string user_;  // the OS user (and database superuser) owning the cluster
  bool running_ = false;
  int next_db_ = 0;
};

// One PgServer per test process, started by the first test that asks for it and stopped
// when the tests end. Register it once per binary with
// ::testing::AddGlobalTestEnvironment(new PgServerEnvironment).
class PgServerEnvironment : public ::testing::Environment {
 public:
  void TearDown() override;
  // The running server; null, with `skip_reason` set, if PostgreSQL is not installed
  // (the caller GTEST_SKIPs with it). A server that is installed but fails to start is a
  // test failure, reported through the returned status.
  static absl::StatusOr<PgServer*> Get(std::string* skip_reason);
};

}  // namespace blkbench::testing

#endif  // BLKBENCH_CONTROLLER_STORE_TESTING_PG_SERVER_H_
