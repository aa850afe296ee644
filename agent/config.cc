// Agent configuration parsing; see config.h.
#include "agent/config.h"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "agent/cgroup/hierarchy.h"
#include "common/bounded_file.h"
#include "common/resolved_job.h"
#include "common/sim_vocabulary.h"
#include "common/yaml/yaml.h"

namespace blkbench {
namespace {

std::string Where(const std::string& file, const yaml::Node& n) {
  const yaml::Mark m = n.mark();
  return absl::StrCat(file, ":", m.line, ":", m.column);
}

// `prefix` followed by a number: IsNumbered("loop7", "loop"), not "loop-control".
bool IsNumbered(absl::string_view name, absl::string_view prefix) {
  if (!absl::ConsumePrefix(&name, prefix) || name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return absl::ascii_isdigit(c); });
}

}  // namespace

std::string KernelNameWarning(const std::string& path) {
  absl::string_view name = path;
  if (!absl::ConsumePrefix(&name, "/dev/") || name.empty() ||
      name.find('/') != absl::string_view::npos) {
    return "";
  }
  // nullbN can only be a null_blk device, which holds no data and has no by-id name.
  if (IsNumbered(name, "nullb")) return "";
  if (IsNumbered(name, "loop")) {
    return absl::StrCat(
        "'", path,
        "' is a kernel name: any file can be attached there. The agent records the loop "
        "device's backing file (path, device and inode), offset, size limit and size at "
        "registration and refuses a run when they change; a /dev/disk/by-id path, where "
        "there is one, is the stable name");
  }
  return absl::StrCat("'", path, "' is a kernel name, which the kernel may give to another disk ",
                      "after a reboot or hot-plug; allowlist its /dev/disk/by-id path instead ",
                      "(ls -l /dev/disk/by-id | grep -w ", name,
                      "). The agent also records the device's identity (WWID, serial, model, "
                      "size) at registration and refuses a run when it changes");
}

