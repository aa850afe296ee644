// gRPC transport for the controller; see services.h.
#include "controller/services.h"

#include <algorithm>
#include <memory>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "common/states.h"
#include "controller/client_errors.h"

namespace blkbench {

grpc::Status AtStreamCap(const StreamSlots& slots, const std::string& kind,
                         ServiceMetrics* metrics) {
  if (metrics != nullptr) metrics->LimitRefused(kind + "_streams");
  return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                      absl::StrCat("controller serves at most ", slots.capacity(), " ", kind,
                                   " streams (--max_", kind, "_streams); try again later"));
}

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  std::string message(s.message());
  // The Controller answers Unavailable only when its store failed (its own refusals use
  // other codes); the prefix tells a client the controller itself was reached.
  if (s.code() == absl::StatusCode::kUnavailable &&
      !absl::StartsWith(message, kStoreUnavailablePrefix)) {
    message = absl::StrCat(kStoreUnavailablePrefix, message);
  }
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), message);
}

absl::StatusOr<tls::Identity> Authorize(const grpc::ServerContext* ctx, tls::Role need,
                                        const char* what) {
  absl::StatusOr<tls::Identity> who = tls::CallerIdentity(*ctx->auth_context());
  if (!who.ok()) return who.status();
  if (!who->Allows(need)) {
    return absl::PermissionDeniedError(
        absl::StrCat(who->Describe(), " may not ", what, " (needs the ", tls::RoleName(need),
                     " role", who->local ? absl::StrCat("; ", tls::kLocalAdminHint) : "", ")"));
  }
  return who;
}

namespace {

// The name recorded as submitter / canceler.
std::string Principal(const tls::Identity& who) { return who.local ? "local" : who.name; }

// Lease ids are bearer secrets of agents: only admins (and local callers) see them.
void HideLeases(const tls::Identity& who, v1::Experiment& exp) {
  if (who.Allows(tls::Role::kAdmin)) return;
  for (v1::Run& run : *exp.mutable_runs()) run.clear_lease_id();
}
void HideLeases(const tls::Identity& who, v1::GetResultsResponse& res) {
  if (who.Allows(tls::Role::kAdmin)) return;
  for (v1::ResultRow& row : *res.mutable_rows()) row.mutable_run()->clear_lease_id();
}

}  // namespace

Deadline ControllerServiceImpl::UnaryDeadline(const grpc::ServerContext* ctx) const {
  const auto client_left = ctx->deadline() - std::chrono::system_clock::now();
  const int64_t client_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(client_left).count();
  if (ctx->deadline() != std::chrono::system_clock::time_point::max() &&
      client_ms < unary_deadline_ms_) {
    return Deadline(clock_, std::max<int64_t>(client_ms, 0), "the caller's");
  }
  return Deadline(clock_, unary_deadline_ms_, "the controller's --unary_deadline_ms");
}

// `who` names the variable it declares and `role` an enumerator: neither can be
// parenthesised.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define BLKBENCH_AUTHORIZE(who, ctx, role, what)                             \
  absl::StatusOr<tls::Identity> who = Authorize(ctx, tls::Role::role, what); \
  if (!who.ok()) return ToGrpc(who.status())
// NOLINTEND(bugprone-macro-parentheses)

