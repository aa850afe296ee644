// PgServer: a throwaway PostgreSQL cluster per test process (see pg_server.h).
#include "controller/store/testing/pg_server.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace blkbench::testing {
namespace {

// The unprivileged owner of test clusters when the tests run as root.
constexpr char kServerUser[] = "blkbench-pg";

std::string Tail(const std::string& path, size_t max_bytes = 2000) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string s = ss.str();
  return s.size() > max_bytes ? s.substr(s.size() - max_bytes) : s;
}

// Runs argv to completion with stdout and stderr appended to `log`; its exit status.
int Spawn(const std::vector<std::string>& argv, const std::string& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    execvp(args[0], args.data());
    _exit(127);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The OS user to run the server as: ourselves, or kServerUser when we are root.
absl::StatusOr<std::string> ServerUser(const std::string& log) {
  if (geteuid() != 0) {
    const passwd* pw = getpwuid(geteuid());
    return std::string(pw != nullptr ? pw->pw_name : "postgres");
  }
  if (getpwnam(kServerUser) == nullptr) {
    const int rc = Spawn({"useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                          "--shell", "/usr/sbin/nologin", kServerUser},
                         log);
    // Another test process may have created it meanwhile: check again, not rc.
    if (getpwnam(kServerUser) == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("useradd ", kServerUser, " failed (exit ", rc, "): ", Tail(log)));
    }
  }
  return std::string(kServerUser);
}

}  // namespace

std::string PgServer::FindBinDir() {
  if (const char* env = getenv("BLKBENCH_PG_BINDIR"); env != nullptr && *env != '\0') return env;
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::filesystem::path bin = entry.path() / "bin";
    if (std::filesystem::exists(bin / "initdb") && std::filesystem::exists(bin / "pg_ctl")) {
      found.push_back(bin);
    }
  }
  if (found.empty()) return "";
  // Newest major version: compare numerically (10 > 9).
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return std::atoi(a.parent_path().filename().c_str()) <
           std::atoi(b.parent_path().filename().c_str());
  });
  return found.back().string();
}

