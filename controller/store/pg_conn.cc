// libpq wrappers for PgStore (see pg_conn.h).
#include "controller/store/pg_conn.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace blkbench::pg {

namespace {

absl::StatusCode CodeOf(absl::string_view sqlstate) {
  if (absl::StartsWith(sqlstate, "08") || absl::StartsWith(sqlstate, "57P") ||
      sqlstate == "40001" || sqlstate == "40P01" || sqlstate == "55P03") {
    return absl::StatusCode::kUnavailable;
  }
  if (absl::StartsWith(sqlstate, "53")) return absl::StatusCode::kResourceExhausted;
  if (absl::StartsWith(sqlstate, "23") || absl::StartsWith(sqlstate, "22")) {
    return absl::StatusCode::kInvalidArgument;
  }
  if (absl::StartsWith(sqlstate, "28") || sqlstate == "42501") {
    return absl::StatusCode::kFailedPrecondition;
  }
  if (sqlstate == "XX001" || sqlstate == "XX002") return absl::StatusCode::kDataLoss;
  return absl::StatusCode::kInternal;
}

}  // namespace

absl::Status ErrorStatus(PGconn* conn, const PGresult* result, absl::string_view op) {
  const char* detail = result != nullptr ? PQresultErrorMessage(result) : "";
  if (detail == nullptr || *detail == '\0') detail = conn != nullptr ? PQerrorMessage(conn) : "";
  const std::string message(absl::StripTrailingAsciiWhitespace(detail));
  const char* state = result != nullptr ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (conn == nullptr || PQstatus(conn) == CONNECTION_BAD) {
    return absl::UnavailableError(absl::StrCat(op, ": connection to PostgreSQL lost: ", message));
  }
  if (state == nullptr) {
    return absl::InternalError(absl::StrCat(op, ": ", message));
  }
  return absl::Status(CodeOf(state), absl::StrCat(op, ": ", message, " (SQLSTATE ", state, ")"));
}

void Params::Add(int64_t value) {
  values_.push_back(absl::StrCat(value));
  lengths_.push_back(0);
  formats_.push_back(0);
}

void Params::Add(double value) {
  values_.push_back(absl::StrFormat("%.17g", value));
  lengths_.push_back(0);
  formats_.push_back(0);
}

void Params::Add(bool value) {
  values_.push_back(value ? "t" : "f");
  lengths_.push_back(0);
  formats_.push_back(0);
}

void Params::Add(absl::string_view text) {
  values_.emplace_back(text);
  lengths_.push_back(0);
  formats_.push_back(0);
}

void Params::Add(Bytea value) {
  values_.emplace_back(value.bytes);
  lengths_.push_back(static_cast<int>(value.bytes.size()));
  formats_.push_back(1);
}

std::vector<const char*> Params::Values() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const std::string& v : values_) out.push_back(v.c_str());
  return out;
}

int64_t Result::affected() const { return std::strtoll(PQcmdTuples(result_.get()), nullptr, 10); }

std::string Result::Text(int row, int col) const {
  const char* v = PQgetvalue(result_.get(), row, col);
  return std::string(v, static_cast<size_t>(PQgetlength(result_.get(), row, col)));
}

int64_t Result::Int(int row, int col) const {
  return std::strtoll(PQgetvalue(result_.get(), row, col), nullptr, 10);
}

double Result::Double(int row, int col) const {
  return std::strtod(PQgetvalue(result_.get(), row, col), nullptr);
}

std::string Result::Bytes(int row, int col) const {
  size_t n = 0;
  unsigned char* raw = PQunescapeBytea(
      reinterpret_cast<const unsigned char*>(PQgetvalue(result_.get(), row, col)), &n);
  if (raw == nullptr) return std::string();
  std::string out(reinterpret_cast<const char*>(raw), n);
  PQfreemem(raw);
  return out;
}