grpc::Status ControllerServiceImpl::SubmitExperiment(grpc::ServerContext* ctx,
                                                     const v1::SubmitExperimentRequest* req,
                                                     v1::Experiment* resp) {
  BLKBENCH_AUTHORIZE(who, ctx, kSubmit, "submit experiments");
  auto exp = controller_.Submit(
      req->file_name(), req->matrix_text(), Principal(*who), UnaryDeadline(ctx),
      std::map<std::string, std::string>(req->machine_files().begin(), req->machine_files().end()));
  if (!exp.ok()) return ToGrpc(exp.status());
  *resp = std::move(*exp);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::GetExperiment(grpc::ServerContext* ctx,
                                                  const v1::GetExperimentRequest* req,
                                                  v1::Experiment* resp) {
  BLKBENCH_AUTHORIZE(who, ctx, kRead, "read experiments");
  auto exp = controller_.GetExperiment(req->id(), req->with_results(), UnaryDeadline(ctx));
  if (!exp.ok()) return ToGrpc(exp.status());
  HideLeases(*who, *exp);
  *resp = std::move(*exp);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::ListExperiments(grpc::ServerContext* ctx,
                                                    const v1::ListExperimentsRequest* req,
                                                    v1::ListExperimentsResponse* resp) {
  BLKBENCH_AUTHORIZE(who, ctx, kRead, "list experiments");
  auto exps = controller_.ListExperiments(req->limit(), UnaryDeadline(ctx));
  if (!exps.ok()) return ToGrpc(exps.status());
  for (auto& e : *exps) *resp->add_experiments() = std::move(e);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::WatchExperiment(grpc::ServerContext* ctx,
                                                    const v1::WatchExperimentRequest* req,
                                                    grpc::ServerWriter<v1::WatchEvent>* writer) {
  BLKBENCH_AUTHORIZE(who, ctx, kRead, "watch experiments");
  const StreamSlots::Slot slot = watch_slots_.TryAcquire();
  if (!slot.held()) return AtStreamCap(watch_slots_, "watch", metrics_);
  uint64_t seen = 0;
  while (!ctx->IsCancelled()) {
    auto exp = controller_.GetExperiment(req->id(), false);
    if (!exp.ok()) return ToGrpc(exp.status());
    HideLeases(*who, *exp);
    v1::WatchEvent ev;
    *ev.mutable_experiment() = *exp;
    if (!writer->Write(ev)) return grpc::Status::OK;
    if (IsEndedExperimentState(exp->state())) return grpc::Status::OK;
    // Wake on any change, and at least every second so a cancelled client is noticed.
    seen = controller_.WaitForChange(seen, absl::Seconds(1));
  }
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::CancelExperiment(grpc::ServerContext* ctx,
                                                     const v1::CancelExperimentRequest* req,
                                                     v1::Experiment* resp) {
  BLKBENCH_AUTHORIZE(who, ctx, kSubmit, "cancel experiments");
  if (grpc::Status own = CheckOwner(*who, req->id(), "cancel"); !own.ok()) return own;
  auto exp = controller_.Cancel(req->id(), Principal(*who));
  if (!exp.ok()) return ToGrpc(exp.status());
  HideLeases(*who, *exp);
  *resp = std::move(*exp);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::ListAgents(grpc::ServerContext* ctx,
                                               const v1::ListAgentsRequest*,
                                               v1::ListAgentsResponse* resp) {
  BLKBENCH_AUTHORIZE(who, ctx, kRead, "list agents");
  auto agents = controller_.ListAgents();
  if (!agents.ok()) return ToGrpc(agents.status());
  for (auto& a : *agents) *resp->add_agents() = std::move(a);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::GetResults(grpc::ServerContext* ctx,
                                               const v1::GetResultsRequest* req,
                                               v1::GetResultsResponse* resp) {
  BLKBENCH_AUTHORIZE(who, ctx, kRead, "read results");
  auto res = controller_.GetResults(req->experiment_id(), req->with_samples(), UnaryDeadline(ctx));
  if (!res.ok()) return ToGrpc(res.status());
  HideLeases(*who, *res);
  *resp = std::move(*res);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::AddRepeats(grpc::ServerContext* ctx,
                                               const v1::AddRepeatsRequest* req,
                                               v1::AddRepeatsResponse* resp) {
  BLKBENCH_AUTHORIZE(who, ctx, kSubmit, "add repeats");
  if (grpc::Status own = CheckOwner(*who, req->experiment_id(), "add repeats to"); !own.ok()) {
    return own;
  }
  const std::vector<uint32_t> cells(req->cell_indices().begin(), req->cell_indices().end());
  auto res = controller_.AddRepeats(req->experiment_id(), cells, req->count());
  if (!res.ok()) return ToGrpc(res.status());
  *resp = std::move(*res);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::GetHistory(grpc::ServerContext* ctx,
                                               const v1::GetHistoryRequest* req,
                                               v1::GetHistoryResponse* resp) {
  BLKBENCH_AUTHORIZE(who, ctx, kRead, "read history");
  auto res = controller_.GetHistory(*req, UnaryDeadline(ctx));
  if (!res.ok()) return ToGrpc(res.status());
  *resp = std::move(*res);
  return grpc::Status::OK;
}

grpc::Status ControllerServiceImpl::CheckOwner(const tls::Identity& who, uint64_t id,
                                               const char* what) {
  if (who.Allows(tls::Role::kAdmin)) return grpc::Status::OK;
  auto exp = controller_.GetExperiment(id, false);
  if (!exp.ok()) return ToGrpc(exp.status());
  if (exp->submitted_by() == Principal(who)) return grpc::Status::OK;
  return ToGrpc(absl::PermissionDeniedError(
      absl::StrCat(who.Describe(), " may not ", what, " experiment ", id, " of ",
                   exp->submitted_by().empty() ? "someone else" : exp->submitted_by(),
                   " (only its submitter or an admin may)")));
}

}  // namespace blkbench