absl::StatusOr<std::unique_ptr<PgServer>> PgServer::Create(const std::string& bin_dir,
                                                           const std::string& parent) {
  std::string tmpl = (std::filesystem::path(parent) / "pg.XXXXXX").string();
  if (mkdtemp(tmpl.data()) == nullptr) {
    return absl::InternalError(absl::StrCat("mkdtemp under ", parent, " failed"));
  }
  const std::string log = tmpl + "/setup.log";
  absl::StatusOr<std::string> user = ServerUser(log);
  if (!user.ok()) return user.status();
  if (geteuid() == 0) {
    const passwd* pw = getpwnam(user->c_str());
    if (pw == nullptr || chown(tmpl.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
      return absl::InternalError(absl::StrCat("chown ", tmpl, " to ", *user, " failed"));
    }
  }
  chmod(tmpl.c_str(), 0700);
  std::unique_ptr<PgServer> server(new PgServer(bin_dir, tmpl, *user));
  // --no-sync: the initial cluster files need not be on disk before the tests use them.
  if (absl::Status s = server->Run("initdb", {"-D", tmpl + "/data", "-A", "trust", "-E", "UTF8",
                                              "--locale=C", "-U", *user, "--no-sync"});
      !s.ok()) {
    return s;
  }
  {
    // No TCP at all: the server is reachable only through the socket in its directory.
    std::ofstream conf(tmpl + "/data/postgresql.conf", std::ios::app);
    conf << "\nlisten_addresses = ''\nunix_socket_directories = '" << tmpl
         << "'\nport = 5432\nmax_connections = 30\nshared_buffers = 16MB\n";
    if (!conf) return absl::InternalError("cannot write postgresql.conf");
  }
  if (absl::Status s = server->Start(); !s.ok()) return s;
  return server;
}

PgServer::~PgServer() {
  if (running_) (void)Stop();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

absl::Status PgServer::Run(const std::string& tool, const std::vector<std::string>& args) const {
  std::vector<std::string> argv;
  if (geteuid() == 0) argv = {"runuser", "-u", user_, "--"};
  argv.push_back(bin_dir_ + "/" + tool);
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string log = dir_ + "/" + tool + ".log";
  if (const int rc = Spawn(argv, log); rc != 0) {
    return absl::InternalError(absl::StrCat(absl::StrJoin(argv, " "), " failed (exit ", rc, "):\n",
                                            Tail(log), "\nserver log:\n",
                                            Tail(dir_ + "/server.log")));
  }
  return absl::OkStatus();
}

absl::Status PgServer::Start() {
  if (absl::Status s = Run(
          "pg_ctl", {"-D", dir_ + "/data", "-l", dir_ + "/server.log", "-w", "-t", "120", "start"});
      !s.ok()) {
    return s;
  }
  running_ = true;
  return absl::OkStatus();
}

absl::Status PgServer::Stop() {
  running_ = false;
  return Run("pg_ctl", {"-D", dir_ + "/data", "-m", "fast", "-w", "-t", "120", "stop"});
}

std::string PgServer::Uri(const std::string& db) const {
  return absl::StrCat("postgresql:///", db, "?host=", dir_, "&port=5432&user=", user_);
}

absl::StatusOr<std::string> PgServer::CreateDatabase() {
  const std::string name = absl::StrCat("blkbench_test_", getpid(), "_", ++next_db_);
  if (absl::Status s = Exec("postgres", absl::StrCat("CREATE DATABASE ", name)); !s.ok()) return s;
  return name;
}

absl::Status PgServer::DropDatabase(const std::string& db) {
  return Exec("postgres", absl::StrCat("DROP DATABASE IF EXISTS ", db, " WITH (FORCE)"));
}

std::string PgServer::QueryText(const std::string& db, const std::string& sql) const {
  PGconn* conn = PQconnectdb(Uri(db).c_str());
  std::string out;
  if (PQstatus(conn) != CONNECTION_OK) {
    out = absl::StrCat("<error: ", PQerrorMessage(conn), ">");
  } else {
    PGresult* r = PQexec(conn, sql.c_str());
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
      out = absl::StrCat("<error: ", PQresultErrorMessage(r), ">");
    } else if (PQntuples(r) == 0) {
      out = "<no row>";
    } else if (PQgetisnull(r, 0, 0)) {
      out = "<null>";
    } else {
      out = PQgetvalue(r, 0, 0);
    }
    PQclear(r);
  }
  PQfinish(conn);
  return out;
}

absl::Status PgServer::Exec(const std::string& db, const std::string& sql) const {
  PGconn* conn = PQconnectdb(Uri(db).c_str());
  absl::Status status;
  if (PQstatus(conn) != CONNECTION_OK) {
    status = absl::UnavailableError(absl::StrCat("connect to ", db, ": ", PQerrorMessage(conn)));
  } else {
    PGresult* r = PQexec(conn, sql.c_str());
    if (PQresultStatus(r) != PGRES_COMMAND_OK && PQresultStatus(r) != PGRES_TUPLES_OK) {
      status = absl::InternalError(absl::StrCat(sql, ": ", PQresultErrorMessage(r)));
    }
    PQclear(r);
  }
  PQfinish(conn);
  return status;
}

namespace {

struct Shared {
  std::mutex mu;
  bool tried = false;
  std::string skip_reason;
  absl::Status status;
  std::unique_ptr<PgServer> server;  // destroyed at exit at the latest: the server stops
};

Shared& TheShared() {
  static Shared* shared = new Shared;
  return *shared;
}

}  // namespace

void PgServerEnvironment::TearDown() {
  Shared& s = TheShared();
  std::lock_guard<std::mutex> lock(s.mu);
  s.server.reset();
}

absl::StatusOr<PgServer*> PgServerEnvironment::Get(std::string* skip_reason) {
  Shared& s = TheShared();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.tried) {
    s.tried = true;
    const std::string bin = PgServer::FindBinDir();
    if (bin.empty()) {
      s.skip_reason =
          "PostgreSQL server binaries (initdb, pg_ctl) not found in /usr/lib/postgresql/*/bin "
          "or $BLKBENCH_PG_BINDIR: install Debian's postgresql package (scripts/deps.sh) to "
          "run the PostgreSQL store tests";
    } else {
      absl::StatusOr<std::unique_ptr<PgServer>> server =
          PgServer::Create(bin, ::testing::TempDir());
      if (server.ok()) {
        s.server = *std::move(server);
        // Also stop at exit if no environment was registered to do it.
        std::atexit([] { TheShared().server.reset(); });
      } else {
        s.status = server.status();
      }
    }
  }
  *skip_reason = s.skip_reason;
  if (!s.status.ok()) return s.status;
  return s.server.get();
}

}  // namespace blkbench::testing