absl::StatusOr<std::unique_ptr<Conn>> Conn::Connect(const std::string& conninfo) {
  PGconn* conn = PQconnectdb(conninfo.c_str());
  if (conn == nullptr) return absl::ResourceExhaustedError("connect to PostgreSQL: out of memory");
  if (PQstatus(conn) != CONNECTION_OK) {
    absl::Status s = absl::UnavailableError(absl::StrCat(
        "connect to PostgreSQL: ", absl::StripTrailingAsciiWhitespace(PQerrorMessage(conn))));
    PQfinish(conn);
    return s;
  }
  std::string target = absl::StrCat(PQhost(conn), ":", PQport(conn), "/", PQdb(conn));
  return std::unique_ptr<Conn>(new Conn(conn, std::move(target)));
}

Conn::~Conn() { PQfinish(conn_); }

absl::Status Conn::EnsureConnected(absl::string_view op) {
  if (PQstatus(conn_) == CONNECTION_OK) return absl::OkStatus();
  prepared_.clear();  // prepared statements die with the server session
  PQreset(conn_);
  if (PQstatus(conn_) != CONNECTION_OK) {
    return absl::UnavailableError(absl::StrCat(
        op, ": PostgreSQL at ", target_,
        " is unreachable: ", absl::StripTrailingAsciiWhitespace(PQerrorMessage(conn_))));
  }
  return absl::OkStatus();
}

absl::StatusOr<Result> Conn::QueryParams(absl::string_view op, const std::string& sql,
                                         const Params& params) {
  auto it = prepared_.find(sql);
  if (it == prepared_.end()) {
    std::string name = absl::StrCat("s", prepared_.size() + 1);
    Result prepared(PQprepare(conn_, name.c_str(), sql.c_str(), params.size(), nullptr));
    if (PQresultStatus(prepared.raw_result()) != PGRES_COMMAND_OK) {
      return ErrorStatus(conn_, prepared.raw_result(), absl::StrCat(op, " (prepare)"));
    }
    it = prepared_.emplace(sql, std::move(name)).first;
  }
  const std::vector<const char*> values = params.Values();
  Result result(PQexecPrepared(conn_, it->second.c_str(), params.size(), values.data(),
                               params.Lengths(), params.Formats(), /*resultFormat=*/0));
  const ExecStatusType status = PQresultStatus(result.raw_result());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return ErrorStatus(conn_, result.raw_result(), op);
  }
  return result;
}

absl::Status Conn::Exec(absl::string_view op, const std::string& sql) {
  Result result(PQexec(conn_, sql.c_str()));
  const ExecStatusType status = PQresultStatus(result.raw_result());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    return ErrorStatus(conn_, result.raw_result(), op);
  }
  return absl::OkStatus();
}

absl::StatusOr<Transaction> Transaction::Begin(Conn& conn, Mode mode) {
  const char* op = mode == Mode::kWrite ? "begin write transaction" : "begin read transaction";
  if (absl::Status s = conn.EnsureConnected(op); !s.ok()) return s;
  if (absl::Status s = conn.Exec(
          op, mode == Mode::kWrite ? "BEGIN" : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      !s.ok()) {
    return s;
  }
  return Transaction(&conn);
}

Transaction::~Transaction() {
  if (conn_ != nullptr && PQstatus(conn_->raw()) == CONNECTION_OK) {
    (void)conn_->Exec("rollback", "ROLLBACK");
  }
}

absl::Status Transaction::Commit() {
  Conn* conn = conn_;
  conn_ = nullptr;
  Result result(PQexec(conn->raw(), "COMMIT"));
  if (PQresultStatus(result.raw_result()) != PGRES_COMMAND_OK) {
    return ErrorStatus(conn->raw(), result.raw_result(), "commit");
  }
  // COMMIT of a transaction an error aborted answers ROLLBACK: nothing was stored.
  if (result.command() != "COMMIT") {
    return absl::InternalError("commit: the transaction had failed and was rolled back");
  }
  return absl::OkStatus();
}

}  // namespace blkbench::pg
