// SqliteStore: the agent registry (agents, their devices, and the runs they hold).
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "controller/store/sqlite_rows.h"
#include "controller/store/sqlite_store.h"

namespace blkbench {

using sqlite::BlobArg;
using sqlite::Statement;
using sqlite::Transaction;

absl::Status SqliteStore::UpsertAgent(const v1::AgentInfo& agent) {
  if (agent.agent_id().empty()) {
    return absl::InvalidArgumentError("UpsertAgent: agent_id is empty");
  }
  absl::StatusOr<std::string> host = sqlite::Serialize(agent.host(), "host facts");
  if (!host.ok()) return host.status();

  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kWrite);
  if (!txn.ok()) return txn.status();
  // ON CONFLICT DO UPDATE, not INSERT OR REPLACE: a replace deletes the row first.
  if (absl::Status s = db_->Execute(
          "upsert agent",
          "INSERT INTO agents (agent_id, hostname, kernel_release, connected, last_seen_unix_ms,"
          " host) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (agent_id) DO UPDATE SET"
          " hostname = excluded.hostname, kernel_release = excluded.kernel_release,"
          " connected = excluded.connected, last_seen_unix_ms = excluded.last_seen_unix_ms,"
          " host = excluded.host",
          agent.agent_id(), agent.host().hostname(), agent.host().kernel_release(),
          agent.connected(), agent.last_seen_unix_ms(), BlobArg{*host});
      !s.ok()) {
    return s;
  }
  // The agent's device list is replaced as a whole: a device it no longer reports is gone.
  if (absl::Status s = db_->Execute("delete devices", "DELETE FROM devices WHERE agent_id = ?",
                                    agent.agent_id());
      !s.ok()) {
    return s;
  }
  absl::StatusOr<Statement> insert =
      db_->Prepare("insert device",
                   "INSERT INTO devices (agent_id, path, device_class, model, simulated, facts)"
                   " VALUES (?, ?, ?, ?, ?, ?)");
  if (!insert.ok()) return insert.status();
  for (const v1::DeviceFacts& device : agent.devices()) {
    absl::StatusOr<std::string> facts = sqlite::Serialize(device, "device facts");
    if (!facts.ok()) return facts.status();
    insert->BindAll(agent.agent_id(), device.path(), device.device_class(), device.model(),
                    device.simulated(), BlobArg{*facts});
    if (absl::Status s = insert->Run(); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("agent ", agent.agent_id(), " device '",
                                                 device.path(), "': ", s.message()));
    }
    if (absl::Status s = insert->Reset(); !s.ok()) return s;
  }
  return txn->Commit();
}

absl::StatusOr<std::vector<v1::AgentInfo>> SqliteStore::ListAgents() {
  absl::MutexLock lock(&mu_);
  absl::StatusOr<Transaction> txn = Transaction::Begin(*db_, Transaction::Mode::kRead);
  if (!txn.ok()) return txn.status();

  std::vector<v1::AgentInfo> agents;
  std::unordered_map<std::string, size_t> index;
  {
    absl::StatusOr<Statement> select = db_->Prepare(
        "list agents",
        "SELECT agent_id, connected, last_seen_unix_ms, host FROM agents ORDER BY agent_id");
    if (!select.ok()) return select.status();
    while (true) {
      absl::StatusOr<bool> row = select->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      v1::AgentInfo& agent = agents.emplace_back();
      agent.set_agent_id(select->Text(0));
      agent.set_connected(select->Int(1) != 0);
      agent.set_last_seen_unix_ms(select->Int(2));
      if (absl::Status s = sqlite::ParseBlob(select->Blob(3),
                                             absl::StrCat("host facts of agent ", agent.agent_id()),
                                             *agent.mutable_host());
          !s.ok()) {
        return s;
      }
      index[agent.agent_id()] = agents.size() - 1;
    }
  }
  {
    absl::StatusOr<Statement> select = db_->Prepare(
        "list devices", "SELECT agent_id, path, facts FROM devices ORDER BY agent_id, path");
    if (!select.ok()) return select.status();
    while (true) {
      absl::StatusOr<bool> row = select->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      auto it = index.find(select->Text(0));
      if (it == index.end()) continue;  // unreachable: foreign key
      v1::AgentInfo& agent = agents[it->second];
      if (absl::Status s = sqlite::ParseBlob(
              select->Blob(2),
              absl::StrCat("device ", select->Text(1), " of agent ", agent.agent_id()),
              *agent.add_devices());
          !s.ok()) {
        return s;
      }
    }
  }
  {
    // Derived, not stored: the runs an agent holds are the runs assigned to it and live.
    absl::StatusOr<Statement> select = db_->Prepare(
        "list running runs",
        "SELECT agent_id, id FROM runs WHERE state IN (?, ?) AND agent_id != '' ORDER BY id");
    if (!select.ok()) return select.status();
    select->BindAll(sqlite::RunStateName(v1::RUN_ASSIGNED), sqlite::RunStateName(v1::RUN_RUNNING));
    while (true) {
      absl::StatusOr<bool> row = select->Step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      auto it = index.find(select->Text(0));
      if (it != index.end()) agents[it->second].add_running_run_ids(select->U64(1));
    }
  }
  return agents;
}

}  // namespace blkbench
