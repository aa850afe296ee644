// SqlStore: the agent registry (agents, their devices, and the runs they hold).
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "controller/store/sql_rows.h"
#include "controller/store/sql_store.h"

namespace blkbench {

using sql::Blob;
using sql::Result;

absl::Status SqlStore::UpsertAgent(const v1::AgentInfo& agent) {
  if (agent.agent_id().empty()) {
    return absl::InvalidArgumentError("UpsertAgent: agent_id is empty");
  }
  absl::MutexLock lock(&mu_);
  return InWriteTransaction([&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return WriteAgent(agent); });
}

absl::Status SqlStore::WriteAgent(const v1::AgentInfo& agent) {
  absl::StatusOr<std::string> host = sql::Serialize(agent.host(), "host facts");
  if (!host.ok()) return host.status();
  // ON CONFLICT DO UPDATE, not a replace: a replace deletes the row (and its devices) first.
  if (absl::StatusOr<Result> r = conn_->Run(
          "upsert agent",
          "INSERT INTO agents (agent_id, hostname, kernel_release, connected, last_seen_unix_ms,"
          " host) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id) DO UPDATE SET"
          " hostname = excluded.hostname, kernel_release = excluded.kernel_release,"
          " connected = excluded.connected, last_seen_unix_ms = excluded.last_seen_unix_ms,"
          " host = excluded.host",
          agent.agent_id(), agent.host().hostname(), agent.host().kernel_release(),
          agent.connected(), agent.last_seen_unix_ms(), Blob{*host});
      !r.ok()) {
    return r.status();
  }
  // The agent's device list is replaced as a whole: a device it no longer reports is gone.
  if (absl::StatusOr<Result> r =
          conn_->Run("delete devices", "DELETE FROM devices WHERE agent_id = ?", agent.agent_id());
      !r.ok()) {
    return r.status();
  }
  for (const v1::DeviceFacts& device : agent.devices()) {
    absl::StatusOr<std::string> facts = sql::Serialize(device, "device facts");
    if (!facts.ok()) return facts.status();
    if (absl::StatusOr<Result> r =
            conn_->Run("insert device",
                       "INSERT INTO devices (agent_id, path, device_class, model, simulated, facts)"
                       " VALUES (?, ?, ?, ?, ?, ?)",
                       agent.agent_id(), device.path(), device.device_class(), device.model(),
                       device.simulated(), Blob{*facts});
        !r.ok()) {
      return absl::Status(r.status().code(),
                          absl::StrCat("agent ", agent.agent_id(), " device '", device.path(),
                                       "': ", r.status().message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::AgentInfo>> SqlStore::ListAgents() {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<sql::Transaction> txn = sql::Transaction::Begin(*conn_, sql::Conn::Mode::kRead);
  if (!txn.ok()) return txn.status();

  std::vector<v1::AgentInfo> agents;
  std::unordered_map<std::string, size_t> index;
  const std::string bytes = conn_->dialect().byte_order;
  absl::StatusOr<Result> rows = conn_->Run(
      "list agents", absl::StrCat("SELECT agent_id, connected, last_seen_unix_ms, host FROM agents"
                                  " ORDER BY agent_id",
                                  bytes));
  if (!rows.ok()) return rows.status();
  for (int i = 0; i < rows->rows(); ++i) {
    v1::AgentInfo& agent = agents.emplace_back();
    agent.set_agent_id(rows->Text(i, 0));
    agent.set_connected(rows->Bool(i, 1));
    agent.set_last_seen_unix_ms(rows->Int(i, 2));
    if (absl::Status s = sql::ParseBlob(rows->Bytes(i, 3),
                                        absl::StrCat("host facts of agent ", agent.agent_id()),
                                        *agent.mutable_host());
        !s.ok()) {
      return s;
    }
    index[agent.agent_id()] = agents.size() - 1;
  }
  rows = conn_->Run("list devices", absl::StrCat("SELECT agent_id, path, facts FROM devices"
                                                 " ORDER BY agent_id",
                                                 bytes, ", path", bytes));
  if (!rows.ok()) return rows.status();
  for (int i = 0; i < rows->rows(); ++i) {
    auto it = index.find(rows->Text(i, 0));
    if (it == index.end()) continue;  // unreachable: foreign key
    v1::AgentInfo& agent = agents[it->second];
    if (absl::Status s = sql::ParseBlob(
            rows->Bytes(i, 2),
            absl::StrCat("device ", rows->Text(i, 1), " of agent ", agent.agent_id()),
            *agent.add_devices());
        !s.ok()) {
      return s;
    }
  }
  // Derived, not stored: the runs an agent holds are the runs assigned to it and live.
  rows = conn_->Run(
      "list running runs",
      "SELECT agent_id, id FROM runs WHERE state IN (?, ?) AND agent_id != '' ORDER BY id",
      sql::RunStateName(v1::RUN_ASSIGNED), sql::RunStateName(v1::RUN_RUNNING));
  if (!rows.ok()) return rows.status();
  for (int i = 0; i < rows->rows(); ++i) {
    auto it = index.find(rows->Text(i, 0));
    if (it != index.end()) agents[it->second].add_running_run_ids(rows->U64(i, 1));
  }
  return agents;
}

}  // namespace blkbench