absl::StatusOr<AgentConfig> ParseAgentConfig(const std::string& text,
                                             const std::string& file_name) {
  AgentConfig cfg;
  std::vector<std::string> errors;
  // A config is small; the limits keep a broken or hostile one from costing more.
  absl::StatusOr<yaml::Node> parsed =
      yaml::ParseOrStatus(text, file_name, yaml::Limits{.max_bytes = 1 << 20});
  if (!parsed.ok()) return parsed.status();
  const yaml::Node root = *std::move(parsed);
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": expected a map with controller, agent_id, state_dir, devices"));
  }
  auto scalar = [&](const yaml::Node& n, const std::string& key, std::string* out) {
    if (!n.IsScalar() || n.Scalar().empty()) {
      errors.push_back(absl::StrCat(Where(file_name, n), ": '", key, "': expected a string"));
      return;
    }
    *out = n.Scalar();
  };
  auto boolean = [&](const yaml::Node& n, const std::string& key, bool* out) {
    const std::string word = n.IsScalar() ? n.Scalar() : "";
    if (word == "true" || word == "1") {
      *out = true;
    } else if (word == "false" || word == "0") {
      *out = false;
    } else {
      errors.push_back(absl::StrCat(Where(file_name, n), ": '", key, "': expected true or false"));
    }
  };
  for (const auto& [key_node, v] : root.entries()) {
    const std::string& key = key_node.Scalar();
    if (key == "controller") {
      scalar(v, key, &cfg.controller);
    } else if (key == "agent_id") {
      scalar(v, key, &cfg.agent_id);
    } else if (key == "state_dir") {
      scalar(v, key, &cfg.state_dir);
    } else if (key == "tls_dir") {
      scalar(v, key, &cfg.tls_dir);
    } else if (key == "insecure") {
      boolean(v, key, &cfg.insecure);
    } else if (key == "cgroup_parent") {
      scalar(v, key, &cfg.cgroup_parent);
      if (!IsValidCgroupParent(cfg.cgroup_parent)) {
        errors.push_back(absl::StrCat(Where(file_name, v),
                                      ": 'cgroup_parent': expected a relative cgroup path like "
                                      "blkbench or lab.slice/blkbench, got '",
                                      cfg.cgroup_parent, "'"));
      }
    } else if (key == "metrics_listen") {
      // "" (quoted) turns the exporter off, so the scalar may be empty here.
      if (!v.IsScalar()) {
        errors.push_back(absl::StrCat(Where(file_name, v),
                                      ": 'metrics_listen': expected host:port, e.g. 0.0.0.0:9471"));
        continue;
      }
      cfg.metrics_listen = v.Scalar();
      if (!cfg.metrics_listen.empty() && cfg.metrics_listen.find(':') == std::string::npos) {
        errors.push_back(absl::StrCat(Where(file_name, v),
                                      ": 'metrics_listen': expected host:port, got '",
                                      cfg.metrics_listen, "'"));
      }
    } else if (key == "metrics_grace_ms") {
      int64_t ms = -1;
      if (!v.IsScalar() || !absl::SimpleAtoi(v.Scalar(), &ms) || ms < 0) {
        errors.push_back(
            absl::StrCat(Where(file_name, v), ": 'metrics_grace_ms': expected milliseconds >= 0"));
        continue;
      }
      cfg.metrics_grace_ms = ms;
    } else if (key == "metrics_max_finished_runs") {
      uint64_t n = 0;
      if (!v.IsScalar() || !absl::SimpleAtoi(v.Scalar(), &n)) {
        errors.push_back(absl::StrCat(Where(file_name, v),
                                      ": 'metrics_max_finished_runs': expected a count >= 0"));
        continue;
      }
      cfg.metrics_max_finished_runs = n;
    } else if (key == "metrics_tls") {
      boolean(v, key, &cfg.metrics_tls);
    } else if (key == "metrics_client_certs") {
      boolean(v, key, &cfg.metrics_client_certs);
    } else if (key == "metrics_token_file") {
      scalar(v, key, &cfg.metrics_token_file);
    } else if (key == "metrics_insecure") {
      boolean(v, key, &cfg.metrics_insecure);
    } else if (key == "sim_devices") {
      if (!v.IsSequence()) {
        errors.push_back(absl::StrCat(
            Where(file_name, v), ": 'sim_devices': expected a list like [sim:null_blk, sim:hdd]"));
        continue;
      }
      cfg.sim_devices.clear();
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string name = v[i].IsScalar() ? v[i].Scalar() : "";
        if (FindSimDevice(name) == nullptr) {
          errors.push_back(absl::StrCat(Where(file_name, v[i]), ": sim_devices[", i,
                                        "]: expected a simulated device class (", SimDeviceList(),
                                        "), got '", name, "'"));
          continue;
        }
        cfg.sim_devices.push_back(name);
      }
    } else if (key == "null_blk") {
      cfg.null_blk.enabled = true;
      if (v.IsNull()) continue;  // `null_blk:` alone: the defaults
      if (!v.IsMap()) {
        errors.push_back(absl::StrCat(Where(file_name, v),
                                      ": 'null_blk': expected a map like {configfs: "
                                      "/sys/kernel/config, load_module: false}"));
        continue;
      }
      for (const auto& nkv : v.entries()) {
        const std::string& nk = nkv.first.Scalar();
        if (nk == "configfs" || nk == "dev") {
          std::string* out = nk == "configfs" ? &cfg.null_blk.configfs : &cfg.null_blk.dev;
          scalar(nkv.second, "null_blk." + nk, out);
          if (!out->empty() && (*out)[0] != '/') {
            errors.push_back(absl::StrCat(Where(file_name, nkv.second), ": 'null_blk.", nk,
                                          "' must be absolute, got '", *out, "'"));
          }
        } else if (nk == "load_module") {
          boolean(nkv.second, "null_blk.load_module", &cfg.null_blk.load_module);
        } else {
          errors.push_back(absl::StrCat(Where(file_name, nkv.first), ": null_blk: unknown key '",
                                        nk, "' (expected configfs, dev, load_module)"));
        }
      }
    } else if (key == "devices") {
      if (!v.IsSequence()) {
        errors.push_back(
            absl::StrCat(Where(file_name, v), ": 'devices': expected a list of {path, class}"));
        continue;
      }
      std::set<std::string> seen;
      for (size_t i = 0; i < v.size(); ++i) {
        const yaml::Node& d = v[i];
        const std::string where = absl::StrCat(Where(file_name, d), ": devices[", i, "]");
        if (!d.IsMap()) {
          errors.push_back(absl::StrCat(where, ": expected a map with 'path' and 'class'"));
          continue;
        }
        AllowedDevice dev;
        for (const auto& dkv : d.entries()) {
          const std::string& dk = dkv.first.Scalar();
          if (dk == "path") {
            scalar(dkv.second, "path", &dev.path);
          } else if (dk == "class") {
            scalar(dkv.second, "class", &dev.device_class);
          } else {
            errors.push_back(absl::StrCat(Where(file_name, dkv.first), ": devices[", i,
                                          "]: unknown key '", dk, "' (expected path, class)"));
          }
        }
        if (dev.path.empty()) errors.push_back(absl::StrCat(where, ": 'path' is required"));
        if (!dev.path.empty() && dev.path[0] != '/') {
          errors.push_back(absl::StrCat(where, ": 'path' must be absolute, got '", dev.path, "'"));
        }
        if (std::string warning = KernelNameWarning(dev.path); !warning.empty()) {
          cfg.warnings.push_back(absl::StrCat(where, ": ", warning));
        }
        if (!seen.insert(dev.path).second) {
          errors.push_back(absl::StrCat(where, ": '", dev.path, "' is listed twice"));
        }
        cfg.devices.push_back(dev);
      }
    } else {
      errors.push_back(absl::StrCat(
          Where(file_name, key_node), ": unknown key '", key,
          "' (expected controller, agent_id, tls_dir, insecure, state_dir, cgroup_parent, "
          "devices, sim_devices, null_blk, metrics_listen, metrics_grace_ms, "
          "metrics_max_finished_runs, metrics_tls, "
          "metrics_client_certs, metrics_token_file, metrics_insecure)"));
    }
  }
  if (!errors.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors, "\n"));
  if (cfg.agent_id.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    cfg.agent_id = host;
  }
  return cfg;
}

absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path) {
  absl::StatusOr<std::string> text = ReadBoundedRegularFile(path, 1 << 20, "agent config");
  if (!text.ok()) return text.status();
  return ParseAgentConfig(*text, path);
}

}  // namespace blkbench
