// PgStore: the agent registry (agents, their devices, and the runs they hold).
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "controller/store/pg_store.h"
#include "controller/store/sqlite_rows.h"

namespace blkbench {

using pg::Bytea;
using pg::Result;
using pg::Transaction;

absl::Status PgStore::UpsertAgent(const v1::AgentInfo& agent) {
  if (agent.agent_id().empty()) {
    return absl::InvalidArgumentError("UpsertAgent: agent_id is empty");
  }
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  if (absl::Status s = WriteAgent(agent); !s.ok()) return s;
  return txn->Commit();
}

absl::Status PgStore::WriteAgent(const v1::AgentInfo& agent) {
  absl::StatusOr<std::string> host = sqlite::Serialize(agent.host(), "host facts");
  if (!host.ok()) return host.status();
  if (absl::StatusOr<Result> r = conn_->Query(
          "upsert agent",
          "INSERT INTO agents (agent_id, hostname, kernel_release, connected, last_seen_unix_ms,"
          " host) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (agent_id) DO UPDATE SET"
          " hostname = excluded.hostname, kernel_release = excluded.kernel_release,"
          " connected = excluded.connected, last_seen_unix_ms = excluded.last_seen_unix_ms,"
          " host = excluded.host",
          agent.agent_id(), agent.host().hostname(), agent.host().kernel_release(),
          agent.connected(), agent.last_seen_unix_ms(), Bytea{*host});
      !r.ok()) {
    return r.status();
  }
  // The agent's device list is replaced as a whole: a device it no longer reports is gone.
  if (absl::StatusOr<Result> r = conn_->Query(
          "delete devices", "DELETE FROM devices WHERE agent_id = $1", agent.agent_id());
      !r.ok()) {
    return r.status();
  }
  for (const v1::DeviceFacts& device : agent.devices()) {
    absl::StatusOr<std::string> facts = sqlite::Serialize(device, "device facts");
    if (!facts.ok()) return facts.status();
    if (absl::StatusOr<Result> r = conn_->Query(
            "insert device",
            "INSERT INTO devices (agent_id, path, device_class, model, simulated, facts)"
            " VALUES ($1, $2, $3, $4, $5, $6)",
            agent.agent_id(), device.path(), device.device_class(), device.model(),
            device.simulated(), Bytea{*facts});
        !r.ok()) {
      return absl::Status(r.status().code(),
                          absl::StrCat("agent ", agent.agent_id(), " device '", device.path(),
                                       "': ", r.status().message()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<v1::AgentInfo>> PgStore::ListAgents() {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*conn_, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();

  std::vector<v1::AgentInfo> agents;
  std::unordered_map<std::string, size_t> index;
  absl::StatusOr<Result> rows =
      conn_->Query("list agents",
                   "SELECT agent_id, connected, last_seen_unix_ms, host FROM agents"
                   " ORDER BY agent_id COLLATE \"C\"");
  if (!rows.ok()) return rows.status();
  for (int i = 0; i < rows->rows(); ++i) {
    v1::AgentInfo& agent = agents.emplace_back();
    agent.set_agent_id(rows->Text(i, 0));
    agent.set_connected(rows->Bool(i, 1));
    agent.set_last_seen_unix_ms(rows->Int(i, 2));
    if (absl::Status s = sqlite::ParseBlob(rows->Bytes(i, 3),
                                           absl::StrCat("host facts of agent ", agent.agent_id()),
                                           *agent.mutable_host());
        !s.ok()) {
      return s;
    }
    index[agent.agent_id()] = agents.size() - 1;
  }
  // COLLATE "C": byte order, as SQLite sorts TEXT, whatever the database's locale.
  rows = conn_->Query("list devices",
                      "SELECT agent_id, path, facts FROM devices"
                      " ORDER BY agent_id COLLATE \"C\", path COLLATE \"C\"");
  if (!rows.ok()) return rows.status();
  for (int i = 0; i < rows->rows(); ++i) {
    auto it = index.find(rows->Text(i, 0));
    if (it == index.end()) continue;  // unreachable: foreign key
    v1::AgentInfo& agent = agents[it->second];
    if (absl::Status s = sqlite::ParseBlob(
            rows->Bytes(i, 2),
            absl::StrCat("device ", rows->Text(i, 1), " of agent ", agent.agent_id()),
            *agent.add_devices());
        !s.ok()) {
      return s;
    }
  }
  // Derived, not stored: the runs an agent holds are the runs assigned to it and live.
  rows = conn_->Query(
      "list running runs",
      "SELECT agent_id, id FROM runs WHERE state IN ($1, $2) AND agent_id != '' ORDER BY id",
      sqlite::RunStateName(v1::RUN_ASSIGNED), sqlite::RunStateName(v1::RUN_RUNNING));
  if (!rows.ok()) return rows.status();
  for (int i = 0; i < rows->rows(); ++i) {
    auto it = index.find(rows->Text(i, 0));
    if (it != index.end()) agents[it->second].add_running_run_ids(rows->U64(i, 1));
  }
  return agents;
}

}  // namespace blkbench
